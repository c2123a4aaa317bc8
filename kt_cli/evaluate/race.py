"""Racing's state in one process: per problem, the best fully timed interval, the bound a candidate is
raced against. A candidate that takes the device once a bound exists is screened (a cheap first
timing) and raced out if its first samples lie surely above it; before that, a problem's candidates
are verified and timed fully. A fast but wrong candidate never races another out: only a verified,
fully timed interval is a bound (results other processes sharing the study timed included:
Evaluator.observe).

Candidates are ranked by their time relative to the baseline op timed beside them, pair by pair: a
GPU's clock moves by several percent between candidates timed a few seconds apart (power and heat),
and moves a candidate and its baseline alike. A problem's times are that ratio times its *reference*,
the baseline's median in the first full timing this process learns of, so that they stay seconds
(docs/timing.md, "Ranking by the ratio to the baseline")."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass


# A problem ranks by the ratio unless its first ratio's interval was wider than this (±): a ratio that
# noisy cannot tell candidates apart at the race's margin (an H100's GEMMs: ±0.04-5.9% at their first 20
# pairs, results/s26; the fake CPU device, a 20 µs torch op beside interpreter-run kernels of
# milliseconds: ±40-90%)
RATIO_TOO_NOISY = 0.2


def _half_width(stats: dict) -> float:
    """The relative half-width of a Stats dict's interval (inf without a positive median)."""
    median = stats.get("median") or 0.0
    return (stats["ci_high"] - stats["ci_low"]) / 2 / median if median > 0 else math.inf


def ranked_seconds(stats: dict) -> float:
    """The time a timing's stats (Race.ranked's) are ranked by: its ranked seconds, else its own median."""
    return stats.get("ranked", {}).get("seconds", stats["median"])


@dataclass(frozen=True)
class Bound:
    """What a candidate is timed against and by: `seconds` for a screen's samples of the candidate alone
    (None: no best yet, no race), `ratio` for its ratio to the baseline (None where the problem does not
    rank by it), and what ends a full timing (`ranking`: "ratio" or "own", whichever the problem ranks
    by, or "either" while that is not decided)."""

    seconds: float | None = None
    ratio: float | None = None
    ranking: str = "either"


class Race:
    """One process's race, shared by its candidates' threads (see the module docstring)."""

    def __init__(self):
        self.fastest: dict = {}  # problem key -> upper end of the best fully timed interval so far (seconds)
        self.references: dict = {}  # problem key -> the baseline's median that turns ratios into seconds
        self._lock = threading.Lock()

    def bound(self, key, margin: float | None) -> Bound:
        """What a candidate of problem `key` races against: the best fully timed interval's upper end
        plus `margin` (no race while there is none, or `margin` is None), and how it is timed."""
        reference = self.references.get(key)
        ranking = "either" if key not in self.references else "ratio" if reference else "own"
        if margin is None or key not in self.fastest:
            return Bound(ranking=ranking)
        seconds = self.fastest[key] * (1 + margin)
        return Bound(seconds, seconds / reference if reference else None, ranking)

    def interval(self, key, stats: dict) -> tuple[float, float, float]:
        """(median, low, high) of a fully timed candidate's time, in seconds: its ratio to its baseline
        times the problem's reference where the problem ranks by the ratio, else its own samples'. The
        first candidate with both decides (`references[key]`: its baseline's median, or None): a
        problem ranks by its candidates' own medians where that candidate's ratio was too noisy to rank
        by (RATIO_TOO_NOISY: a baseline much shorter than the kernels); results stored before kt kept
        the ratio have only their own."""
        ratio, baseline = stats.get("ratio") or {}, stats.get("baseline") or {}
        high = stats["ci_high"]
        own = stats.get("median", high), stats.get("ci_low", high), high
        if not (ratio and baseline and all(math.isfinite(ratio.get(k, math.inf)) for k in ("median", "ci_low", "ci_high"))):
            return own
        with self._lock:
            if key not in self.references:
                self.references[key] = baseline["median"] if _half_width(ratio) <= RATIO_TOO_NOISY else None
            reference = self.references[key]
        if reference is None:
            return own
        return ratio["median"] * reference, ratio["ci_low"] * reference, ratio["ci_high"] * reference

    def ranked(self, key, out: dict) -> dict:
        """A timing's stats as kt keeps them (`out`: requests.time_held's): its own, with its `baseline`
        and, for a full timing that was not raced out, its `ratio` and, where problem `key` ranks by
        the ratio, `ranked`: the seconds, interval and reference that are its value (ranked_seconds).
        Measured tuning and `kt finalize` both keep their timings this way."""
        base, ratio = out.get("baseline"), out.get("ratio")
        stats = {**out["stats"], **({"baseline": base} if base else {})}
        if not (base and ratio) or stats.get("raced_out"):
            return stats
        stats["ratio"] = ratio
        seconds, low, high = self.interval(key, stats)
        reference = self.references.get(key)
        if reference is None:
            return stats
        return {**stats, "ranked": {"seconds": seconds, "ci_low": low, "ci_high": high, "reference_s": reference,
                                    "precise": ratio["precise"]}}

    def timed(self, key, ci_high: float) -> bool:
        """A candidate of `key` was timed fully up to `ci_high`: whether it is the new best."""
        with self._lock:
            if ci_high >= self.fastest.get(key, float("inf")):
                return False
            self.fastest[key] = ci_high
            return True
