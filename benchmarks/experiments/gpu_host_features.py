"""Issue 15: the stored ranking datasets' features read again from the binaries their GPU runs timed.

Every stored run was measured on a GPU host whose Triton (3.6.0, its environment says) builds other binaries
than this machine's (3.9): registers, and so programs a unit, differ for about half of the row kernels'
points. A GPU host with the same Triton rebuilds the very binaries timed (the same source, params and
bundled ptxas), so their features can be read there:

    python benchmarks/experiments/gpu_host_features.py prepare DIR            # here: the points to read
    python benchmarks/experiments/gpu_host_features.py compile DIR OUT --jobs 16   # on the GPU host
    python benchmarks/experiments/gpu_host_features.py merge OUT              # here: into the datasets

`prepare` keeps the points whose kernel code is today's (rank_dataset.current_code needs the repository's
history, which a GPU host's copy lacks) and that do not hold a run's own features already; `merge` writes
the host's features into the datasets as `features_from: device` (rank_dataset.py --refresh keeps them).
"""

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins"), str(ROOT / "benchmarks")]
RESULTS = ROOT / "benchmarks" / "results"
# held-out runs first: a GPU call's time box may end the rest
ORDER = ["s28", "s33b", "s34c", "s34d", "s36e", "s36f", "s36g", "s39h", "s41i", "s41j", "s41k"]


def datasets() -> list[Path]:
    files = sorted(RESULTS.glob("rank_*.jsonl"))
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(files, key=lambda p: rank.get(p.stem.rsplit("_", 1)[-1], len(ORDER)))


def prepare(out: Path) -> None:
    import rank_dataset

    out.mkdir(parents=True, exist_ok=True)
    for path in datasets():
        records = [json.loads(line) for line in path.read_text().splitlines()]
        today = rank_dataset.current_code(records)
        points = [{"i": i, **rank_dataset.measured_point(r)}
                  for i, (r, current) in enumerate(zip(records, today))
                  if current and r.get("features_from") != "device" and "features" in r]
        (out / path.name).write_text("".join(json.dumps(p) + "\n" for p in points))
        print(f"{path.name}: {len(points)} of {len(records)} points", flush=True)


def _read(point: dict) -> dict:
    import rank_dataset

    found = rank_dataset.features({k: v for k, v in point.items() if k != "i"})
    return {"i": point["i"], **({"features": found["features"]} if "features" in found else
                                {"skipped": found.get("skipped", "")})}


def compile_all(prepared: Path, out: Path, jobs: int) -> None:
    import triton

    out.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(jobs) as pool:
        for path in datasets():
            source = prepared / path.name
            if not source.exists():
                continue
            points = [json.loads(line) for line in source.read_text().splitlines()]
            read = list(pool.map(_read, points, chunksize=2))
            (out / path.name).write_text(json.dumps({"triton": triton.__version__, "points": read}) + "\n")
            print(f"{path.name}: {sum('features' in r for r in read)} read, "
                  f"{sum('skipped' in r for r in read)} skipped", flush=True)


def merge(out: Path) -> None:
    for path in datasets():
        source = out / path.name
        if not source.exists():
            continue
        read = json.loads(source.read_text())
        records = [json.loads(line) for line in path.read_text().splitlines()]
        changed = 0
        for point in read["points"]:
            if "features" in point:
                record = records[point["i"]]
                changed += record["features"]["resources"]["registers"] != point["features"]["resources"]["registers"]
                record["features"], record["features_from"] = point["features"], "device"
        path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
        print(f"{path.name}: {len(read['points'])} read on Triton {read['triton']}, {changed} with other registers than the cross-compile's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("prepare", "compile", "merge"))
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--jobs", type=int, default=16)
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(Path(args.dirs[0]))
    elif args.step == "compile":
        compile_all(Path(args.dirs[0]), Path(args.dirs[1]), args.jobs)
    else:
        merge(Path(args.dirs[0]))


if __name__ == "__main__":
    main()
