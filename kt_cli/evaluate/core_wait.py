"""How long a worker process and the processes it started (a compiler, a disassembler) have waited for a
core, from Linux's per-thread scheduler statistics (/proc/PID/task/TID/schedstat: the nanoseconds the
thread was runnable but not running). A compile pool's deadline leaves that time out: kt's compile
workers run niced, so on a host busy with other work a compile of an ordinary kernel can take ten times
its idle wall time without doing more work (on a 2-core machine with three busy processes beside kt:
10-25 s against 1-2 s), and a wall-clock deadline then ended ordinary candidates as `slow_compile`,
each killed worker's replacement slower still."""

from __future__ import annotations

import os


class CoreWait:
    """Seconds the threads of process `pid` and of its descendants spent waiting for a core since this
    object was made. Each thread's figure is kept as last read, so a compiler that has exited still
    counts for what was seen of it (at most one poll's worth is missed). 0.0 where /proc does not tell
    (not Linux, no schedstat)."""

    def __init__(self, pid: int):
        self.pid = pid
        self._start = _waits(pid)
        self._seen = dict(self._start)

    def seconds(self) -> float:
        self._seen.update(_waits(self.pid))
        return sum(ns - self._start.get(task, 0) for task, ns in self._seen.items()) / 1e9


def _waits(pid: int) -> dict[tuple[int, int], int]:
    """{(pid, tid): nanoseconds waiting for a core} of `pid`'s threads and its descendants' (gone ones
    are skipped)."""
    out: dict[tuple[int, int], int] = {}
    pending, visited = [pid], set()
    while pending:
        process = pending.pop()
        if process in visited:
            continue
        visited.add(process)
        try:
            threads = os.listdir(f"/proc/{process}/task")
        except OSError:
            continue
        for tid in threads:
            base = f"/proc/{process}/task/{tid}"
            try:
                with open(f"{base}/schedstat") as f:
                    out[(process, int(tid))] = int(f.read().split()[1])
                with open(f"{base}/children") as f:
                    pending.extend(int(child) for child in f.read().split())
            except (OSError, ValueError, IndexError):
                continue
    return out
