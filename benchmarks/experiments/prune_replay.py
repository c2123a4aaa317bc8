"""Replay the evaluator's pruning rule (kt_cli/evaluate/pruning.py) on the trials of real measured tunes:
which candidates the device measured would the rule have kept off it, counting as measured either only
the fully timed candidates (the evaluator until 2026-11-27) or every candidate the device measured,
raced out at its screen or timed fully (since: benchmarks/rank.py validated the rule that way), and
how far each newly pruned one was from its problem's final best. No GPU: it reads trials.jsonl files.

    python benchmarks/experiments/prune_replay.py RUN.trials.jsonl [...] [--margin 1.2]

The trials are replayed in their file's order (the order the tune recorded them). A candidate pruned
by the run itself stays pruned; one the replay prunes leaves the search path the run took unchanged,
so the counts are a lower bound on what a run under the rule would skip.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kt_cli.evaluate.pruning import MARGIN, Evidence  # noqa: E402


def replay(trials: list[dict], margin: float, count_raced_out: bool) -> dict:
    """Candidates the device measured that the rule would have pruned, with their time over the
    problem's final best (the best fully timed candidate of the whole run)."""
    final: dict = {}
    for t in trials:
        if t["failure_kind"] == "ok" and not t["stats"].get("raced_out"):
            key = json.dumps(t["shape"], sort_keys=True)
            final[key] = min(final.get(key, float("inf")), t["value"])
    state: dict = {}
    newly, measured = [], 0
    for t in trials:
        if t["failure_kind"] != "ok" or t.get("mode") != "measured":
            continue
        measured += 1
        key = json.dumps(t["shape"], sort_keys=True)
        seen = state.setdefault(key, {"best": None, "evidence": Evidence()})
        estimate = t["stats"].get("estimate", {})
        raced_out = bool(t["stats"].get("raced_out"))
        if seen["evidence"].pruned_at(estimate, margin) is not None:
            newly.append({"shape": t["shape"], "over_final_best": t["value"] / final[key], "raced_out": raced_out})
            continue
        fastest = not raced_out and (seen["best"] is None or t["value"] < seen["best"])
        if fastest:
            seen["best"] = t["value"]
        if count_raced_out or not raced_out:
            seen["evidence"].add(estimate, t["value"], fastest)
    pruned = sum(1 for t in trials if t["failure_kind"] == "pruned")
    return {"measured": measured, "pruned_by_the_run": pruned, "pruned_by_the_replay": len(newly),
            "closest_to_final_best": min((n["over_final_best"] for n in newly), default=None), "newly": newly}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trials", nargs="+")
    parser.add_argument("--margin", type=float, default=MARGIN)
    args = parser.parse_args()
    for path in args.trials:
        trials = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        for count_raced_out in (False, True):
            r = replay(trials, args.margin, count_raced_out)
            device = r["measured"] + r["pruned_by_the_run"]
            share = (r["pruned_by_the_run"] + r["pruned_by_the_replay"]) / device if device else 0.0
            closest = r["closest_to_final_best"]
            print(f"{path}: counting {'every measured' if count_raced_out else 'fully timed only'}: "
                  f"{r['pruned_by_the_replay']} more pruned of {r['measured']} measured "
                  f"({share:.0%} of {device} device-bound candidates pruned in all)"
                  + (f", the closest {closest:.2f}x the final best" if closest else ""))


if __name__ == "__main__":
    main()
