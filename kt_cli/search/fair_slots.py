"""The in-flight slots of the studies one process drives side by side (kt_cli.search.studies), shared
out so that the studies move through their budgets together.

A plain semaphore serves its waiters first come, first served, and every study starts as many threads as
the process has slots: the study set up first took every slot, and a study whose threads queued last
waited for the others' whole rounds. On a 2x H100 host a matmul study's first trial started 6.6 s into a
9.9 s run and 7.3 s into a 13.6 s one (benchmarks/results/s29, `scale.py --trials 32`); that study then
met its first full timing, its verification and its search's start-up at the end of the run, alone.

Here a free slot goes to a study waiting for one that holds fewer than its part of the slots (the slots
over the studies being driven), the one of them that has started the smallest share of its budget; a
study may hold more than its part only while every study waiting holds its part already and none is still
being set up (a slot nobody else can use now is never left free)."""

from __future__ import annotations

import contextlib
import math
import threading


class FairSlots:
    """`count` slots shared by studies. A study `join`s as its driver starts (before it opens the study:
    it is owed its part from then on), says it is `driving` once its trials start, takes a slot per trial
    with `hold`, and `leave`s when it ends."""

    def __init__(self, count: int):
        self._count = max(1, count)
        self._changed = threading.Condition()
        self._limits: dict[str, int] = {}  # study -> its budget (candidates)
        self._setting_up: set[str] = set()  # joined, not driving yet
        self._started: dict[str, int] = {}  # study -> trials started with a slot of this process
        self._holding: dict[str, int] = {}  # study -> slots it holds now
        self._waiting: dict[str, int] = {}  # study -> its threads waiting for a slot now

    def join(self, study: str, limit: int) -> None:
        with self._changed:
            self._limits[study] = max(1, limit)
            self._setting_up.add(study)
            self._changed.notify_all()

    def driving(self, study: str) -> None:
        with self._changed:
            self._setting_up.discard(study)
            self._changed.notify_all()

    def leave(self, study: str) -> None:
        with self._changed:
            self._setting_up.discard(study)
            self._limits.pop(study, None)
            self._changed.notify_all()

    @contextlib.contextmanager
    def hold(self, study: str):
        with self._changed:
            self._waiting[study] = self._waiting.get(study, 0) + 1
            try:
                self._changed.wait_for(lambda: self._free() > 0 and self._may_take(study))
            finally:
                self._waiting[study] -= 1
            self._started[study] = self._started.get(study, 0) + 1
            self._holding[study] = self._holding.get(study, 0) + 1
            if self._free():  # another study's thread may now be the one to go
                self._changed.notify_all()
        try:
            yield
        finally:
            with self._changed:
                self._holding[study] -= 1
                self._changed.notify_all()

    def started(self, study: str) -> int:
        """Trials of `study` that have taken a slot so far."""
        with self._changed:
            return self._started.get(study, 0)

    def _free(self) -> int:
        return self._count - sum(self._holding.values())

    def _may_take(self, study: str) -> bool:
        """Whether `study` goes next: of the studies waiting under their part of the slots (if none, of
        every study waiting, unless one is still being set up: it is owed its part), the one that has
        started the smallest share of its budget."""
        part = math.ceil(self._count / max(1, len(self._limits)))
        waiting = [other for other, n in self._waiting.items() if n]
        under = [other for other in waiting if self._holding.get(other, 0) < part]
        pool = under or ([] if self._setting_up else waiting)
        return study in pool and all(self._share(other) >= self._share(study) for other in pool)

    def _share(self, study: str) -> float:
        return self._started.get(study, 0) / self._limits.get(study, 1)
