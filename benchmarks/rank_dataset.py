"""Build the cost model's ground truth: every measured trial stored in benchmarks/results/bench_*.json
(kt's own measured tuning runs on H100/H200 GPUs), with the static features kt reads for the same
point today (cross-compiled for the device's target: resources, programs, launches, flops, traffic).

    python benchmarks/rank_dataset.py --out benchmarks/results/rank_dataset.jsonl [--jobs 2]

The measured times are what the GPU said; the features come from compiling today's kernel source, so a
point the current source no longer accepts is left out (and counted). benchmarks/rank.py holds the
cost model against this file; tests/test_costmodel_rank.py does so in CI.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]
TARGETS = {"sm_90": "nvidia:sm_90", "sm_100": "nvidia:sm_100", "sm_80": "nvidia:sm_80"}


def measured_trials() -> list[dict]:
    """Every ok measured trial of the stored runs, one record per (device, recipe, dtype, problem, params)."""
    seen, out = set(), []
    for path in sorted(glob.glob(str(ROOT / "benchmarks" / "results" / "bench_*.json"))):
        data = json.loads(Path(path).read_text())
        env = data["environment"]
        for kernel in data.get("kernels", []):
            for t in kernel.get("trials", []):
                if t.get("kind") != "ok" or not t.get("value"):
                    continue
                key = json.dumps([env["device"], kernel["recipe"], kernel.get("dtype"), t["shape"], t["params"]],
                                 sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    out.append({"run": Path(path).name, "device": env["device"], "target": env["target"],
                                "recipe": kernel["recipe"], "dtype": kernel.get("dtype"), "shape": t["shape"],
                                "params": t["params"], "measured_s": t["value"]})
    return out


def features(record: dict) -> dict:
    """The static features of one point for its device's target, or the reason there are none."""
    from kt_cli import plugins
    from kt_cli.evaluate.requests import compile_candidate
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.types import Candidate
    from kt_cli.evaluate.failure import WorkerFailure

    recipe = load_recipe(ROOT / "recipes" / f"{record['recipe']}.toml")
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
    return {**record, "kernel": source.name, "features": {k: out[k] for k in ("resources", "programs", "launches", "instructions")},
            "estimate": out["estimate"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "rank_dataset.jsonl"))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    records = measured_trials()
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(features, records, chunksize=4))
    Path(args.out).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    skipped = sum("skipped" in r for r in rows)
    print(f"wrote {args.out}: {len(rows) - skipped} points with features, {skipped} left out")


if __name__ == "__main__":
    main()
