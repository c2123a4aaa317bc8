"""Runs candidates in a child process with a watchdog. The parent survives segfaults, hangs and
compiler aborts in the child: the call raises WorkerFailure with the failure kind, and the next call
starts a fresh child."""

from __future__ import annotations

import multiprocessing
import os
import signal
import traceback
from typing import Any

from kt_cli.evaluate.failure import WorkerFailure

STARTUP_TIMEOUT = 300.0  # importing torch and triton on a cold, busy machine


def _serve(conn, env: dict) -> None:
    os.environ.update(env)
    import sys

    sys.stdout = sys.stderr  # a kernel's prints must not mix with the parent's progress output
    try:
        from kt_cli.evaluate import requests as execute

        execute.prepare_worker()
    except BaseException as exc:  # pragma: no cover - reported to the parent as a crash
        conn.send(("error", ("crash", f"worker could not start: {exc!r}")))
        return
    conn.send(("ready", None))
    while True:
        try:
            op, payload = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        try:
            conn.send(("ok", execute.dispatch(op, payload)))
        except WorkerFailure as exc:
            conn.send(("error", (exc.kind, exc.message)))
        except BaseException as exc:
            last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
            where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
            conn.send(("error", ("crash", f"{type(exc).__name__}: {exc}{where}")))


class Worker:
    """One child process. `env` is applied before the child imports anything (TRITON_INTERPRET,
    CUDA_VISIBLE_DEVICES...)."""

    def __init__(self, env: dict | None = None):
        self.env = dict(env or {})
        self._proc = None
        self._conn = None

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, self.env), daemon=True)
        self._proc.start()
        child.close()
        status, value = self._receive(STARTUP_TIMEOUT, "starting")
        if status == "error":
            self.stop()
            raise WorkerFailure(*value)

    def _receive(self, timeout: float, doing: str):
        if not self._conn.poll(timeout):
            self.stop()
            raise WorkerFailure("timeout", f"no answer after {timeout:g} s while {doing}; worker killed")
        try:
            return self._conn.recv()
        except (EOFError, ConnectionResetError, OSError):
            self._proc.join(5)
            code = self._proc.exitcode
            self.stop()
            how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
            raise WorkerFailure("crash", f"worker died while {doing} ({how})") from None

    def call(self, op: str, payload: Any, timeout: float) -> Any:
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self._conn.send((op, payload))
        status, value = self._receive(timeout, op)
        if status == "error":
            raise WorkerFailure(*value)
        return value

    def stop(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join(10)
        self._proc = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class WorkerPool:
    """`size` interchangeable workers for threads that call at once; counts the seconds spent busy."""

    def __init__(self, size: int, env: dict | None = None):
        import queue
        import threading

        self.workers = [Worker(env) for _ in range(max(1, size))]
        self._idle: "queue.Queue[Worker]" = queue.Queue()
        for w in self.workers:
            self._idle.put(w)
        self._lock = threading.Lock()
        self.busy_seconds = 0.0

    def call(self, op: str, payload: Any, timeout: float, restart_on: tuple = ()) -> Any:
        """Call `op` on an idle worker; after a failure whose kind is in `restart_on`, restart that worker."""
        import time

        worker = self._idle.get()
        started = time.perf_counter()
        try:
            return worker.call(op, payload, timeout)
        except WorkerFailure as exc:
            if exc.kind in restart_on:
                worker.stop()
            raise
        finally:
            with self._lock:
                self.busy_seconds += time.perf_counter() - started
            self._idle.put(worker)

    def stop(self) -> None:
        for w in self.workers:
            w.stop()
