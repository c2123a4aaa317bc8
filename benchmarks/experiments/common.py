"""What the experiments share: timing, the library's kernel modules, launches with kt's options."""
import importlib
import sys
from pathlib import Path

import torch
import triton

ROOT = Path(__file__).resolve().parents[2]


def bench(fn, rep: int = 400) -> float:
    """Milliseconds per call (median, L2 flushed between calls), after one warm-up call."""
    fn()
    torch.cuda.synchronize()
    return triton.testing.do_bench(fn, warmup=50, rep=rep)


def time_ms(fn, reps: int = 5, warmups: int = 1) -> float:
    """Milliseconds of one call by CUDA events, the median of `reps` after `warmups` calls (no L2 flush:
    for kernels that are timed on warm data on purpose)."""
    for _ in range(warmups):
        fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def profiled_once(fn) -> None:
    """Compile and run `fn` once, then run it once more between cudaProfilerStart and Stop: the launch
    `ncu --profile-from-start off` reads."""
    import torch

    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def template(name: str):
    """The kernel module of kt's library kernel `name` (plugins/kt_templates/kernels)."""
    sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]
    return importlib.import_module(f"kt_templates.kernels.{name}")


class Bound:
    """A kernel module whose launches all get the given launch options, as kt adds them."""

    def __init__(self, module, options: dict):
        self.module, self.options = module, options

    def __getattr__(self, name):
        fn, options = getattr(self.module, name), self.options

        class Grid:
            def __getitem__(self, grid):
                return lambda *args, **kwargs: fn[grid](*args, **kwargs, **options)
        return Grid()
