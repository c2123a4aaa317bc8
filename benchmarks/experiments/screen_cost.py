"""Experiment: where a screen's device time goes (kt_cli/evaluate/timing.py EventTimer.screen), in one
process on the GPU with nothing else running (not part of kt).

The library's bf16 GEMM at 1000^3, 4096^3 and 8192^3 (a Triton config of the recipe's space), screened as
kt screens a candidate against a best it cannot reach: one watched call, the plain warm-up calls, one
batch of 5 samples by the problem's method, each paired with the baseline (torch.matmul on the same
tensors) and raced on their ratio. Each step of the timer is timed with the wall clock around it (median
of 10 screens), the batch split into the outputs' poisoning, queueing the samples, the device finishing
them, and the bootstrap. Two ways, alternating screen by screen in one timer: `kept`, the baseline as
kt's device worker passes it (timing.Reused: its graph captured once for the problem), and `fresh`, a
plain callable captured again at every screen (kt before the sixteenth session).

    python screen_cost.py [--json FILE]
"""
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from common import ROOT, Bound, template

sys.path.insert(0, str(ROOT))
from kt_cli import plugins  # noqa: E402
from kt_cli.evaluate import timing  # noqa: E402
from kt_cli.evaluate.timing import Reused  # noqa: E402

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
    results = {}
    for size in (1000, 4096, 8192):
        a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)
        inputs = {"a": a, "b": b, "c": c}

        def launch():
            tmpl.launch(kmod, inputs, params)

        poison = clocked("poison (before_batch)", lambda: c.fill_(float("nan")))
        kept = Reused(lambda: torch.matmul(a, b), ("matmul", size))
        method = timer.choose_method(kept)
        walls, steps = {"kept": [], "fresh": []}, {"kept": [], "fresh": []}
        for i in range(20):
            way = "kept" if i % 2 == 0 else "fresh"
            baseline = kept if way == "kept" else (lambda: torch.matmul(a, b))
            STEPS.clear()
            started = time.perf_counter()
            stats = timer.screen(launch, method, 1e-9, poison, launch, baseline, 1e-9)
            walls[way].append(time.perf_counter() - started)
            steps[way].append({**{f"timer: {k}": v for k, v in timer.last_steps.items()}, **STEPS})
        results[size] = {}
        for way in ("kept", "fresh"):
            median = {key: statistics.median(s.get(key, 0) for s in steps[way]) for key in steps[way][0]}
            results[size][way] = {"screen_s": statistics.median(walls[way]), "steps_s": median}
            print(f"{size}^3 ({method}), {way}: screen {statistics.median(walls[way]) * 1e3:.1f} ms, "
                  f"candidate median {stats.median * 1e6:.1f} us, raced out {stats.raced_out}", flush=True)
            for key, value in median.items():
                print(f"  {key:34s} {value * 1e3:8.2f} ms", flush=True)
    if "--json" in sys.argv:
        Path(sys.argv[sys.argv.index("--json") + 1]).write_text(json.dumps(results, indent=1))

if __name__ == "__main__":
    main()
