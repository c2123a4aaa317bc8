"""The keeper of a resident fork server: `python -m kt_cli.resident.keeper --dir D --key K --idle S`, started
by `kt serve` in a session of its own.

It holds a lock for its key while it lives (a second keeper of that key exits at once), starts Python's
multiprocessing fork server with torch imported on a socket of its own, and lends that socket to kt
processes: a client connects to the keeper's socket, says `lease`, reads one JSON line (the fork server's
address) and keeps the connection open while it runs; the workers it forks hold a copy of it too
(multiprocessing passes it to them), so a lease ends when the client and all its workers are gone. With
no lease for `--idle` seconds, on `stop` once the last lease ends, on SIGTERM, or when the fork server
dies, the keeper closes the fork server's "alive" pipe (the server exits), removes both sockets and
exits. `status` answers one JSON line. `spare <wish>` asks for a readied device worker or judge
(kt_cli.resident.stock; `--spares` of them at most, 0: none)."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time

from kt_cli.resident.identity import PRELOADED, PROTOCOL, paths
from kt_cli.resident.lease import read_line

READY_TIMEOUT_S = 300.0  # importing torch on a cold, busy machine
REQUEST_TIMEOUT_S = 2.0  # a client names its request at once
POLL_S = 1.0  # how often the fork server's life and the idle time are checked


def _say(line: str) -> None:
    """One line to `kt serve`, which waits for it on the keeper's stdout."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _start_fork_server(address: str) -> tuple[subprocess.Popen, int]:
    """Python's fork server, preloading PRELOADED, listening on `address`, writing to the keeper's log (its
    stderr). Returns it and the write end of its alive pipe (closing it ends the server)."""
    from multiprocessing import util

    listener = socket.socket(socket.AF_UNIX)
    listener.bind(address)
    os.chmod(address, 0o600)
    listener.listen()
    alive_r, alive_w = os.pipe()
    command = "from multiprocessing.forkserver import main; main(%d, %d, %r, **%r)" % (
        listener.fileno(), alive_r, list(PRELOADED), {"sys_path": sys.path})
    try:
        server = subprocess.Popen([sys.executable, *util._args_from_interpreter_flags(), "-c", command],
                                  pass_fds=(listener.fileno(), alive_r), stdin=subprocess.DEVNULL,
                                  stdout=sys.stderr, stderr=sys.stderr)
    finally:
        os.close(alive_r)
        listener.close()
    return server, alive_w


def _first_child(address: str) -> float:
    """Fork one child through the server and wait for its end: the server has imported what it preloads
    once it answers. Returns the seconds it took. The keeper's children (this one, the spares) get no copy
    of the server's alive pipe: the server ends when the keeper closes it, whatever they do."""
    import multiprocessing

    from kt_cli.resident.lease import attach

    started = time.monotonic()
    attach(address, os.open(os.devnull, os.O_RDONLY))
    child = multiprocessing.get_context("forkserver").Process(target=os.getpid, daemon=True)
    child.start()
    child.join(READY_TIMEOUT_S)
    if child.exitcode != 0:
        raise RuntimeError(f"the fork server's first child ended with {child.exitcode}")
    return time.monotonic() - started


class Keeper:
    def __init__(self, files: dict, idle: float, server: subprocess.Popen, alive_w: int, ready_s: float,
                 spares: int):
        from kt_cli.resident.stock import Stock

        self.files, self.idle, self.server, self.alive_w = files, idle, server, alive_w
        self.started, self.ready_s = time.time(), ready_s
        self.leases: set = set()
        self.last_active = time.monotonic()
        self.stopping = False
        self.selector = selectors.DefaultSelector()
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(files["keeper"])
        os.chmod(files["keeper"], 0o600)
        self.listener.listen()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.stock = Stock(spares, self.selector)

    def describe(self) -> dict:
        return {"protocol": PROTOCOL, "fork": self.files["fork"], "keeper": os.getpid(), "server": self.server.pid,
                "started": self.started, "ready_s": round(self.ready_s, 3), "idle": self.idle,
                "leases": len(self.leases), "stopping": self.stopping,
                "idle_for": 0.0 if self.leases else round(time.monotonic() - self.last_active, 1),
                **self.stock.describe()}

    def serve(self) -> None:
        while not self._done():
            for event, _ in self.selector.select(POLL_S):
                if event.fileobj is self.listener:
                    self._accept()
                elif isinstance(event.data, str):
                    self.stock.heard(event.data)
                else:
                    self._lease_readable(event.fileobj)
            if not self.leases and not self.stopping:
                self.stock.refill()

    def _done(self) -> bool:
        if self.server.poll() is not None:
            return True
        if self.leases:
            return False
        return self.stopping or (self.idle > 0 and time.monotonic() - self.last_active >= self.idle)

    def _accept(self) -> None:
        conn, _ = self.listener.accept()
        conn.settimeout(REQUEST_TIMEOUT_S)
        try:
            request = read_line(conn)
            if request.startswith("spare ") and not self.stopping:
                self.stock.answer(conn, json.loads(request[len("spare "):]))
            elif request == "lease" and not self.stopping:
                conn.sendall((json.dumps(self.describe()) + "\n").encode())
                conn.setblocking(False)
                self.leases.add(conn)
                self.selector.register(conn, selectors.EVENT_READ)
                return
            if request == "stop":
                self.stopping = True
            if request in ("status", "stop"):
                conn.sendall((json.dumps(self.describe()) + "\n").encode())
        except (OSError, ValueError):
            pass
        conn.close()

    def _lease_readable(self, conn) -> None:
        try:
            still_open = bool(conn.recv(64))
        except BlockingIOError:
            still_open = True
        except OSError:
            still_open = False
        if not still_open:
            self.selector.unregister(conn)
            self.leases.discard(conn)
            conn.close()
            self.last_active = time.monotonic()

    def end_now(self) -> None:
        """SIGTERM: end without waiting for the leases (their workers end with the fork server)."""
        self.stopping = True
        self.leases.clear()

    def close(self) -> None:
        """No new client (the keeper's socket goes first), then the fork server ends."""
        _remove(self.files["keeper"])
        self.listener.close()
        self.stock.close()
        os.close(self.alive_w)
        try:
            self.server.wait(10)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        _remove(self.files["fork"])


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def run(folder: str, key: str, idle: float, spares: int) -> int:
    files = paths(folder, key)
    lock = os.open(files["lock"], os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        _say("running")  # another keeper of this key holds it
        return 0
    for stale in (files["keeper"], files["fork"]):  # a killed keeper's: nobody listens on them
        _remove(stale)
    server, alive_w = _start_fork_server(files["fork"])
    try:
        ready_s = _first_child(files["fork"])
        keeper = Keeper(files, idle, server, alive_w, ready_s, spares)
    except BaseException as exc:
        os.close(alive_w)
        server.kill()
        _remove(files["fork"])
        _say(f"error: {exc}")
        return 1
    signal.signal(signal.SIGTERM, lambda *_: keeper.end_now())
    _say("ready " + json.dumps(keeper.describe()))
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(quiet, fd)  # `kt serve` has read its line and gone
    try:
        keeper.serve()
    finally:
        keeper.close()
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--idle", type=float, required=True)
    parser.add_argument("--spares", type=int, default=0)
    args = parser.parse_args()
    sys.exit(run(args.dir, args.key, args.idle, args.spares))


if __name__ == "__main__":
    main()
