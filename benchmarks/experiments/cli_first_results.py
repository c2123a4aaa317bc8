"""Experiment (not part of kt): when a `kt tune` run from the command line measured its first result of each
problem, its final best, and (given another run's figures) Triton autotune's time, counted from the command's
start, read from the run's own study storage.

    T0=$(date +%s.%N); kt tune recipes/matmul.toml --out /tmp/a
    python benchmarks/experiments/cli_first_results.py recipes/matmul.toml /tmp/a --t0 $T0 \
        [--autotune bench_autotune.json]

benchmarks/run.py reports the same from inside its own process, which has imported torch and started its
fork server before the tune (its anchors do): a command-line `kt tune` pays its whole start.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins"), str(ROOT / "benchmarks")]

from run import completions, first_reaching, first_within  # noqa: E402


def autotune_times(path: str | None) -> dict:
    """Per problem: autotune's best time and its tuning wall, from a benchmarks/run.py --autotune report, or
    the medians over the lines autotune_fresh.py --json wrote (.jsonl: the wall from each command's start)."""
    if not path:
        return {}
    if path.endswith(".jsonl"):
        import statistics

        runs: dict = {}
        for line in Path(path).read_text().splitlines():
            run = json.loads(line)
            runs.setdefault(run["shape"], []).append(run["autotune"])
        return {shape: {key: statistics.median(r[key] for r in found) for key in ("median_s", "tuning_wall_s")}
                for shape, found in runs.items()}
    report = json.loads(Path(path).read_text())
    return {a["shape"]: a["autotune"] for entry in report["kernels"] for a in entry.get("anchors", [])
            if "autotune" in a}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("recipe")
    parser.add_argument("out")
    parser.add_argument("--t0", type=float, required=True, help="the command's start, seconds since the epoch")
    parser.add_argument("--autotune", help="a benchmarks/run.py --autotune JSON report of the same host")
    args = parser.parse_args()
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.search.plan import default_storage

    recipe = load_recipe(Path(args.recipe))
    start = datetime.datetime.fromtimestamp(args.t0)
    anchors = autotune_times(args.autotune)
    for shape, points in sorted(completions(default_storage(recipe, Path(args.out)), start).items()):
        line = (f"{shape}: first result {points[0][0]:.2f} s, best {min(v for _, v in points) * 1e6:.1f} us "
                f"within 1% at {first_within(points, 1.01):.2f} s, {len(points)} measured")
        if shape in anchors:
            reached = first_reaching(points, anchors[shape]["median_s"])
            line += (f"; autotune {anchors[shape]['median_s'] * 1e6:.1f} us after {anchors[shape]['tuning_wall_s']:.1f} s"
                     f" of tuning, reached at " + ("never" if reached is None else f"{reached:.2f} s"))
        print(line)


if __name__ == "__main__":
    main()
