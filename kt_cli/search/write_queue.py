"""The write transactions of every kt process on a host that share a SQLite database, one at a time, queued
in the kernel: a process's threads on a lock of its own, then the processes on an exclusive flock(2) of one
lock file per database. The kernel wakes the next writer the moment the lock is released.

Without it they queue in SQLite's busy handler, which sleeps 1, 2, 5, 10 ... 100 ms between tries and misses
the free moments: with two `kt tune --workers` processes on a 2x H200 host a write transaction held the lock
2.7 ms on average, 40% of the run, yet waited 80-88 ms before its first write, the lock free for 38-40 ms of
that wait (docs/performance.md, thirty-eighth session). Inside the queue no other kt writer commits between
a transaction's read and its write, so a write-ahead-log snapshot does not go stale there either
(owned_storages.again_when_locked runs such a transaction again).

SQLite's own lock still decides: the queue only orders kt's writers. A writer outside it (another user's
process, whose cache holds another lock file; the sqlite3 shell) waits in SQLite's busy handler as before.
A process that dies releases the queue with its file. One stopped (SIGSTOP, a debugger) inside a write
holds the host's other writers until it continues, as it holds SQLite's lock; SQLite's busy timeout, not
the queue, ends a wait on a writer outside the queue."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading

from kt_cli import user_cache

_QUEUES: dict[tuple[int, int], "WriteQueue"] = {}
_MAKING = threading.Lock()


class WriteQueue:
    """One database's queue in this process (reentrant within a thread: a write may call another)."""

    def __init__(self, lock_path: str) -> None:
        self.lock_path = lock_path
        self._open()

    def _open(self) -> None:
        """This process's own lock file description and thread lock (a forked child's are the parent's:
        flock(2) would count the child as the parent, and a thread lock held at the fork stays held)."""
        self._pid = os.getpid()
        self._threads = threading.Lock()
        self._depth = threading.local()
        self._fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def __enter__(self) -> "WriteQueue":
        if os.getpid() != self._pid:
            self._open()
        depth = getattr(self._depth, "n", 0)
        if depth == 0:
            self._threads.acquire()
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except BaseException:
                self._threads.release()
                raise
        self._depth.n = depth + 1
        return self

    def __exit__(self, *exc) -> None:
        self._depth.n -= 1
        if self._depth.n == 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            self._threads.release()


def for_database(path: str | None):
    """The write queue of the SQLite database file at `path`, shared by this process's storages of it; a
    context that queues nothing where there is no file (an in-memory database) or no place for the lock
    file (the user cache not writable). The lock file is named after the database file's device and inode
    (kt's user cache, write-queues/), so every path to one file finds one queue."""
    if not path or path == ":memory:" or path.startswith("file:"):
        return contextlib.nullcontext()
    try:
        found = os.stat(path)
        key = (found.st_dev, found.st_ino)
        with _MAKING:
            if key not in _QUEUES:
                folder = user_cache.directory() / "write-queues"
                folder.mkdir(parents=True, exist_ok=True)
                _QUEUES[key] = WriteQueue(str(folder / f"{key[0]:x}-{key[1]:x}.lock"))
            return _QUEUES[key]
    except OSError:
        return contextlib.nullcontext()
