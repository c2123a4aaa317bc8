"""The in-flight slots of the studies one process drives side by side (kt_cli.search.studies), handed
to the study furthest behind in its budget.

A plain semaphore wakes its waiters first come, first served. Every study starts as many threads as
the process has slots, so a study whose threads queued last waited until the others had each run a
whole round: on a 2x H100 host a matmul study's first trial started 6.6 s into a 9.9 s run and 7.3 s
into a 13.6 s one (benchmarks/results/s29, `scale.py --trials 32`), and it then found its first full
timing, its verification and its search's start-up at the end of the run, alone. Here a freed slot goes
to the waiting study that has started the smallest share of its budget, so the studies move through
their budgets together and end together."""

from __future__ import annotations

import contextlib
import threading


class FairSlots:
    """`count` slots shared by studies; `hold(study, limit)` takes one for a trial of `study`, whose
    budget is `limit` candidates, and gives it back when the trial ends."""

    def __init__(self, count: int):
        self._free = max(1, count)
        self._changed = threading.Condition()
        self._started: dict[str, int] = {}  # study -> trials started with a slot of this process
        self._limits: dict[str, int] = {}
        self._waiting: dict[str, int] = {}  # study -> its threads waiting for a slot now

    @contextlib.contextmanager
    def hold(self, study: str, limit: int):
        with self._changed:
            self._limits[study] = max(1, limit)
            self._waiting[study] = self._waiting.get(study, 0) + 1
            try:
                self._changed.wait_for(lambda: self._free > 0 and self._furthest_behind(study))
            finally:
                self._waiting[study] -= 1
            self._free -= 1
            self._started[study] = self._started.get(study, 0) + 1
            if self._free:  # another study's thread may now be the one furthest behind
                self._changed.notify_all()
        try:
            yield
        finally:
            with self._changed:
                self._free += 1
                self._changed.notify_all()

    def started(self, study: str) -> int:
        """Trials of `study` that have taken a slot so far."""
        with self._changed:
            return self._started.get(study, 0)

    def _furthest_behind(self, study: str) -> bool:
        """Whether no other study with a thread waiting has started a smaller share of its budget."""
        mine = self._share(study)
        return all(self._share(other) >= mine for other, waiting in self._waiting.items() if waiting)

    def _share(self, study: str) -> float:
        return self._started.get(study, 0) / self._limits[study]
