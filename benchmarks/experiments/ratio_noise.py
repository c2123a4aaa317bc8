"""Issue 16, exploration: why a full timing of an 8192^3 GEMM samples to the 2-second cap. kt's EventTimer
times a library matmul config interleaved with cuBLAS, ranked by the ratio, as a full timing does
(measure_interleaved, ranked_by="ratio"), with every sample pair kept, while nvidia-smi logs the SM clock
and the power draw every 20 ms. Prints, per config: pairs, the ratio's median and its interval, the
spread of the ratios and of each series, and how the ratio follows the clock.

    python benchmarks/experiments/ratio_noise.py --json OUT.json [--seconds 3] [--preheat 1.5]
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CONFIGS = [dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, TMA=0, GLUON=0, PROGRAMS_PER_UNIT=0,
                num_warps=8, num_stages=3),
           dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, TMA=0, GLUON=0, PROGRAMS_PER_UNIT=0,
                num_warps=8, num_stages=4),
           dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, TMA=0, GLUON=0, PROGRAMS_PER_UNIT=0,
                num_warps=4, num_stages=4)]


def recorded_sampling():
    """Wrap timing.sample_until_tight so that every batch's samples are kept (list of series), and the
    function that puts the original back."""
    from kt_cli.evaluate import timing

    kept: list[list[float]] = []
    original = timing.sample_until_tight

    def wrapper(sample_batch, *args, **kwargs):
        def batch(n):
            out = sample_batch(n)
            for i, new in enumerate(out):
                kept.extend([] for _ in range(i + 1 - len(kept)))
                kept[i].extend(new)
            return out
        return original(batch, *args, **kwargs)

    timing.sample_until_tight = wrapper

    def restore():
        timing.sample_until_tight = original
    return kept, restore


def main():
    import torch

    from common import Bound, template
    from kt_cli import plugins
    from kt_cli.evaluate.timing import EventTimer

    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--preheat", type=float, default=0.0,
                        help="seconds of cuBLAS back to back before each config's timing (the board near its cap)")
    args = parser.parse_args()
    n = args.size
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    c_ref = torch.empty_like(c)
    tmpl = template("matmul")
    runtime = plugins.vendor("nvidia").runtime()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu",
                            "--format=csv,noheader,nounits", "-lms", "20"], stdout=subprocess.PIPE, text=True)
    rows = []
    for params in CONFIGS:
        bound = Bound(tmpl, {"num_warps": params["num_warps"]})
        launch_params = {**params, "UNITS": torch.cuda.get_device_properties(0).multi_processor_count}

        def kernel():
            tmpl.launch(bound, {"a": a, "b": b, "c": c}, launch_params)

        def baseline():
            torch.matmul(a, b, out=c_ref)

        kernel()
        torch.cuda.synchronize()
        heat_until = time.perf_counter() + args.preheat
        while time.perf_counter() < heat_until:
            for _ in range(20):
                baseline()
            torch.cuda.synchronize()
        timer = EventTimer(runtime, flush_bytes=2 * torch.cuda.get_device_properties(0).L2_cache_size,
                           max_seconds=args.seconds)
        kept, restore = recorded_sampling()
        began = time.time()
        stats = timer.measure_interleaved([kernel, baseline], "events", ranked_by="ratio", max_samples=100000)
        ended = time.time()
        restore()
        k, r = kept[0], kept[1]
        ratios = [x / y for x, y in zip(k, r)]
        rows.append({"params": params, "began": began, "ended": ended, "kernel": k, "baseline": r,
                     "ratio_stats": stats[-1].to_json(), "kernel_stats": stats[0].to_json()})
        q = statistics.quantiles(ratios, n=20)
        print(f'{params["BLOCK_M"]}x{params["BLOCK_N"]}x{params["BLOCK_K"]} w{params["num_warps"]}: {len(k)} pairs in '
              f'{ended - began:.2f} s; ratio median {statistics.median(ratios):.4f} ci ±{stats[-1].rel_ci * 100:.2f}% '
              f'precise {stats[-1].precise}; ratio p5-p95 {q[0]:.3f}-{q[-1]:.3f}; kernel p5-p95 '
              f'{statistics.quantiles(k, n=20)[0] * 1e3:.3f}-{statistics.quantiles(k, n=20)[-1] * 1e3:.3f} ms; '
              f'cuBLAS {statistics.quantiles(r, n=20)[0] * 1e3:.3f}-{statistics.quantiles(r, n=20)[-1] * 1e3:.3f} ms',
              flush=True)
    smi.terminate()
    log = smi.communicate()[0].strip().splitlines()
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "smi": log}))


if __name__ == "__main__":
    main()
