"""Where a tune's time went, candidate by candidate: the phases and steps kt records in every trial.

    python benchmarks/breakdown.py ART/NAME.kt [--wall-s 63] [--json OUT.json]

Reads trials.jsonl (each trial's `phase_seconds`: compile, verify, time, and their steps, see
kt_cli/evaluate/isolated.py and requests.time_held) and prints, for the candidates timed fully and
for those raced out, the mean seconds of each step and its share of the device phases (screen + verify
+ time):

- compile: the wait for and the work of the CPU compile pool (cross-compiling, resources, estimate);
- verify.inputs: the judge making (or handing out) the held inputs and reference outputs;
- verify.load: the candidate's worker loading the kernel module and opening the judge's shared tensors;
- verify.launches: its launches on every case under the launch watch (the binary's first load included);
- verify.relay: the request's round trip between processes (pickling, the pipe, a worker's start);
- verify.judging: the judge comparing what the launches left;
- time.inputs: the judge handing out the timed problem's held tensors;
- time.setup: the worker loading the kernel, binding its launch, the problem's method, clock readings;
- time.warm-up / time.capture / time.poison / time.sampling / time.statistics: kt's timer (warm-up by
  time, device-graph capture, the outputs poisoned before each batch, the interleaved samples with their
  flushes queued, run and read, the bootstrap intervals between batches);
- time.checks: the launch watch's verdict, pristine checks and clock readings after sampling;
- time.relay: the request's round trip between processes (pickling, the pipe);
- time.judging: the judge checking what the last timed batch left;
- screen.*: racing's first timing, before verification, of a candidate with a best to race against
  (the same steps as time.*: the candidate alone, 3 warm-up calls, 5 samples); a candidate raced
  out there has no verify.* or time.* steps.

`seconds` of a trial (its wall time, the wait for a free device included) is shown beside them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

TIMING_STEPS = ("inputs", "setup", "warm-up", "probe", "capture", "poison", "sampling", "retaken", "statistics",
                "checks", "relay", "judging")  # screen.*, time.*
STEPS = ("compile", *(f"screen.{s}" for s in TIMING_STEPS),
         *(f"verify.{s}" for s in ("inputs", "load", "launches", "relay", "judging")),
         *(f"time.{s}" for s in TIMING_STEPS))


def trials(artifact: Path) -> list[dict]:
    path = artifact / "trials.jsonl" if artifact.is_dir() else artifact
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def group_of(trial: dict) -> str | None:
    if trial.get("failure_kind") != "ok" or trial.get("mode") != "measured":
        return None
    return "raced out" if (trial.get("stats") or {}).get("raced_out") else "timed fully"


def breakdown(records: list[dict]) -> dict:
    """{group: {"candidates": n, "mean_s": {step: s}, "device_s": s, "trial_s": s}}."""
    out: dict = {}
    for trial in records:
        group = group_of(trial)
        if group is None:
            continue
        entry = out.setdefault(group, {"candidates": 0, "sum": {}, "device_s": 0.0, "trial_s": 0.0})
        phases = trial.get("phase_seconds") or {}
        entry["candidates"] += 1
        for step in STEPS:
            entry["sum"][step] = entry["sum"].get(step, 0.0) + phases.get(step, 0.0)
        entry["device_s"] += phases.get("screen", 0.0) + phases.get("verify", 0.0) + phases.get("time", 0.0)
        entry["trial_s"] += trial.get("seconds") or 0.0
    for entry in out.values():
        n = entry["candidates"]
        entry["mean_s"] = {step: total / n for step, total in entry.pop("sum").items()}
        entry["device_s"] /= n
        entry["trial_s"] /= n
    return out


def table(result: dict) -> str:
    groups = list(result)
    lines = ["| step | " + " | ".join(f"{g} (n={result[g]['candidates']}), s | share" for g in groups) + " |",
             "|---|" + "---|---|" * len(groups)]
    for step in STEPS:
        cells = []
        for g in groups:
            mean, device = result[g]["mean_s"][step], result[g]["device_s"]
            share = "" if step == "compile" or not device else f"{mean / device:.0%}"
            cells.append(f"{mean:.3f} | {share}")
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    lines.append("| **screen + verify + time (device phases)** | " + " | ".join(f"**{result[g]['device_s']:.3f}** | 100%"
                                                                     for g in groups) + " |")
    lines.append("| trial wall (wait for the device included) | " + " | ".join(f"{result[g]['trial_s']:.3f} | "
                                                                           for g in groups) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("artifact", help="a tuned artifact NAME.kt (or its trials.jsonl)")
    parser.add_argument("--json", help="also write the breakdown here")
    args = parser.parse_args()
    result = breakdown(trials(Path(args.artifact)))
    if not result:
        raise SystemExit(f"{args.artifact}: no measured candidate that passed: nothing to break down")
    print(table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
