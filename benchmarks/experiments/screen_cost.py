"""Experiment: where a screen's device time goes (kt_cli/evaluate/timing.py EventTimer.screen), in one
process on the GPU with nothing else running (not part of kt).

The library's bf16 GEMM at 1000^3 and 4096^3 (a Triton config of the recipe's space), screened as kt
screens a candidate against a best it cannot reach: one watched call, the plain warm-up calls, one batch
of 5 samples by the problem's method. Each step of the timer is timed with the wall clock around it
(median of 10 screens), the batch split into the outputs' poisoning, queueing the samples, the device
finishing them, and the bootstrap.

    python screen_cost.py
"""
import statistics
import sys
import time

import torch

from common import ROOT, Bound, template

sys.path.insert(0, str(ROOT))
from kt_cli import plugins  # noqa: E402
from kt_cli.evaluate import timing  # noqa: E402

STEPS: dict = {}


def clocked(name, fn):
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            STEPS[name] = STEPS.get(name, 0.0) + time.perf_counter() - started
    return wrapper


def main():
    vendor = plugins.vendor("nvidia")
    device = vendor.detect_devices()[0]
    timer = vendor.timer(device)
    runtime = timer.runtime
    timer._take = clocked("take (queue + sync + read)", timer._take)
    runtime.synchronize = clocked("synchronize", runtime.synchronize)
    timing.summarize = clocked("summarize (bootstrap)", timing.summarize)
    timer._samplers = clocked("samplers (probe + capture)", timer._samplers)
    tmpl = template("matmul")
    params = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, PROGRAMS_PER_UNIT=0, TMA=0, UNITS=132)
    kmod = Bound(tmpl, {"num_warps": 4, "num_stages": 4})
    for size in (1000, 4096):
        a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)
        inputs = {"a": a, "b": b, "c": c}

        def launch():
            tmpl.launch(kmod, inputs, params)

        poison = clocked("poison (before_batch)", lambda: c.fill_(float("nan")))
        method = timer.choose_method(lambda: torch.matmul(a, b))
        walls, steps = [], []
        for _ in range(10):
            STEPS.clear()
            started = time.perf_counter()
            stats = timer.screen(launch, method, 1e-9, poison, launch)
            walls.append(time.perf_counter() - started)
            steps.append({**{f"timer: {k}": v for k, v in timer.last_steps.items()}, **STEPS})
        print(f"{size}^3 ({method}), screen {statistics.median(walls) * 1e3:.1f} ms, median {stats.median * 1e6:.1f} us,"
              f" raced out {stats.raced_out}", flush=True)
        for key in steps[0]:
            print(f"  {key:34s} {statistics.median(s.get(key, 0) for s in steps) * 1e3:8.2f} ms", flush=True)


if __name__ == "__main__":
    main()
