"""kt's benchmark on a GPU: tune library recipes with kt and time the anchors in the same run.

    python benchmarks/run.py --kernels softmax,rmsnorm --trials 20 --json OUT.json
    python benchmarks/report.py OUT.json [MORE.json...] > BENCHMARKS.md

For every recipe: kt tunes it (measured mode), and beside it, with the same timer (device events,
cache flush of 2x L2, graph replay under 20 us, median until the 95% CI is within ±1%), the anchors:
torch eager (the recipe's baseline op: torch.matmul is cuBLAS, the attention baseline is SDPA),
torch.compile of that op, the device's measured copy bandwidth and bf16 GEMM rate, and for matmul
Triton's @triton.autotune over the Triton tutorial's config list. Stability: the best config of each
kernel re-measured in N fresh worker processes.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins"), str(ROOT / "benchmarks")]


def environment() -> dict:
    import torch
    import triton

    from kt_cli import __version__
    from kt_cli.plugins import devices

    device = devices()[0]
    try:  # which physical GPU (runs on lent machines land on different ones)
        import subprocess

        uuid = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader", "-i", str(device.index)],
                              capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        uuid = None
    return {"gpu_uuid": uuid, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
            "device": device.name, "target": device.target, "driver": device.info.get("driver"),
            "cuda": torch.version.cuda, "torch": torch.__version__, "triton": triton.__version__, "kt": __version__}


def ceilings() -> dict:
    from kt_cli.plugins import devices
    from kt_cli.evaluate.pool import Worker

    device = devices()[0]
    with Worker() as worker:
        return worker.call("ceilings", {"target_name": device.target, "index": device.index}, 600)


def tune_recipe(name: str, trials: int, out: Path, profile: int = 0, sampler: str | None = None) -> dict:
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.search.plan import default_storage
    from kt_cli.tune import tune

    from rank_dataset import recipe_path

    recipe = load_recipe(recipe_path(name))
    if sampler:  # the cost model's datasets want points spread over the space, not the search's path
        recipe = dataclasses.replace(recipe, search=dataclasses.replace(recipe.search, sampler=sampler))
    started, wall_start = time.perf_counter(), datetime.datetime.now()
    path, _, tally = tune(recipe, trials=trials, out_dir=out, profile=profile)
    manifest = json.loads((path / "manifest.json").read_text())
    progress = completions(default_storage(recipe, out), wall_start)
    return {"recipe": name, "dtype": recipe.problem.dtype, "wall_s": time.perf_counter() - started,
            "found_s": {shape: first_within(points, 1.01) for shape, points in progress.items()},
            "within_2pct_s": {shape: first_within(points, 1.02) for shape, points in progress.items()},
            "progress": progress,
            "evaluated": tally.done, "kinds": tally.kinds, "device_busy": tally.device_busy_seconds / tally.wall_seconds,
            "artifact": str(path), "results": manifest["results"], "trials": trial_summary(path)}


def trial_summary(path: Path) -> list[dict]:
    """Every measured trial of the artifact, compact: what the search tried and what each gave, the
    resources of the binary that ran (registers, shared memory, residency: the GPU host's compiler's, which
    benchmarks/rank_dataset.py's cross-compile with another Triton may not reproduce) and, for a trial timed,
    every static feature the cost model read from that binary (kt_cli.evaluate.evaluator.static_features)."""
    out = []
    for line in (path / "trials.jsonl").read_text().splitlines():
        t = json.loads(line)
        if t.get("mode") == "measured":
            out.append({"shape": t["shape"], "params": t["params"], "kind": t["failure_kind"], "value": t.get("value"),
                        "seconds": t.get("seconds"), "message": (t.get("message") or "")[:160],
                        "resources": t.get("resources"),
                        **({"features": t["stats"]["features"]} if (t.get("stats") or {}).get("features") else {})})
    return out


def completions(storage_url: str, wall_start) -> dict:
    """Per problem (shape key): every completed trial as [seconds from the start of kt tune, its value (the
    measured time)], in the order they completed. Problems are tuned side by side, so a time counts the other
    problems' trials too: an upper bound on the time the problem itself needed."""
    import optuna

    out = {}
    for summary in optuna.get_all_study_summaries(storage_url):
        if "|measured|" not in summary.study_name:
            continue
        study = optuna.load_study(study_name=summary.study_name, storage=storage_url)
        done = sorted((t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE and t.value is not None),
                      key=lambda t: t.datetime_complete)
        if done:
            out[summary.study_name.rsplit("|", 1)[-1]] = [
                [(t.datetime_complete - wall_start).total_seconds(), t.value] for t in done]
    return out


def first_reaching(points: list, seconds: float) -> float | None:
    """When the first of a problem's completions (completions) measured `seconds` or less (None: none did)."""
    return next((t for t, value in points if value <= seconds), None)


def first_within(points: list, of_best: float) -> float:
    """When the first of a problem's completions came within `of_best` x the best of them."""
    return first_reaching(points, of_best * min(value for _, value in points))


def reached_anchor(entry: dict) -> dict:
    """Per problem with an autotune anchor: when kt's run first measured a config as fast as autotune's best."""
    return {a["shape"]: first_reaching(entry["progress"].get(a["shape"], []), a["autotune"]["median_s"])
            for a in entry.get("anchors", []) if "autotune" in a}


def stability(artifact: str, processes: int, shapes: int, progress=None) -> list[dict]:
    """The best config of each problem re-measured in `processes` fresh worker processes; `progress` is
    called with the figures so far after every process (a job cut short keeps what it measured)."""
    from kt_cli.artifact.store import read
    from kt_cli.kernel import KernelSource
    from kt_cli.plugins import devices, target, vendor
    from kt_cli.types import Candidate
    from kt_cli.evaluate.isolated import IsolatedVerifier
    from kt_cli.evaluate.phases import PhaseClock
    from kt_cli.evaluate.pool import WorkerPool

    manifest = read(artifact)
    source = KernelSource(str(Path(artifact) / manifest["kernel"]["source_file"]), manifest["kernel"]["generator"],
                          manifest["kernel"]["name"], manifest["kernel"]["functions"])
    device = devices()[0]
    out = []
    for entry in manifest["results"][:shapes]:
        if not entry["params"]:
            continue
        candidate = Candidate(source.path, entry["params"], device.target, entry["shape"], manifest["dtype"],
                              "measured")
        medians, ratios, spec = [], [], target(device.target)
        row = {"shape": entry["shape_key"], "medians": medians, "ratios": ratios, "spread": 0.0, "ratio_spread": 0.0}
        out.append(row)
        shapes = [entry["shape"]] + entry["verification"].get("shapes", [])[-1:]
        for _ in range(processes):  # a fresh worker and judge each time
            env = vendor(spec.vendor).worker_env()
            worker, judge = WorkerPool(1, env), IsolatedVerifier(600, env, spec)
            try:
                _, result = judge.verify_and_time(worker, source, candidate, shapes, 1, PhaseClock())
            finally:
                worker.stop()
                judge.stop()
            medians.append(result["stats"]["median"])
            ratios.append(result["baseline"]["median"] / result["stats"]["median"])
            row.update(spread=max(medians) / min(medians) - 1, ratio_spread=max(ratios) / min(ratios) - 1,
                       method=result["stats"].get("method"))
            if progress is not None:
                progress(out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", required=True, help="comma-separated recipe names under recipes/ or benchmarks/recipes/")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--stability", type=int, default=0, help="fresh processes for the stability check")
    parser.add_argument("--stability-shapes", type=int, default=1, help="problems of each recipe checked for stability")
    parser.add_argument("--compile-anchor", action="store_true", help="also time torch.compile of each op")
    parser.add_argument("--autotune", action="store_true", help="time Triton's autotune for matmul recipes")
    parser.add_argument("--profile", type=int, default=0, help="Nsight Compute counters of the best K per problem")
    parser.add_argument("--sampler", help="override the recipes' search.sampler (random: a ranking dataset)")
    parser.add_argument("--no-race", action="store_true",
                        help="time every candidate fully (a ranking dataset wants precise times of slow configs too)")
    parser.add_argument("--no-prune", action="store_true",
                        help="send every candidate to the device (a ranking dataset must not depend on the model)")
    parser.add_argument("--arrival-order", action="store_true",
                        help="candidates take the device in arrival order, not the most promising first")
    parser.add_argument("--no-anchors", action="store_true", help="skip the anchors (a dataset run)")
    parser.add_argument("--json", required=True)
    parser.add_argument("--out", default="/tmp/kt-bench")
    args = parser.parse_args()
    import anchors

    from kt_cli.evaluate import evaluator

    if args.no_race:
        evaluator.RACE_MARGIN = None
    if args.no_prune:
        evaluator.PRUNE_MARGIN = 0
    if args.arrival_order:
        evaluator.ORDER_BY_ESTIMATE = False
    report = {"environment": environment(), "command": " ".join(["python benchmarks/run.py", *sys.argv[1:]]),
              "ceilings": ceilings(), "kernels": []}
    Path(args.json).write_text(json.dumps(report, indent=1))
    for name in args.kernels.split(","):
        print(f"== {name}", flush=True)
        try:
            entry = tune_recipe(name, args.trials, Path(args.out), args.profile, args.sampler)
            if not args.no_anchors:
                entry["anchors"] = anchors.for_recipe(name, entry, compile_anchor=args.compile_anchor,
                                                      autotune=args.autotune)
                entry["reached_autotune_s"] = reached_anchor(entry)
            if args.stability:
                def progress(rows, entry=entry):
                    entry["stability"] = rows
                    Path(args.json).write_text(json.dumps({**report, "kernels": report["kernels"] + [entry]},
                                                          indent=1, default=str))

                entry["stability"] = stability(entry["artifact"], args.stability, args.stability_shapes, progress)
        except Exception as exc:  # one kernel's failure is reported, the others still run
            entry = {"recipe": name, "error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]}
            print(entry["trace"], flush=True)
        report["kernels"].append(entry)
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))
        print(json.dumps({k: v for k, v in entry.items() if k in ("recipe", "wall_s", "evaluated", "error")}),
              flush=True)


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    main()
