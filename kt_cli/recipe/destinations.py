"""Where a run will write — the artifact directory and the study storage — checked before any work:
the right kind of thing, writable, and a storage URL kt can open. Nothing is created by a check."""

from __future__ import annotations

import difflib
import json
import os
import re
import tempfile
from pathlib import Path

from kt_cli.errors import BadInput
from kt_cli.recipe.limits import no_control_characters, shown

SCHEMES = ("sqlite", "postgresql", "mysql")
SQLITE_HEADER = b"SQLite format 3\x00"
STORAGE_FORMS = ("sqlite:///PATH.db, postgresql://USER:PASSWORD@HOST/DB, mysql://USER:PASSWORD@HOST/DB or "
                 "a journal file path")


def check_directory(path: Path, where: str) -> Path:
    """`path` is a directory kt can write in, or one it can create: its nearest existing ancestor is a
    directory kt can write in (tried by creating and removing a temporary folder there)."""
    no_control_characters(str(path), where, "the path")
    try:
        existing = next(p for p in (path, *path.parents) if p.exists() or p.is_symlink())
        if existing == path and not path.is_dir():
            raise BadInput(f"{where}: {path} is {_kind(path)}, not a directory; give a directory "
                           "for the artifact (it is created if missing)")
        if not existing.is_dir():
            raise BadInput(f"{where}: {path} would be under {existing}, which is "
                           f"{_kind(existing)}, not a directory; give a directory path")
        os.rmdir(tempfile.mkdtemp(prefix=".kt-write-test-", dir=existing))
    except OSError as exc:
        raise BadInput(f"{where}: cannot write under {path} ({exc.strerror or exc}); give a "
                       "directory you can write in") from None
    return path


def _kind(path: Path) -> str:
    if path.is_symlink() and not path.exists():
        return "a dangling symbolic link"
    if path.is_file():
        return "a regular file"
    if path.is_dir():
        return "a directory"
    return "a device, pipe or socket" if path.exists() else "missing"


def check_storage(url: str, where: str = "--storage") -> str:
    """An Optuna storage kt can open: an RDB URL of a known scheme (an SQLite file that is a database
    or new), or a journal file that is one or new."""
    no_control_characters(url, where, "the URL")
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", url)
    if "://" not in url and not (scheme and scheme.group(1).split("+")[0].lower() in SCHEMES):
        return _check_file(Path(url), where, _is_journal, "an Optuna journal file")
    name = scheme.group(1) if scheme else url.split("://")[0]
    base = name.split("+")[0]
    if base not in SCHEMES:
        near = difflib.get_close_matches(base.lower(), SCHEMES, n=1, cutoff=0.5)
        hint = f" (did you mean {near[0]}://?)" if near else ""
        raise BadInput(f"{where}: unknown scheme {shown(name)} in {shown(redacted(url))}{hint}; give "
                       f"{STORAGE_FORMS}")
    sqlite_file = re.match(r"sqlite(\+\w+)?:///([^?]*)", url)
    if sqlite_file:
        path = sqlite_file.group(2)
        if path not in ("", ":memory:"):
            _check_file(Path(path), where, lambda head: head.startswith(SQLITE_HEADER), "an SQLite database")
    return url


def _check_file(path: Path, where: str, looks_right, what: str) -> str:
    """A storage file: new (its directory writable, or creatable), empty, or `what` by its first bytes."""
    try:
        if not path.exists():
            check_directory(path.parent if str(path.parent) else Path("."), where)
            return str(path)
        if not path.is_file():
            raise BadInput(f"{where}: {path} is {_kind(path)}, not {what}; give a new file name")
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as exc:
        raise BadInput(f"{where}: cannot read {path} ({exc.strerror or exc}); check the path") from None
    if head and not looks_right(head):
        raise BadInput(f"{where}: {path} exists and is not {what} (it starts with "
                       f"{shown(head[:16])}); give a new file name or a study kt wrote")
    return str(path)


def _is_journal(head: bytes) -> bool:
    first = head.split(b"\n", 1)[0]
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and "op_code" in record


def redacted(url: str) -> str:
    """`url` without the password between `:` and `@`."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)
