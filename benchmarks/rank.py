"""Hold kt's cost model against measured times: per problem, how well the static estimate ranks the
configs a GPU timed.

    python benchmarks/rank.py [benchmarks/results/rank_dataset.jsonl ...] [--calibration CAL.json] [--json]

The dataset (benchmarks/rank_dataset.py builds it) holds every measured trial with the static features
kt reads for the same point; the estimate is recomputed here from those features with today's model
and the measured device's tables, so a change to the model is judged without compiling anything.
Per problem (device, recipe, dtype, shape) with at least MIN_POINTS configs:

- rho: Spearman's rank correlation of estimate and measured time (ties get average ranks);
- winner: measured time of the model's pick / measured best (1.0: the model picked the best);
- top8: 1 when the model's 8 best contain a config within 3% of the measured best;
- error: median of |estimate - measured| / measured;
- ties: pairs the model ties (within 0.1%) whose measured times differ by more than 5%;
- flat: the share of its configs that measured within 5% of the best (where most do, rho is mostly the order of
  the timings' noise: s49o's gemv 20480 x 8192, 20 of 24).
tests/test_costmodel_rank.py runs this in CI on the stored datasets.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]
DATASETS = sorted((ROOT / "benchmarks" / "results").glob("rank_dataset*.jsonl"))
MIN_POINTS = 8
TOP_K, NEAR_BEST, TIE, APART = 8, 1.03, 1e-3, 1.05
# The targets (docs/costmodel.md): what the model is meant to reach on held-out problems.
TARGETS = {"rho_median": 0.8, "rho_worst": 0.6, "winner_within_10pct": 0.8, "top8_recall": 0.9,
           "error_median": 0.25, "ties": 0}


CALIBRATIONS: dict[str, dict] = {}  # device name -> constants of a `kt devices --calibrate` run (--calibration)


def estimate(record: dict) -> dict:
    """Today's model on a stored point's features, with the tables of the device it was measured on (and
    the constants calibrated on such a device, where --calibration gave them)."""
    import dataclasses

    from kt_cli import plugins
    from kt_cli.evaluate.estimate import Work, estimate_seconds
    from kt_cli.types import Device, Resources

    target = plugins.target(record["target"])
    if record["device"] in CALIBRATIONS:
        target = dataclasses.replace(target, properties={**target.properties, **CALIBRATIONS[record["device"]]})
    vendor = plugins.vendor(target.vendor)
    peaks = vendor.device_peaks(Device(target.vendor, 0, record["device"], record["target"], {}))
    f = record["features"]
    work = dict(f["work"])  # points stored before kt recorded items and written bytes: from the module
    if not work.get("items"):  # stored before kt recorded them, or before the module declared them
        work["items"] = work_items(record)
    if "written_bytes" not in work:
        work["written_bytes"] = written_bytes(record)
    if "lockstep_bytes" not in work:  # stored before kt recorded them: from today's module
        work["lockstep_bytes"], work["stages"] = declared(record, "lockstep_reads"), declared(record, "pipeline_stages")
    if "load_warps" not in work:
        work["load_warps"] = declared(record, "load_warps")
    work = Work(**work)
    # the resources of the binary the GPU ran where the run kept them (rank_dataset.py): its host's Triton
    # may allocate registers, and so fit programs on a unit, otherwise than today's cross-compile here
    resources = Resources(**record.get("device_resources", f["resources"]))
    return estimate_seconds(work, record["dtype"], peaks, target.properties, resources, f["programs"], f["launches"],
                            loop_barriers(f["instructions"]))


def loop_barriers(mix: dict) -> dict:
    """A stored point's instruction mix, with `loop_barriers` where it was read before kt counted a main loop's
    barriers (points of kernel code changed since, which rank_dataset.py --refresh keeps as stored): one, waited
    at by the whole workgroup, wherever a loop holds MMAs. Every such loop of today's compiles of all 1875
    stored MMA points holds a barrier, the whole CTA's in Triton's kernels; only the Gluon attention's two
    consumer partitions of one warpgroup each (the thirtieth session's turns, measured since) sync alone."""
    if mix.get("loop_mma_flops") and "loop_barriers" not in mix:
        return {**mix, "loop_barriers": 1}
    return mix


def use_calibrations(paths) -> None:
    """Lay the constants of `kt --json devices --calibrate` outputs over their devices' points."""
    from kt_cli.evaluate.calibrate import knees

    for path in paths:
        for device in json.loads(Path(path).read_text())["devices"]:
            if "calibration" in device:
                calibration = device["calibration"]
                # calibrations stored before the knees were: fitted to their own sweeps, as kt fits them now
                CALIBRATIONS[device["name"]] = {**knees(calibration, device["sm_count"]), **calibration["constants"]}


def work_items(record: dict) -> float:
    """The kernel module's work_items for a stored point recorded without them (0: none)."""
    kernel = _module(record["kernel"])
    return kernel.work_items(record["shape"], record["dtype"], record["params"]) if kernel else 0.0


def declared(record: dict, what: str) -> float:
    """What the kernel module declares for a stored point (Kernel.lockstep_reads, pipeline_stages), 0 where
    it says nothing."""
    kernel = _module(record["kernel"])
    return getattr(kernel, what)(record["shape"], record["dtype"], record["params"]) if kernel else 0.0


def written_bytes(record: dict) -> float:
    """The outputs' bytes of a stored point's problem, for points stored before kt recorded them (0: none)."""
    from kt_cli.evaluate.requests import output_bytes

    kernel = _module(record["kernel"])
    return output_bytes(kernel, record["shape"], record["dtype"]) if kernel else 0.0


def _module(name: str):
    from kt_cli.kernel import Kernel, KernelSource

    if name not in _MODULES:
        path = ROOT / "plugins" / "kt_templates" / "kernels" / f"{name}.py"
        _MODULES[name] = Kernel.load(KernelSource(str(path), "templates", name)) if path.exists() else None
    return _MODULES[name]


_MODULES: dict = {}


def ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties given their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    var = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return cov / var if var else 0.0


def problem_quality(points: list[tuple[float, float]]) -> dict:
    """The figures of one problem from (estimated, measured) pairs."""
    est, meas = [p[0] for p in points], [p[1] for p in points]
    best = min(meas)
    by_estimate = sorted(range(len(points)), key=lambda i: (est[i], i))
    ties = sum(1 for i in range(len(points)) for j in range(i + 1, len(points))
               if abs(est[i] - est[j]) <= TIE * max(est[i], est[j])
               and max(meas[i], meas[j]) > APART * min(meas[i], meas[j]))
    return {"points": len(points), "rho": spearman(est, meas), "winner": meas[by_estimate[0]] / best,
            "top8": int(any(meas[i] <= NEAR_BEST * best for i in by_estimate[:TOP_K])),
            "error": statistics.median(abs(e - m) / m for e, m in zip(est, meas)), "ties": ties,
            "flat": statistics.fmean(m <= APART * best for m in meas)}


def load(paths) -> list[dict]:
    return [r for p in paths for r in map(json.loads, Path(p).read_text().splitlines()) if "features" in r]


def quality(records: list[dict], per_run: bool = False) -> tuple[dict, dict]:
    """Per-problem figures and their summary over problems; with `per_run`, a problem's points of each
    stored run apart (run_offsets: runs of other days disagree on the same binary by up to 25%)."""
    groups = defaultdict(list)
    for r in records:
        shape = ",".join(f"{k}={v}" for k, v in sorted(r["shape"].items()))
        key = f"{r['device']} | {r['recipe']} {r['dtype']} | {shape}" + (f" | {r['run']}" if per_run else "")
        groups[key].append((estimate(r)["seconds"], r["measured_s"]))
    per = {k: problem_quality(v) for k, v in sorted(groups.items()) if len(v) >= MIN_POINTS}
    rhos = [q["rho"] for q in per.values()]
    summary = {"problems": len(per), "points": sum(q["points"] for q in per.values()),
               "rho_median": statistics.median(rhos), "rho_worst": min(rhos),
               "winner_within_10pct": statistics.fmean(q["winner"] <= 1.10 for q in per.values()),
               "top8_recall": statistics.fmean(q["top8"] for q in per.values()),
               "error_median": statistics.median(q["error"] for q in per.values()),
               "ties": sum(q["ties"] for q in per.values()),
               # the points whose features were read from the binary their GPU timed (rank_dataset.py), not
               # from a cross-compile with another Triton
               "binaries_timed": sum(r.get("features_from") == "device" for r in records) / max(1, len(records))}
    return per, summary


def problem_of(record: dict) -> tuple:
    """The problem a stored point belongs to: device, recipe, dtype and shape."""
    return record["device"], record["recipe"], record["dtype"], json.dumps(record["shape"], sort_keys=True)


def pruning(records: list[dict], margin: float | None = None, orders: int = 200, waiting: int = 1) -> dict:
    """Measured tuning with the evaluator's pruning rule (kt_cli/evaluate/pruning.py, at `margin` once it
    has learned; its own MARGIN by default) replayed on the stored problems in `orders` random orders: the
    share of device evaluations it saves, how often, and by how much, the best it keeps is slower than the
    true best, and after what share of the candidates it timed the best (within 1%) was timed. `waiting`:
    how many compiled candidates wait for the device, the one with the lowest estimate over the fastest so
    far taken first (kt_cli.evaluate.device_turns); 1: arrival order."""
    import random

    from kt_cli.evaluate.pruning import MARGIN, Evidence, over_fastest

    margin = MARGIN if margin is None else margin
    groups = defaultdict(list)
    for r in records:
        model = estimate(r)
        groups[problem_of(r)].append((model, r["measured_s"]))
    rng, saved, runs, lost, worst, until_best = random.Random(0), [], 0, 0, 1.0, []
    for points in (g for g in groups.values() if len(g) >= MIN_POINTS):
        best = min(p[1] for p in points)
        for _ in range(orders):
            order, queue = rng.sample(points, len(points)), []
            evidence, pruned, found, kept = Evidence(), 0, None, math.inf
            while order or queue:
                queue += [order.pop() for _ in range(min(len(order), waiting - len(queue)))]
                queue.sort(key=lambda p: over_fastest(p[0]["seconds"], evidence.fastest_estimate))  # stable
                model, measured = queue.pop(0)
                if evidence.pruned_at(model, margin) is not None:
                    pruned += 1
                    continue
                evidence.add(model, measured, fastest=measured < kept)
                kept = min(kept, measured)
                if found is None and measured <= best * 1.01:
                    found = evidence.measured
            saved.append(pruned / len(points))
            until_best.append((found or evidence.measured) / evidence.measured)
            runs += 1
            lost += kept > best * 1.01
            worst = max(worst, kept / best)
    return {"margin": margin, "waiting": waiting, "evaluations_saved": statistics.fmean(saved),
            "runs_missing_best_by_1pct": lost / runs, "worst_kept_vs_best": worst,
            "best_timed_after": statistics.fmean(until_best)}


def run_offsets(records: list[dict]) -> list[dict]:
    """Where a problem's stored runs measured the same compiled kernel (identical features): the ratio of
    two runs' times for it. Within one run such twins (two params compiling to one kernel) agree to 0.14%
    (median of 25 groups, 3.5% at the 90th percentile); between runs of other days and timing protocols
    by up to 25%, which no static model can rank through."""
    times = defaultdict(lambda: defaultdict(list))  # (problem, features) -> run -> measured times
    for r in records:
        times[(problem_of(r), json.dumps(r["features"], sort_keys=True))][r["run"]].append(r["measured_s"])
    out = []
    for (problem, _), runs in times.items():
        medians = sorted((statistics.median(v), run) for run, v in runs.items())
        if len(medians) > 1:
            out.append({"problem": " | ".join(problem[:2]) + " | " + problem[3], "runs": [m[1] for m in medians],
                        "ratio": medians[-1][0] / medians[0][0]})
    return out


def meets(summary: dict) -> dict[str, bool]:
    """Which targets the summary meets."""
    lower_is_better = {"error_median", "ties"}
    return {k: summary[k] <= t if k in lower_is_better else summary[k] >= t for k, t in TARGETS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", default=[str(p) for p in DATASETS])
    parser.add_argument("--device", default="", help="only problems measured on a device whose name contains this")
    parser.add_argument("--recipe", default="", help="only problems of this recipe")
    parser.add_argument("--prune", action="store_true", help="replay measured tuning with the evaluator's pruning")
    parser.add_argument("--calibration", action="append", default=[],
                        help="`kt devices --calibrate --json` output: its constants for its devices' points")
    parser.add_argument("--per-run", action="store_true",
                        help="rank each stored run's points of a problem apart (runs disagree on one binary)")
    parser.add_argument("--offsets", action="store_true",
                        help="the same compiled kernel measured by two runs: how far they disagree")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    use_calibrations(args.calibration)
    records = [r for r in load(args.datasets) if args.device in r["device"] and args.recipe in ("", r["recipe"])]
    if args.prune:
        from kt_cli.evaluate.pruning import MARGIN

        for margin in sorted({1.1, MARGIN, 1.3, 1.5}):
            for waiting in (1, 8):
                print(json.dumps(pruning(records, margin, waiting=waiting)))
        return
    if args.offsets:
        found = run_offsets(records)
        for row in sorted(found, key=lambda row: -row["ratio"]):
            print(f"{row['ratio']:.3f}  {row['problem']}  {' < '.join(row['runs'])}")
        return
    per, summary = quality(records, args.per_run)
    if args.json:
        print(json.dumps({"problems": per, "summary": summary, "meets": meets(summary)}, indent=1))
        return
    from tabulate import tabulate

    rows = [[k, q["points"], f"{q['rho']:.2f}", f"{q['winner']:.2f}x", q["top8"], f"{q['error']:.0%}", q["ties"],
             f"{q['flat']:.0%}"] for k, q in per.items()]
    print(tabulate(rows, ["problem", "n", "rho", "winner", "top8", "error", "ties", "flat"]))
    ok = meets(summary)
    print("\n" + "\n".join(f"{k}: {summary[k]:.3g} (target {TARGETS[k]}) {'met' if ok[k] else 'NOT met'}"
                           for k in TARGETS))
    print(f"features of the binaries timed: {summary['binaries_timed']:.0%} of the points (the rest cross-compiled here)")


if __name__ == "__main__":
    main()
