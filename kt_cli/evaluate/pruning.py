"""Pruning in measured mode (docs/costmodel.md): a candidate the cost model says cannot come near its
problem's fastest so far is not sent to the device (kind `pruned`). The one rule the evaluator applies
and benchmarks/rank.py replays on stored runs.

The rule learns how far to trust the model from the problem's own measurements. Every candidate the
device measures (raced out at its screen or timed fully) shows how far the model over-estimated it:
its estimate over its measured time. A waiting candidate's estimate divided by the largest such factor
seen is the fastest it can plausibly be, and it is pruned where even that is more than MARGIN times the
fastest measured time. Where the model ranks a problem well (its over-estimates alike) the bound is
tight; where it errs (a kernel it was not developed on, a binary it reads wrong), a measured candidate
it over-estimated widens the bound for every later one. Until LEARN_AFTER candidates have shown it, the
margin is EARLY_MARGIN: a maximum over a few is a loose guide to the next.

Replayed on every stored and held-out H100/H200 run (benchmarks/rank.py --prune, 100 random orders a
problem, 8 compiled candidates waiting), against the fixed ratio of estimates it replaced (1.5x the
estimate of the fastest): matmul and attention 41.5% of device evaluations saved against 31.7%, the best
lost by more than 1% in 0.08% of orders (worst kept 1.04x) against 0.5% (1.02x); the memory-bound and
step kernels 26.5% against 24.4%, none lost. On a later held-out run the two were level, and in real tunes
the fixed ratio pruned twice as many attention candidates by trusting a fastest config the model
under-estimates, the final best config among them (docs/costmodel.md, thirty-third session)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

PRUNE_AFTER = 3  # candidates of a problem the device measured before any is pruned
LEARN_AFTER = 5  # of them with a usable estimate (not an upper bound) before the margin tightens
EARLY_MARGIN = 1.5
MARGIN = 1.2


def over_fastest(estimate_s: float | None, fastest_estimate_s: float | None) -> float:
    """The candidate's estimate over the fastest timed candidate's: how promising it is against its
    problem's best so far (lower: more), the order in which waiting candidates take the device
    (kt_cli.evaluate.device_turns). 0 where either is unknown: a problem's first candidates go first."""
    if not estimate_s or not fastest_estimate_s:
        return 0.0
    return estimate_s / fastest_estimate_s


@dataclass
class Evidence:
    """What one problem's measured candidates say, for pruning its next ones (thread-safe: a process's
    candidates learn from their threads, and from other processes' results: Evaluator.observe)."""

    measured: int = 0  # candidates the device measured (raced out or timed fully)
    learned: int = 0  # of them, those whose estimate is not an upper bound
    overestimate: float = 0.0  # the largest estimate / measured time among the learned
    fastest_estimate: float | None = None  # the model's estimate of the fastest fully timed candidate
    fastest_seconds: float | None = None  # its measured time
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, estimate: dict, seconds: float, fastest: bool) -> None:
        """A candidate the device measured in `seconds` (`estimate`: the cost model's, as estimate_seconds
        returns it); `fastest`: it was timed fully and is the problem's new best."""
        est = estimate.get("seconds")
        factor = est / seconds if est and seconds > 0 else None
        with self._lock:
            self.measured += 1
            if factor is None:
                return
            if not estimate.get("upper_bound"):
                self.learned += 1
            if fastest:
                self.fastest_estimate, self.fastest_seconds = est, seconds
            # the reference's own factor bounds the largest from below, upper bound or not: the rule then never
            # prunes what the plain ratio of estimates (the candidate's over the fastest's) would keep at the
            # same margin
            if fastest or not estimate.get("upper_bound"):
                self.overestimate = max(self.overestimate, factor)

    def pruned_at(self, estimate: dict, margin: float = MARGIN, early_margin: float = EARLY_MARGIN) -> float | None:
        """The fastest the candidate can plausibly be over the fastest measured time, where the rule prunes
        it; None where it goes to the device: too few measured yet, no estimate, within the margin, pruning
        off (`margin` 0), or an estimate that is only an upper bound of the candidate's time
        (kt_cli.evaluate.estimate's `upper_bound`: on the held-out H200 runs the looped 4096-wide softmax
        that measured fastest at 3072 x 20480 was estimated 1.9x the model's favourite, its issue term
        counting every static instruction once a pass through its row, and the fixed ratio lost it in 62%
        of the replayed orders)."""
        est = estimate.get("seconds")
        with self._lock:
            if (not margin or self.measured < PRUNE_AFTER or not est or estimate.get("upper_bound")
                    or not self.learned or not self.fastest_seconds):
                return None
            floor = est / self.overestimate / self.fastest_seconds
            bound = self._margin(margin, early_margin)
        return floor if floor > bound else None

    def margin(self, margin: float = MARGIN, early_margin: float = EARLY_MARGIN) -> float:
        """The margin in force: `early_margin` until LEARN_AFTER candidates have shown the model's error."""
        with self._lock:
            return self._margin(margin, early_margin)

    def _margin(self, margin: float, early_margin: float) -> float:
        return early_margin if self.learned < LEARN_AFTER else margin
