"""Whose turn the device is: the waiting candidate the cost model finds most promising goes first.

A measured tune compiles ahead of the device, so several compiled candidates often wait for it (14 compile
workers feed one GPU). Served in arrival order, the device times them in the order the sampler happened to
propose them. Served best first, the candidate with the lowest estimate relative to its problem's fastest
so far is timed first: the best is found sooner, the racing bound tightens sooner (cheaper screens for the
rest), and the pruning rule (kt_cli.evaluate.pruning) meets the others with a better reference. Replayed on
the stored measurements with 8 candidates waiting (benchmarks/rank.py --prune; docs/costmodel.md), pruning
at 1.5x saves more on every set (held out: s28 34 -> 39% of the device evaluations, s34d 38 -> 45%), loses
no best, and the best is timed after 37-47% of the timed candidates instead of 50-60%. In real tunes on an
H200 the queue was short and the difference within the runs' spread (BENCHMARKS.md, twenty-fifth session).

A waiter's priority is read when the device is handed on, not when it started to wait: the problem's
fastest estimate moves meanwhile. Lower goes first; equal priorities keep arrival order."""

from __future__ import annotations

import contextlib
import itertools
import threading
from typing import Callable

FIRST = float("-inf")  # a holder taking the device back (it gave it up between two of its steps), readying
LAST = float("inf")  # work no candidate should wait for: a finished study's winner paired with its reference


class DeviceTurns:
    """A lock over one device that hands it on to the waiter with the lowest priority.

    Each waiter waits on an event of its own, and a hand-on wakes only the waiter chosen. With one condition
    that every waiter waited on, each hand-on woke them all: each took the GIL in turn to find it was not
    chosen, and the chosen one could be the last. On a 2x H200 host the device then sat idle 10-25 ms between
    two requests, a quarter to a third of its cycle (docs/performance.md, thirty-sixth session)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._held = False
        self._waiting: dict[int, tuple[Callable[[], float], threading.Event]] = {}  # arrival number -> ...
        self._next: int | None = None  # the waiter chosen at the last hand-on, until it takes the device
        self._arrivals = itertools.count()

    def take(self, priority: Callable[[], float] = lambda: 0.0) -> None:
        chosen = threading.Event()
        with self._lock:
            me = next(self._arrivals)
            self._waiting[me] = (priority, chosen)
            if not self._held and self._next is None:
                self._hand_on()
        try:
            chosen.wait()
        except BaseException:  # interrupted while waiting: the turn goes to the next one
            with self._lock:
                del self._waiting[me]
                if self._next == me:
                    self._hand_on()
            raise
        with self._lock:
            del self._waiting[me]
            self._next, self._held = None, True

    def release(self) -> None:
        with self._lock:
            self._held = False
            self._hand_on()

    def _hand_on(self) -> None:
        """Choose the next waiter, if any, and wake it alone (the lock held)."""
        self._next = self._choose()
        if self._next is not None:
            self._waiting[self._next][1].set()

    def locked(self) -> bool:
        return self._held

    def _choose(self) -> int | None:
        if not self._waiting:
            return None
        return min(self._waiting, key=lambda n: (_read(self._waiting[n][0]), n))

    def __enter__(self) -> "DeviceTurns":
        self.take(lambda: FIRST)
        return self

    @contextlib.contextmanager
    def last(self):
        """Hold the device once no candidate waits for it (`with turns.last(): ...`); candidates that come
        while this waits go first."""
        self.take(lambda: LAST)
        try:
            yield self
        finally:
            self.release()

    def __exit__(self, *exc) -> None:
        self.release()


def _read(priority: Callable[[], float]) -> float:
    """A priority that cannot be read (a problem's figures half-written) waits behind the others."""
    try:
        return float(priority())
    except Exception:  # noqa: BLE001 - a waiter's bad priority must not stall the device for everyone
        return float("inf")
