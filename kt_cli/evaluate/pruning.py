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
              after: int, upper_bound: bool = False) -> float | None:
    """The candidate's estimate over the fastest timed candidate's where the rule prunes it; None where
    it goes to the device (too few timed yet, no estimate, within `ratio`, pruning off: `ratio` 0, or an
    estimate that is only an upper bound of the candidate's time: kt_cli.evaluate.estimate's
    `upper_bound`). Upper bounds: on the stored runs (benchmarks/rank.py --prune) the looped 4096-wide
    softmax that measured fastest at 3072 x 20480 (H200, held out) was estimated 1.9x the model's
    favourite, its issue term counting every static instruction once a pass through its row, and the
    rule lost it in 62% of the orders replayed with 8 candidates waiting (the best kept 1.19x slower); the
    looped 8192-wide softmax that measured fastest at 3584 x 24064 (H200, held out again) was estimated 2.8x
    by its L2 term, whose loads the same count holds out of flight, and lost in 97% (1.06x kept)."""
    over = over_fastest(estimate_s, fastest_estimate_s)
    if not ratio or timed < after or not over or upper_bound:
        return None
    return over if over > ratio else None
