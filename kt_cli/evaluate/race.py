"""Racing's state in one process: per problem, the best fully timed interval (the bound a candidate
is raced against) and the screens of candidates on their way to verification (provisional leaders).

Every candidate is screened (a cheap first timing) before it is verified. Before any candidate of a
problem is fully timed there is no bound, and a run's first candidates are many (one a compile worker,
all compiled at once at the start): each would otherwise be verified and timed fully, its verification
shapes compiled first. Instead a candidate whose screen lies surely above a faster screen still on its
way to verification waits for that one's verdict, with the device free: the leader's full timing
becomes the bound and races it out, or the leader fails and the next one leads. A fast but wrong
candidate never races another out: only a verified, fully timed interval is a bound."""

from __future__ import annotations

import threading
import time

POLL_S = 0.5  # a waiting screen looks again this often even unwoken (a leader in another thread ends)


class Race:
    """One process's race, shared by its candidates' threads (see the module docstring)."""

    def __init__(self):
        self.fastest: dict = {}  # problem key -> upper end of the best fully timed interval so far
        self._screens: dict = {}  # problem key -> {token: upper end of its screen's interval}, verifying
        self._changed = threading.Condition()

    def bound(self, key, margin: float | None) -> float | None:
        """What a candidate of problem `key` races against: the best fully timed interval's upper end
        plus `margin`; None while there is none (or `margin` is None: no racing)."""
        if margin is None or key not in self.fastest:
            return None
        return self.fastest[key] * (1 + margin)

    def timed(self, key, ci_high: float) -> bool:
        """A candidate of `key` was timed fully up to `ci_high`: whether it is the new best."""
        with self._changed:
            if ci_high >= self.fastest.get(key, float("inf")):
                return False
            self.fastest[key] = ci_high
            self._changed.notify_all()
            return True

    def settle(self, key, token, ci_low: float, ci_high: float, margin: float, patience: float) -> float | None:
        """A candidate screened at [ci_low, ci_high] and not raced out: wait while another candidate of
        `key` screened surely faster (its upper end plus `margin` below this lower end) is still on its
        way to verification, at most `patience` seconds. Returns the bound it races against then (None:
        none yet); its screen is a leader for those behind it until leave()."""
        waited_until = time.monotonic() + patience
        with self._changed:
            screens = self._screens.setdefault(key, {})
            screens[token] = ci_high
            while True:
                bound = self.bound(key, margin)
                if bound is not None and ci_low > bound:
                    return bound
                ahead = [t for t, high in screens.items() if t is not token and high * (1 + margin) < ci_low]
                left = waited_until - time.monotonic()
                if not ahead or left <= 0:
                    return bound
                self._changed.wait(min(POLL_S, left))

    def leave(self, key, token) -> None:
        """The candidate of `token` ended (timed, raced out or failed): it leads no one any more."""
        with self._changed:
            if self._screens.get(key, {}).pop(token, None) is not None:
                self._changed.notify_all()
