"""The stability figure of an existing artifact: each problem's best config re-measured in fresh worker
processes (a fresh candidate worker and judge each time, kt's own measured protocol), as run.py does
after a tune. Prints each process's median, its ratio to the baseline op and the timing method.

    python benchmarks/stability.py out/softmax.kt --processes 10 --shapes 2
"""
import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import stability  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("artifact")
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--shapes", type=int, default=1)
    parser.add_argument("--json")
    args = parser.parse_args()
    def progress(rows):
        print(f"{rows[-1]['shape']}: {len(rows[-1]['medians'])} processes, last {rows[-1]['medians'][-1] * 1e6:.1f} us, "
              f"x baseline {rows[-1]['ratios'][-1]:.3f}", flush=True)

    rows = stability(args.artifact, args.processes, args.shapes, progress)
    for row in rows:
        medians = ", ".join(f"{m * 1e6:.1f}" for m in row["medians"])
        ratios = ", ".join(f"{r:.3f}" for r in row["ratios"])
        print(f"{row['shape']} ({row.get('method')}): medians us [{medians}] spread {row['spread']:.1%}; "
              f"x baseline [{ratios}] spread {row['ratio_spread']:.1%}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    main()
