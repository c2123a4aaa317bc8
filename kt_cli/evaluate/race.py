"""Racing's state in one process: per problem, the best fully timed interval, the bound a candidate is
raced against. A candidate that takes the device once a bound exists is screened (a cheap first
timing) and raced out if its first samples lie surely above it; before that, a problem's candidates
are verified and timed fully. A fast but wrong candidate never races another out: only a verified,
fully timed interval is a bound (results other processes sharing the study timed included:
Evaluator.observe)."""

from __future__ import annotations

import threading


class Race:
    """One process's race, shared by its candidates' threads (see the module docstring)."""

    def __init__(self):
        self.fastest: dict = {}  # problem key -> upper end of the best fully timed interval so far
        self._lock = threading.Lock()

    def bound(self, key, margin: float | None) -> float | None:
        """What a candidate of problem `key` races against: the best fully timed interval's upper end
        plus `margin`; None while there is none (or `margin` is None: no racing)."""
        if margin is None or key not in self.fastest:
            return None
        return self.fastest[key] * (1 + margin)

    def timed(self, key, ci_high: float) -> bool:
        """A candidate of `key` was timed fully up to `ci_high`: whether it is the new best."""
        with self._lock:
            if ci_high >= self.fastest.get(key, float("inf")):
                return False
            self.fastest[key] = ci_high
            return True
