"""Pruning in measured mode (docs/costmodel.md): once `after` candidates of a problem are timed, one the
cost model estimates more than `ratio` times its estimate of the fastest of them is not sent to the
device (kind `pruned`). The one rule the evaluator applies and benchmarks/rank.py replays on stored runs."""

from __future__ import annotations


def over_fastest(estimate_s: float | None, fastest_estimate_s: float | None) -> float:
    """The candidate's estimate over the fastest timed candidate's: how promising it is against its
    problem's best so far (lower: more), the order in which waiting candidates take the device
    (kt_cli.evaluate.device_turns). 0 where either is unknown: a problem's first candidates go first."""
    if not estimate_s or not fastest_estimate_s:
        return 0.0
    return estimate_s / fastest_estimate_s


def pruned_at(estimate_s: float | None, fastest_estimate_s: float | None, timed: int, ratio: float,
              after: int) -> float | None:
    """The candidate's estimate over the fastest timed candidate's where the rule prunes it; None where
    it goes to the device (too few timed yet, no estimate, within `ratio`, or pruning off: `ratio` 0)."""
    over = over_fastest(estimate_s, fastest_estimate_s)
    if not ratio or timed < after or not over:
        return None
    return over if over > ratio else None
