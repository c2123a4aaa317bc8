"""A kt process's side of `kt serve`'s spares (kt_cli.resident.spare): at the start of a device's worker or
judge, ask the keeper for the spare of that role, target and device setup; take it over when one is ready
(its connection and the fork server's report of its end come with it); else the keeper remembers the wish
and readies one once no kt process runs, for the next command."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pickle
import signal
import socket
import sys

from kt_cli.resident.lease import connect

HANDOVER_TIMEOUT_S = 30.0  # a spare checks its files and enters its scratch directory: milliseconds
ANSWER_BYTES = 4096
# A spare serves only a process whose environment is the one it readied with (a device's runtime, torch,
# Triton and kt's plugins read theirs when it readies), but for what a shell changes between two commands
# and what is read per request (the profiling switches).
NOT_SETUP = frozenset({"PWD", "OLDPWD", "_", "SHLVL", "COLUMNS", "LINES", "KT_PROFILE_DIR", "KT_PROFILE_REQUESTS"})


def wish(role: str, target, env: dict) -> dict:
    """What the keeper is asked for, and what it readies a spare with: the role, the target, the worker's
    environment and this process's sys.path and kt, under a key of everything a readied spare depends on."""
    import kt_cli

    path = [os.path.abspath(p) for p in sys.path]
    kt = os.path.abspath(kt_cli.__file__)
    setup = {k: v for k, v in env.items() if k not in NOT_SETUP}
    described = json.dumps([role, target.name, target.vendor, setup, path, kt], sort_keys=True)
    return {"key": hashlib.sha256(described.encode()).hexdigest()[:16], "role": role,
            "target": base64.b64encode(pickle.dumps(target)).decode(), "env": dict(env), "path": path, "kt": kt}


class AdoptedProcess:
    """A spare taken over: the fork server's child, not this process's, so its end is what the fork server
    writes on the status pipe handed over with it (as for multiprocessing's own forked workers)."""

    def __init__(self, pid: int, status_fd: int):
        self.pid, self._status, self.exitcode = pid, status_fd, None

    def _poll(self, timeout: float | None) -> None:
        from multiprocessing.connection import wait
        from multiprocessing.forkserver import read_signed

        if self._status is None or not wait([self._status], timeout):
            return
        try:
            self.exitcode = read_signed(self._status)
        except (OSError, EOFError):  # the fork server itself was killed
            self.exitcode = 255
        os.close(self._status)
        self._status = None

    def is_alive(self) -> bool:
        self._poll(0)
        return self.exitcode is None

    def join(self, timeout: float | None = None) -> None:
        self._poll(timeout)

    def kill(self) -> None:
        if self.is_alive():
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass


def _ask(asked: dict) -> tuple[int, list] | None:
    """The keeper's spare for `asked`: (its pid, [its connection's fd, its status fd]), or None."""
    conn = connect()
    if conn is None:
        return None
    try:
        conn.sendall(b"spare " + json.dumps(asked).encode() + b"\n")
        data, fds, _, _ = socket.recv_fds(conn, ANSWER_BYTES, 2)
    except OSError:
        return None
    finally:
        conn.close()
    try:
        pid = json.loads(data.decode()).get("pid")
    except ValueError:
        pid = None
    if not isinstance(pid, int) or len(fds) != 2:
        for fd in fds:
            os.close(fd)
        return None
    return pid, fds


def adopt(role: str, target, start: tuple):
    """Take over the spare for `role` on `target` as a worker started as `start` says (env, scratch
    directory, output file, this process's pid: kt_cli.evaluate.pool.enter_worker): (its AdoptedProcess,
    its Connection), or None where there is none or it is stale (it then ends)."""
    from multiprocessing.connection import Connection

    asked = _ask(wish(role, target, start[0]))
    if asked is None:
        return None
    pid, (conn_fd, status_fd) = asked
    process, conn = AdoptedProcess(pid, status_fd), Connection(conn_fd)
    try:
        conn.send(start)
        said = conn.recv() if conn.poll(HANDOVER_TIMEOUT_S) else ("lost", "no answer")
    except (OSError, EOFError):
        said = ("lost", "it ended")
    if said[0] == "ready":
        return process, conn
    process.kill()
    process.join(5)
    conn.close()
    return None
