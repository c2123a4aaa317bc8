"""Experiment (not part of kt): Triton's autotune on the tutorial's 8 configs as a script run from a fresh
process pays it: Python's start, torch's and Triton's imports, a CUDA context, the inputs, then the tuning
call. Prints each step's end in seconds after T0 (the command's start, given by the shell), beside the
tuning wall benchmarks/run.py reports (its process has all of that done before it times autotune).

    T0=$(date +%s.%N); python benchmarks/experiments/autotune_fresh.py --t0 $T0 --size 8192 [--json FILE]

With --json it then times the config it chose (kt's timer, as benchmarks/anchors.py does) and appends one
line to FILE: the problem's shape key, that median and the seconds from T0 to the tuning's end, which
cli_first_results.py --autotune reads.
"""

import argparse
import sys
import time
from pathlib import Path

marks = {}
parser = argparse.ArgumentParser()
parser.add_argument("--t0", type=float, required=True)
parser.add_argument("--size", type=int, default=8192)
parser.add_argument("--json")
args = parser.parse_args()
marks["python and argparse"] = time.time()
import torch  # noqa: E402

marks["torch imported"] = time.time()
sys.path[:0] = [str(Path(__file__).resolve().parents[1])]
from anchors import autotuned_matmul  # noqa: E402  (imports triton)

import triton  # noqa: E402

marks["triton and the autotuned kernel"] = time.time()
a = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
b = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
c = torch.empty_like(a)
torch.cuda.synchronize()
marks["CUDA context and inputs"] = time.time()
m = n = k = args.size
grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)  # noqa: E731
autotuned_matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
torch.cuda.synchronize()
marks["autotune's first call (tuning) returned"] = time.time()
print(f"{args.size}^3, best {autotuned_matmul.best_config}: " +
      "; ".join(f"{name} {stamp - args.t0:.2f} s" for name, stamp in marks.items()))
if args.json:
    import json

    from anchors import _timer  # noqa: E402

    stats = _timer().measure(lambda: autotuned_matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                                            b.stride(1), c.stride(0), c.stride(1)))
    line = {"shape": f"M={m},N={n},K={k}", "autotune": {
        "median_s": stats.median, "tuning_wall_s": marks["autotune's first call (tuning) returned"] - args.t0}}
    with open(args.json, "a") as f:
        f.write(json.dumps(line) + "\n")
