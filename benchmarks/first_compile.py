"""What a compile worker's first compile costs against its later ones, with and without the compiler
readied as the worker starts (kt_cli.evaluate.cross_compile.warm_up): the run's first batch of
candidates is every compile worker's first compile, all at once.

    python benchmarks/first_compile.py [--target nvidia:sm_90] [--rounds 5] [--json FILE]

Each round starts one compile worker as `kt tune` does (forked from kt's fork server, which has torch
imported), with a fresh Triton cache and kt cache, once readied and once not, in alternating order,
then cross-compiles four matmul candidates (recipes/matmul.toml, 4096³) one after another through the
worker's own request. Compiles run on the CPU: no GPU is needed, and on a GPU host the figures are
those of its compile pool.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

CONFIGS = [dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3),
           dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=4, num_stages=4),
           dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3),
           dict(BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, GROUP_M=4, num_warps=4, num_stages=4)]
FIXED = {"SPLIT_K": 1, "PROGRAMS_PER_UNIT": 0, "TMA": 0, "GLUON": 0, "UNITS": 132}
SHAPE = {"M": 4096, "N": 4096, "K": 4096}


def one_round(source, target, readied: bool) -> dict:
    """Start a compile worker (readied or not), then compile CONFIGS in order: seconds of each step."""
    from kt_cli.evaluate.cross_compile import WARM_ENV
    from kt_cli.evaluate.pool import NICE_ENV, WorkerPool
    from kt_cli.types import Candidate

    with tempfile.TemporaryDirectory() as triton_cache, tempfile.TemporaryDirectory() as kt_cache:
        env = {"TRITON_INTERPRET": "0", NICE_ENV: "0", WARM_ENV: "compile" if readied else "",
               "TRITON_CACHE_DIR": triton_cache, "KT_CACHE_DIR": kt_cache}
        pool = WorkerPool(1, env)
        try:
            started = time.perf_counter()
            pool.workers[0].ensure_started()
            out = {"start_s": time.perf_counter() - started, "compiles_s": []}
            for params in CONFIGS:
                candidate = Candidate(source.path, {**FIXED, **params}, target.name, SHAPE, "bfloat16", "measured")
                began = time.perf_counter()
                pool.call("compile", {"source": source, "candidate": candidate, "target": target}, 600)
                out["compiles_s"].append(time.perf_counter() - began)
        finally:
            pool.stop()
    return out


def summary(rounds: list[dict]) -> dict:
    first = [r["compiles_s"][0] for r in rounds]
    later = [c for r in rounds for c in r["compiles_s"][1:]]
    return {"rounds": len(rounds), "start_s": statistics.median(r["start_s"] for r in rounds),
            "first_compile_s": statistics.median(first), "later_compile_s": statistics.median(later),
            "first_over_later": statistics.median(first) / statistics.median(later)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="nvidia:sm_90")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="write every round's figures here")
    args = parser.parse_args()

    from kt_cli import plugins
    from kt_cli.evaluate.pool import start_fork_server_in_background
    from kt_cli.recipe.parse import load_recipe

    recipe = load_recipe(ROOT / "recipes" / "matmul.toml")
    source = plugins.generators()[recipe.generator].build(recipe.kernel, recipe.path)
    target = plugins.target(args.target)
    start_fork_server_in_background()
    rounds = {"not readied": [], "readied": []}
    for i in range(args.rounds):
        for readied in ((False, True) if i % 2 == 0 else (True, False)):
            rounds["readied" if readied else "not readied"].append(one_round(source, target, readied))
    table = {mode: summary(found) for mode, found in rounds.items()}
    from tabulate import tabulate

    print(tabulate([[mode, s["rounds"], f"{s['start_s']:.2f}", f"{s['first_compile_s']:.2f}",
                     f"{s['later_compile_s']:.2f}", f"{s['first_over_later']:.2f}"] for mode, s in table.items()],
                   headers=["compile worker", "rounds", "start s", "first compile s", "later compiles s",
                            "first / later"]))
    if args.json:
        Path(args.json).write_text(json.dumps({"target": args.target, "rounds": rounds, "summary": table}, indent=1))


if __name__ == "__main__":
    main()
