"""SQLite's write lock under kt-like writers, without kt: PROCS processes x THREADS threads write one SQLite file
(WAL) through SQLAlchemy, each transaction an insert and an update with a little Python between them (the lock
held about 2 ms), then Python work and a sleep; two more threads a process hold the GIL on and off, as a study-
driving process's other threads do. Prints the writes' rate, their wall (from before BEGIN to after COMMIT) and how
long the lock was held (from the first write's return to the commit's).

    python benchmarks/experiments/sqlite_writers.py MODE PROCS THREADS [HOST_MS]

MODE: `default` (kt's: a 60 s busy timeout, SQLite's own busy handler, a deferred BEGIN), `poll` (busy timeout 0,
BEGIN IMMEDIATE, retried every 0.2-1 ms), `retry` (a 2 ms busy timeout, then the whole transaction again after
0.5-2 ms) or `queue` (the whole transaction inside a queue in the kernel: a process's threads on a lock, then the
processes on a flock of one file beside the database).

Thirty-seventh session (docs/performance.md), on the 2-core CPU machine: `default` 1x20: mean 35 ms, p99 0.63 s;
2x20: mean 101 ms, p99 1.3 s, the lock held 2.1-2.4 ms a write; `poll` worse (154 and 204 writes/s against 274 and
288, means 91 and 157 ms: the lock held over the whole transaction); `retry` 2x20 worse too (136 writes/s, mean 256
ms, against 226 and 139 ms for `default` in the same minute, a test suite running beside both).
Thirty-eighth session: `queue` on this machine 2x20 214 and 224 writes/s against 267 and 270 (means 149 and 141 ms
against 112 and 110, p99 358 and 219 ms against 1344 and 1339); 2x4 173 and 176 against 182 twice (means 9.3 and 8.5
ms against 7.5 and 7.2). On a 2x H200 host's 32 cores (results/s48/queue, sqlite_writers.txt) 2x20 285 and 302
writes/s against 310 and 314, means 103 and 95 ms against 91 and 90, p99 143 and 133 ms against 1234 and 1332: the
queue serves every writer in turn, which cuts the tail and costs the mean and the rate.
"""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time

SECONDS = 12
RETRY_TIMEOUT_S = 0.002  # `retry`: SQLite's own busy wait, then the whole transaction again after 0.5-2 ms


def _spin(ms: float) -> None:
    """Python work that holds the GIL for `ms` milliseconds."""
    began = time.perf_counter()
    while time.perf_counter() - began < ms / 1000:
        pass


def _engine(path: str, mode: str):
    import sqlalchemy
    from sqlalchemy import event

    timeout = {"poll": 0, "retry": RETRY_TIMEOUT_S}.get(mode, 60)
    engine = sqlalchemy.create_engine(f"sqlite:///{path}", pool_size=5, max_overflow=10, connect_args={
        "timeout": timeout, "check_same_thread": False})
    if mode == "poll":
        @event.listens_for(engine, "connect")
        def _no_implicit_begin(dbapi_connection, record):
            dbapi_connection.isolation_level = None

        @event.listens_for(engine, "begin")
        def _begin_immediate(connection):
            while True:
                try:
                    connection.exec_driver_sql("BEGIN IMMEDIATE")
                    return
                except sqlalchemy.exc.OperationalError as exc:
                    if "locked" not in str(exc):
                        raise
                    time.sleep(random.uniform(0.0002, 0.001))
    return engine


class _Queue:
    """`queue`: the host's writers queue on a file lock beside the database (the kernel wakes the next at once),
    a process's threads on a lock of their own first (a process's threads share its one open file)."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path + ".writers", os.O_RDWR | os.O_CREAT, 0o644)
        self.threads = threading.Lock()

    def __enter__(self):
        self.threads.acquire()
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        self.threads.release()


def _writer(path: str, mode: str, threads: int, host_ms: float, out) -> None:
    import contextlib

    sys.setswitchinterval(0.001)  # as kt's processes (kt_cli.hand_offs)
    engine = _engine(path, mode)
    queue = _Queue(path) if mode == "queue" else contextlib.nullcontext()
    walls, holds, stop = [], [], time.monotonic() + SECONDS

    def transaction() -> float:
        with queue, engine.begin() as connection:
            connection.exec_driver_sql("INSERT INTO t (v, w) VALUES (?, ?)", (random.random(), "x" * 200))
            held = time.perf_counter()
            _spin(0.3)
            connection.exec_driver_sql("UPDATE t SET w = ? WHERE id = (SELECT max(id) FROM t)", ("y" * 100,))
        return held

    def write() -> None:
        import sqlalchemy

        while time.monotonic() < stop:
            began = time.perf_counter()
            while True:
                try:
                    held = transaction()
                    break
                except sqlalchemy.exc.OperationalError as exc:
                    if mode != "retry" or "locked" not in str(exc):
                        raise
                    time.sleep(random.uniform(0.0005, 0.002))
            ended = time.perf_counter()
            walls.append(ended - began)
            holds.append(ended - held)
            _spin(host_ms * random.random())
            time.sleep(random.uniform(0.01, 0.06))

    def hog() -> None:
        while time.monotonic() < stop:
            _spin(2)
            time.sleep(0.002)

    for target, count in ((hog, 2), (write, threads)):
        started = [threading.Thread(target=target, daemon=True) for _ in range(count)]
        for thread in started:
            thread.start()
    for thread in started:
        thread.join()
    out.put((walls, holds))


def main() -> None:
    mode, procs, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    host_ms = float(sys.argv[4]) if len(sys.argv) > 4 else 2.0
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "writers.db")
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v REAL, w TEXT)")
        out = multiprocessing.Queue()
        workers = [multiprocessing.Process(target=_writer, args=(path, mode, threads, host_ms, out))
                   for _ in range(procs)]
        for worker in workers:
            worker.start()
        results = [out.get() for _ in workers]
        for worker in workers:
            worker.join()
    walls = sorted(w for r in results for w in r[0])
    holds = sorted(h for r in results for h in r[1])

    def ms(values: list, q: float) -> float:
        return 1000 * values[int(q * (len(values) - 1))]

    print(f"{mode} {procs}x{threads}: {len(walls) / SECONDS:.0f} writes/s, a write mean "
          f"{1000 * statistics.fmean(walls):.1f} ms, median {ms(walls, 0.5):.1f}, p90 {ms(walls, 0.9):.1f}, "
          f"p99 {ms(walls, 0.99):.1f}, max {ms(walls, 1):.0f}; the lock held {1000 * statistics.fmean(holds):.2f} ms "
          f"mean, p99 {ms(holds, 0.99):.1f}")


if __name__ == "__main__":
    main()
