"""Pruning in measured mode (docs/costmodel.md): once `after` candidates of a problem are timed, one the
cost model estimates more than `ratio` times its estimate of the fastest of them is not sent to the
device (kind `pruned`). The one rule the evaluator applies and benchmarks/rank.py replays on stored runs."""

from __future__ import annotations


def pruned_at(estimate_s: float | None, fastest_estimate_s: float | None, timed: int, ratio: float,
              after: int) -> float | None:
    """The candidate's estimate over the fastest timed candidate's where the rule prunes it; None where
    it goes to the device (too few timed yet, no estimate, within `ratio`, or pruning off: `ratio` 0)."""
    if not ratio or timed < after or not fastest_estimate_s or not estimate_s:
        return None
    over = estimate_s / fastest_estimate_s
    return over if over > ratio else None
