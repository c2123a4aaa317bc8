"""What makes a resident fork server usable by a kt process, and where its files are.

A worker forked from the server inherits the modules the server imported (torch), and nothing else: it
gets the client's sys.path, working directory and environment when it starts (multiprocessing's
preparation data, kt_cli.evaluate.pool._serve). So a server serves exactly the clients whose interpreter,
preloaded modules and dynamic-linker settings are its own; the key of those names its files, and a
client looks only for the server of its own key. kt's own code is imported by each worker after the fork:
a changed kt never meets a stale server."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import stat
import sys
import tempfile

# Imported once, in the fork server. Not triton: its own library functions are decorated when it is
# imported, as interpreted functions only where TRITON_INTERPRET is set then, which is each worker's call.
PRELOADED = ("torch",)

PROTOCOL = 1  # what a keeper and its clients say to each other (kt_cli/resident/keeper.py): a keeper of
# another kt version answers with its own, and a client that does not know it goes without
OFF_ENV = "KT_RESIDENT"  # "0" or "off": never use a resident server (a process forks its workers itself)
DIR_ENV = "KT_RESIDENT_DIR"
SOCKET_PATH_CHARS = 100  # a Unix socket's path ends at 107 bytes


def disabled() -> bool:
    return os.environ.get(OFF_ENV, "").strip().lower() in ("0", "off", "no", "false")


def _module_file(name: str) -> list:
    """Where `name` would be imported from, and that file's modification time (an upgrade changes
    it), without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return [name, None, None]
    origin = getattr(spec, "origin", None) if spec else None
    try:
        return [name, origin, os.stat(origin).st_mtime_ns] if origin else [name, None, None]
    except OSError:
        return [name, origin, None]


def key() -> str:
    described = {
        "python": os.path.realpath(sys.executable),
        "version": sys.version,
        "modules": [_module_file(name) for name in PRELOADED],
        "linker": {name: os.environ.get(name, "") for name in ("LD_LIBRARY_PATH", "LD_PRELOAD")},
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:16]


def directory() -> str:
    """$KT_RESIDENT_DIR, else $XDG_RUNTIME_DIR/kt, else TMPDIR/kt-UID (or /tmp/kt-UID where TMPDIR's path is
    too long for a socket)."""
    if os.environ.get(DIR_ENV):
        return os.environ[DIR_ENV]
    if os.environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(os.environ["XDG_RUNTIME_DIR"], "kt")
    root = tempfile.gettempdir()
    if len(root) > SOCKET_PATH_CHARS - 40:
        root = "/tmp"
    return os.path.join(root, f"kt-{os.getuid()}")


def private_directory(make: bool) -> str | None:
    """The directory, made (mode 0700) when `make`; None where it is missing, too long for a socket, or
    not this user's alone (another user could then put a server of theirs in front of kt's workers)."""
    path = directory()
    if make:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError:
            return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    mine = info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return path if mine and len(path) + 30 <= SOCKET_PATH_CHARS else None


def paths(folder: str, server_key: str) -> dict:
    """The keeper's socket (leases and commands), the fork server's socket, the lock the keeper holds
    while it lives, and its log."""
    stem = os.path.join(folder, server_key)
    return {"keeper": stem + ".keep", "fork": stem + ".fork", "lock": stem + ".lock", "log": stem + ".log"}
