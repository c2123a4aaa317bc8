"""A kt process's side of the resident fork server: at its first worker's start (kt_cli.evaluate.pool) it
asks the keeper of its own key for a lease, once; with one, Python's fork server of this process is the
resident one (multiprocessing's own client then forks every worker there), else the process starts its
own as before. Nothing here waits long: a missing, stale or busy keeper costs a failed connect."""

from __future__ import annotations

import json
import os
import socket
import threading

from kt_cli.resident.identity import PROTOCOL, disabled, key, paths, private_directory

CONNECT_TIMEOUT_S = 2.0

_lock = threading.Lock()
_state: dict = {"asked": False, "info": None, "socket": None, "allowed": False}


def allow() -> None:
    """Let this process fork its workers from a resident server: kt's command line and its `--workers`
    processes call it. An application that only loads an artifact (kt_cli.load, whose first call may time a
    shortlist in workers) does not: multiprocessing's fork server is the application's to use as it likes."""
    _state["allowed"] = True


def attach(address: str, alive_fd: int) -> None:
    """Make this process's multiprocessing fork server the one listening at `address`. `alive_fd` is what
    multiprocessing hands every child as the server's "alive" descriptor (the lease's socket: the keeper
    counts the lease open while any worker holds it)."""
    from multiprocessing import forkserver, resource_tracker

    server = forkserver._forkserver
    with server._lock:
        server._forkserver_address = address
        server._forkserver_alive_fd = alive_fd
        server._forkserver_pid = None
        server.ensure_running = resource_tracker.ensure_running  # started by the keeper, not by us


def _own_fork_server_started() -> bool:
    from multiprocessing import forkserver

    return forkserver._forkserver._forkserver_address is not None


LINE_BYTES_MAX = 1 << 20  # a spare's wish (kt_cli.resident.adoption) carries a worker's whole environment


def read_line(conn: socket.socket) -> str:
    """One line from the other side of a keeper's socket (a request, or the keeper's answer)."""
    data = b""
    while not data.endswith(b"\n") and len(data) < LINE_BYTES_MAX:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").strip()


def connect(timeout: float = CONNECT_TIMEOUT_S) -> socket.socket | None:
    """A connection to the keeper of this process's key, or None where none listens."""
    folder = private_directory(make=False)
    if folder is None:
        return None
    address = paths(folder, key())["keeper"]
    if not os.path.exists(address):
        return None
    conn = socket.socket(socket.AF_UNIX)
    conn.settimeout(timeout)
    try:
        conn.connect(address)
    except OSError:
        conn.close()
        return None
    return conn


def ask(request: str, timeout: float = CONNECT_TIMEOUT_S) -> tuple[socket.socket, dict] | None:
    """Send `request` (lease, status, stop) to the keeper of this process's key: its open connection and
    its JSON answer, or None where there is no keeper (or it does not answer as one)."""
    conn = connect(timeout)
    if conn is None:
        return None
    try:
        conn.sendall(request.encode() + b"\n")
        answer = json.loads(read_line(conn))
        if not isinstance(answer, dict) or answer.get("protocol") != PROTOCOL \
                or not isinstance(answer.get("fork"), str):
            raise ValueError(answer)
    except (OSError, ValueError):
        conn.close()
        return None
    return conn, answer


def borrow() -> dict | None:
    """The resident server's description once this process forks its workers there; None where it starts
    its own (not allowed, no compatible server, KT_RESIDENT=0, or its own already started). Asked once a
    process."""
    with _lock:
        if _state["asked"] or not _state["allowed"]:
            return _state["info"]
        _state["asked"] = True
        if disabled() or _own_fork_server_started():
            return None
        answered = ask("lease")
        if answered is None:
            return None
        conn, info = answered
        conn.settimeout(None)
        attach(info["fork"], conn.fileno())
        _state.update(info=info, socket=conn)
        return info


def give_back() -> bool:
    """After a worker could not be forked there (the keeper ended meanwhile): forget the server, so that
    the next start launches this process's own. True when there was one to give back."""
    from multiprocessing import forkserver

    with _lock:
        conn = _state["socket"]
        if conn is None:
            return False
        server = forkserver._forkserver
        with server._lock:
            vars(server).pop("ensure_running", None)
            server._forkserver_address = None
            server._forkserver_alive_fd = None
        conn.close()
        _state.update(info=None, socket=None)
        return True
