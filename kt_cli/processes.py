"""Which processes are alive. An owner record names a process (machine, pid, start time) so that
another kt process on the same machine can tell whether it still runs: the trials of a study, the
scratch directories of workers and the temporary folders of artifact writes carry one. A child kt
starts ends with its parent."""

from __future__ import annotations

import hashlib
import os
import platform
from pathlib import Path


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def _machine() -> str:
    """This host, boot and pid namespace: two containers on one host see different pids."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    return ":".join(filter(None, (platform.node(), _read("/proc/sys/kernel/random/boot_id"), namespace)))


MACHINE = _machine()
MACHINE_TAG = hashlib.sha256(MACHINE.encode()).hexdigest()[:8]  # for file names


def _state(pid: int) -> tuple[str, int | None]:
    """(state letter, start time in clock ticks since boot) of a process, from /proc; ("", None) elsewhere."""
    stat = _read(f"/proc/{pid}/stat")
    if ")" not in stat:
        return "", None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0], int(fields[19])


def this_process() -> dict:
    return {"machine": MACHINE, "pid": os.getpid(), "started": _state(os.getpid())[1]}


def process_alive(owner: dict) -> bool:
    """Whether the process of `owner` (a this_process() record made on this machine, or just a pid)
    still runs: a pid taken over by a later process, or a zombie, is dead."""
    try:
        pid = int(owner["pid"])
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, KeyError, TypeError, ValueError, OverflowError):
        return True
    state, started = _state(pid)
    if state == "Z":
        return False
    return owner.get("started") is None or started is None or started == owner["started"]


def owner_alive(owner) -> bool | None:
    """True or False for an owner on this machine; None when it runs elsewhere (or is unknown)."""
    if not isinstance(owner, dict) or owner.get("machine") != MACHINE:
        return None
    return process_alive(owner)


def end_with_parent(parent_pid: int) -> None:
    """Exit this process (at once, without cleanup) soon after `parent_pid`, the kt process that
    started it, is gone, or after the process it was forked from (kt, or kt's fork server, which ends
    with kt) is: a killed kt leaves no worker behind. Starts a daemon thread."""
    import threading

    forked_from = os.getppid()

    def watch() -> None:
        pause = threading.Event()  # waits without the time module, which the launch watch turns into tripwires
        while os.getppid() == forked_from and process_alive({"pid": parent_pid}):
            pause.wait(1.0)
        os._exit(1)  # nobody will read what this process does

    threading.Thread(target=watch, daemon=True, name="kt-parent-watch").start()
