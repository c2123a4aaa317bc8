"""Build the cost model's ground truth: every measured trial stored in benchmarks/results/bench_*.json
(kt's own measured tuning runs on H100/H200 GPUs), with the static features kt reads for the same
point today (cross-compiled for the device's target: resources, programs, launches, flops, traffic).

    python benchmarks/rank_dataset.py --out benchmarks/results/rank_dataset.jsonl [--jobs 2]
    python benchmarks/rank_dataset.py --runs bench_finalize_h100_s8.json --out FRESH.jsonl  # one run alone
    python benchmarks/rank_dataset.py --refresh FRESH.jsonl  # the same points, today's features (of unchanged kernels)
    python benchmarks/rank_dataset.py --refresh FRESH.jsonl --only mma  # only the points with MMAs (no-mma: without)

The measured times are what the GPU said. Runs made since the thirty-second session keep every feature
the cost model read from the binary the GPU timed (`features_from: device`): those are the point's
features, and --refresh keeps them; the stored points of older runs were read again on a GPU host with
their runs' Triton (benchmarks/experiments/gpu_host_features.py), which rebuilds the binaries timed, and
are marked the same. Otherwise the features come from compiling today's kernel source here, so a point
the current source no longer accepts is left out (and counted); runs made since the twenty-sixth session
also keep the resources of the binary the GPU ran (`device_resources`, which benchmarks/rank.py scores
with): the GPU host's Triton may allocate registers otherwise than this machine's (softmax 3072x20480,
4096-wide blocks on 4 warps: 119 registers a thread under Triton 3.6 on an H200, 90 under 3.9 here;
43-67% of the row kernels' points of four held-out runs differ).
benchmarks/rank.py holds the cost model against this file; tests/test_costmodel_rank.py does so in CI.
"""

from __future__ import annotations

import argparse
import ast
import glob
import json
import subprocess
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]
TARGETS = {"sm_90": "nvidia:sm_90", "sm_100": "nvidia:sm_100", "sm_80": "nvidia:sm_80"}


def compiled_code(text: str) -> str:
    """What decides the compiled kernel in a library module's text: its @triton.jit functions and its
    launch function (constants, seeds and docstrings may change without changing a measurement)."""
    tree = ast.parse(text)
    keep = [n for n in tree.body if isinstance(n, ast.FunctionDef)
            and (n.name == "launch" or any("jit" in ast.unparse(d) for d in n.decorator_list))]
    helpers = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("_")]
    return "\n".join(ast.unparse(n) for n in keep + helpers)


def recipe_path(name: str) -> Path:
    """A benchmark recipe by name: the library's (recipes/NAME.toml), else one of the benchmarks' own
    (benchmarks/recipes/NAME.toml: problems held out from the library recipes, for instance)."""
    library = ROOT / "recipes" / f"{name}.toml"
    return library if library.exists() else ROOT / "benchmarks" / "recipes" / f"{name}.toml"


def same_code_as_today(recipe: str, date: str) -> bool:
    """Whether the kernel the run measured compiles from the same code as today's source: the module as
    committed at the run's date, compared by compiled_code. A run of code later changed is stale data."""
    kernel = tomllib.loads(recipe_path(recipe).read_text())["kernel"]["name"]
    relative = f"plugins/kt_templates/kernels/{kernel}.py"
    commit = subprocess.run(["git", "rev-list", "-1", f"--before={date}", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    then = subprocess.run(["git", "show", f"{commit}:{relative}"], cwd=ROOT, capture_output=True, text=True)
    return then.returncode == 0 and compiled_code(then.stdout) == compiled_code((ROOT / relative).read_text())


def measured_trials(runs: str = "bench_*.json") -> list[dict]:
    """Every ok measured trial of the stored runs (files of benchmarks/results/ matching `runs`) of
    today's kernel code, one record per (device, recipe, dtype, problem, params)."""
    seen, out, stale = set(), [], {}
    for path in sorted(glob.glob(str(ROOT / "benchmarks" / "results" / runs))):
        data = json.loads(Path(path).read_text())
        env = data["environment"]
        for kernel in data.get("kernels", []):
            if not same_code_as_today(kernel["recipe"], env["date"]):
                stale[f"{Path(path).name}:{kernel['recipe']}"] = len(kernel.get("trials", []))
                continue
            for t in kernel.get("trials", []):
                if t.get("kind") != "ok" or not t.get("value"):
                    continue
                key = json.dumps([env["device"], kernel["recipe"], kernel.get("dtype"), t["shape"], t["params"]],
                                 sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    out.append({"run": Path(path).name, "date": env["date"], "device": env["device"], "target": env["target"],
                                "recipe": kernel["recipe"], "dtype": kernel.get("dtype"), "shape": t["shape"],
                                "params": t["params"], "measured_s": t["value"],
                                **({"device_resources": t["resources"]} if t.get("resources") else {}),
                                **({"device_features": t["features"]} if t.get("features") else {})})
    if stale:
        print(f"left out, measured on kernel code changed since: {stale}", file=sys.stderr)
    return out


def current_code(records: list[dict]) -> list[bool]:
    """For each stored point, whether its kernel compiles from the code it was measured on (same_code_as_today)."""
    known: dict[tuple, bool] = {}
    for r in records:
        key = (r["recipe"], r["date"])
        if key not in known:
            known[key] = same_code_as_today(*key)
    return [known[(r["recipe"], r["date"])] for r in records]


def measured_point(record: dict) -> dict:
    """A stored point as measured, without what a read of its binary added (features, kernel, why skipped):
    what `features` takes to read it again."""
    return {k: v for k, v in record.items() if k not in ("features", "kernel", "skipped")}


def features(record: dict) -> dict:
    """The static features of one point for its device's target, or the reason there are none: those the
    measuring run read from the binary it timed (`device_features`, runs since the thirty-second session), else
    those of today's cross-compile here."""
    if record.get("device_features"):
        kernel = tomllib.loads(recipe_path(record["recipe"]).read_text())["kernel"]["name"]
        rest = {k: v for k, v in record.items() if k != "device_features"}
        return {**rest, "kernel": kernel, "features": record["device_features"], "features_from": "device"}
    from kt_cli import plugins
    from kt_cli.evaluate.requests import compile_candidate
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.types import Candidate
    from kt_cli.evaluate.failure import WorkerFailure

    recipe = load_recipe(recipe_path(record["recipe"]))
    source = plugins.generators()[recipe.generator].build(recipe.kernel, recipe.path)
    target = plugins.target(record["target"])
    candidate = Candidate(source.path, record["params"], target.name, record["shape"], recipe.problem.dtype,
                          "estimated")
    try:
        out = compile_candidate(source, candidate, target)
    except WorkerFailure as exc:
        return {**record, "skipped": f"{exc.kind}: {exc.message[:200]}"}
    except Exception as exc:  # a point today's source no longer takes
        return {**record, "skipped": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return {**record, "kernel": source.name,
            "features": {k: out[k] for k in ("resources", "programs", "launches", "instructions", "work")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "rank_dataset.jsonl"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", default="bench_*.json",
                        help="which files of benchmarks/results/ (a glob; a fresh run alone: its file name)")
    parser.add_argument("--refresh", help="a dataset file: recompute the features of its points in place "
                                           "(after the features kt reads changed)")
    parser.add_argument("--only", choices=("mma", "no-mma"),
                        help="with --refresh: only the points whose stored features show MMAs (mma) or show none "
                             "(no-mma); the rest as stored")
    args = parser.parse_args()
    if args.refresh:
        args.out = args.refresh
        stored = [json.loads(line) for line in Path(args.refresh).read_text().splitlines()]
        has_mma = [bool(r.get("features", {}).get("instructions", {}).get("mma")) for r in stored]
        today = current_code(stored)
        # features read from the binary the GPU timed describe it as no cross-compile here can: kept
        again = [(args.only is None or (mma == (args.only == "mma"))) and fresh and r.get("features_from") != "device"
                 for r, mma, fresh in zip(stored, has_mma, today)]
        if not all(today):
            print(f"kept as stored: {today.count(False)} points measured on kernel code changed since (today's "
                  "features would describe another kernel than the one measured)", file=sys.stderr)
        records = [measured_point(r) for r, redo in zip(stored, again) if redo]
    else:
        stored, again, records = [], [], measured_trials(args.runs)
    with ProcessPoolExecutor(args.jobs) as pool:
        fresh = iter(pool.map(features, records, chunksize=4))
    rows = [next(fresh) if redo else r for r, redo in zip(stored, again)] if args.refresh else list(fresh)
    Path(args.out).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    skipped = sum("skipped" in r for r in rows)
    print(f"wrote {args.out}: {len(rows) - skipped} points with features, {skipped} left out")


if __name__ == "__main__":
    main()
