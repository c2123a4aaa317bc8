"""Does a static artifact, finalized on a GPU, pick what a full measured tune picks? (issue 15)

    # on a machine without the GPU (a laptop, CI): static artifacts with the cost model's shortlists
    python benchmarks/finalize_check.py --prepare DIR --recipes softmax,matmul,attention --target nvidia:sm_90
    # on a GPU of that target, the same run:
    python benchmarks/finalize_check.py --static DIR --recipes softmax,matmul,attention --json OUT.json

On the GPU, in one run: `kt devices --calibrate` (the model's constants measured here), then for each
recipe a full measured `kt tune` (its winner per problem is the reference), then `kt finalize` of a copy
of the static artifact whose shortlists are extended by the measured winner of the same problem (when
the model did not shortlist it already). Every config of a problem is thereby verified and timed by the
same finalize call, with kt's timing protocol, in the same worker: the static pick (the fastest of the
model's own shortlist) and the measured winner are two timings of one method in one run, and their
ratio is what the issue's "within 3% of a full measured tune's winner" asks. First-call finalization
(kt_cli.load of an untouched copy, timed on its first call) runs for the first recipe.

The JSON holds the measured tunes in benchmarks/run.py's form ("kernels"), so rank_dataset.py takes
their trials into the cost model's ground truth when the file is named bench_*.json.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins"), str(ROOT / "benchmarks")]


def kt(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from kt_cli.cli import main; main()", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def prepare(out: Path, recipes: list[str], target: str) -> None:
    """Static artifacts (the cost model's shortlists) for `target`, one per recipe, under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    for name in recipes:
        started = time.perf_counter()
        done = kt("--quiet", "tune", f"recipes/{name}.toml", "--target", target, "--out", str(out / name),
                  timeout=3600)
        print(f"{name}: static tune exit {done.returncode} in {time.perf_counter() - started:.0f} s", flush=True)
        if done.returncode:
            raise SystemExit(done.stderr[-2000:])


def artifact_in(folder: Path) -> Path:
    found = sorted(p.parent for p in folder.rglob("manifest.json"))
    if len(found) != 1:
        raise SystemExit(f"{folder}: expected one artifact, found {found}")
    return found[0]


def with_winners(static: Path, measured: dict, into: Path) -> Path:
    """A copy of the static artifact whose shortlist per problem also holds the measured winner."""
    shutil.copytree(static, into)
    path = into / "manifest.json"
    manifest = json.loads(path.read_text())
    winners = {(e["target"], e["shape_key"]): e["params"] for e in measured["results"] if e.get("params")}
    for entry in manifest["results"]:
        won = winners.get((entry["target"], entry["shape_key"]))
        if won is not None and all(p["params"] != won for p in entry.get("shortlist", [])):
            entry["shortlist"] = [*entry["shortlist"], {"params": won, "seconds": 0.0, "added": "measured winner"}]
    path.write_text(json.dumps(manifest, indent=1))
    return into


def judged(finalized: list[dict], measured: dict) -> list[dict]:
    """Per problem: the static pick (fastest of the model's own shortlist) over the measured winner,
    both as timed by the same finalize call."""
    winners = {(e["target"], e["shape_key"]): e["params"] for e in measured["results"] if e.get("params")}
    rows = []
    for entry in finalized:
        won = winners.get((entry["target"], entry["shape_key"]))
        own = [t for t in entry["shortlist"] if "measured_seconds" in t and "added" not in t]
        winner = [t for t in entry["shortlist"] if t["params"] == won and "measured_seconds" in t]
        row = {"target": entry["target"], "shape_key": entry["shape_key"], "measured_winner": won,
               "shortlisted_winner": any(t["params"] == won and "added" not in t for t in entry["shortlist"]),
               "shortlist": entry["shortlist"]}
        if own and winner:
            pick = min(own, key=lambda t: t["measured_seconds"])
            row.update(static_pick=pick["params"], static_pick_s=pick["measured_seconds"],
                       winner_s=winner[0]["measured_seconds"],
                       ratio=pick["measured_seconds"] / winner[0]["measured_seconds"])
        rows.append(row)
    return rows


def first_call(static: Path, into: Path) -> dict:
    """kt_cli.load of an untouched copy: how long its first call (the shortlist timed) takes."""
    import torch

    import kt_cli
    from kt_cli.artifact import store
    from kt_cli.kernel import Kernel, Tensors

    shutil.copytree(static, into)
    manifest = store.read(into)
    entry = manifest["results"][0]
    kernel = Kernel.load(store.kernel_source(manifest))
    inputs = kernel.make_inputs(entry["shape"], manifest["dtype"], Tensors("cuda", 0))
    tuned = kt_cli.load(str(into))
    started = time.perf_counter()
    tuned(inputs)
    torch.cuda.synchronize()
    first = time.perf_counter() - started
    started = time.perf_counter()
    tuned(inputs)
    torch.cuda.synchronize()
    return {"shape": entry["shape"], "first_call_s": first, "second_call_s": time.perf_counter() - started}


def on_device(static_dir: Path, recipes: list[str], out: Path, trials: int | None, save) -> dict:
    """Calibrate, then per recipe a measured tune and the finalize of its static artifact; `save(result)`
    after each step (a job cut off by its time limit keeps what it finished)."""
    from run import environment, tune_recipe

    result = {"environment": environment(), "command": " ".join(sys.argv), "kernels": [], "finalize": []}
    started = time.perf_counter()
    done = kt("--json", "devices", "--calibrate")
    result["calibrate"] = {"exit": done.returncode, "wall_s": time.perf_counter() - started,
                           "stdout": done.stdout[-4000:], "stderr": done.stderr[-2000:]}
    print(f"calibrate: exit {done.returncode} in {result['calibrate']['wall_s']:.0f} s", flush=True)
    save(result)
    for name in recipes:
        measured = tune_recipe(name, trials, out / f"measured_{name}")
        result["kernels"].append(measured)
        print(f"{name}: measured tune {measured['wall_s']:.0f} s", flush=True)
        static = artifact_in(static_dir / name)
        both = with_winners(static, measured, out / f"finalize_{name}")
        started = time.perf_counter()
        done = kt("--json", "finalize", str(both))
        wall = time.perf_counter() - started
        entry = {"recipe": name, "exit": done.returncode, "wall_s": wall, "stderr": done.stderr[-3000:]}
        if done.returncode == 0:
            entry["problems"] = judged(json.loads(done.stdout)["finalized"], measured)
        result["finalize"].append(entry)
        save(result)
        print(f"{name}: finalize exit {done.returncode} in {wall:.0f} s: "
              f"{[round(r.get('ratio', 0), 3) for r in entry.get('problems', [])]}", flush=True)
    try:
        result["first_call"] = first_call(artifact_in(static_dir / recipes[0]), out / "first_call")
    except Exception as exc:  # reported, not fatal: the finalize figures above stand
        result["first_call"] = {"error": f"{type(exc).__name__}: {exc}"}
    print(f"first call: {result['first_call']}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipes", default="softmax,matmul,attention")
    parser.add_argument("--prepare", type=Path, help="write static artifacts here (no GPU needed)")
    parser.add_argument("--target", default="nvidia:sm_90")
    parser.add_argument("--static", type=Path, help="the static artifacts --prepare wrote")
    parser.add_argument("--trials", type=int, default=None, help="measured trials per problem (default: the recipe's)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/kt-finalize-check"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    recipes = args.recipes.split(",")
    if args.prepare:
        prepare(args.prepare, recipes, args.target)
        return
    if not (args.static and args.json):
        parser.error("give --prepare DIR, or --static DIR and --json OUT")
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    def save(result):
        args.json.write_text(json.dumps(result, indent=1, default=str))

    save(on_device(args.static, recipes, args.out, args.trials, save))


if __name__ == "__main__":
    main()
