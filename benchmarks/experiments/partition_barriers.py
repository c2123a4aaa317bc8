"""Where Triton puts partition-wide barriers (`bar.sync 0`) into a Gluon partition of two warpgroups on
sm_90: the reason the library attention has no FlashAttention-3 ping-pong between the two warpgroups of
one consumer partition (docs/library.md, attention). Each case is a minimal Gluon kernel of 8 warps
cross-compiled for sm_90 (no GPU needed); the table gives the `bar.sync` instructions inside its loop.
A ping-pong needs none: warpgroup 1 must be able to run half an iteration behind warpgroup 0.

    python benchmarks/experiments/partition_barriers.py

Results (2026-11-29, thirtieth session; BENCHMARKS.md): Triton 3.9 puts one after every wgmma wait (3.6
none); both put one before every mbarrier arrival (Hopper's one-thread arrive and the cp.async arrive of
every thread alike) and before each wait on an mbarrier allocation already waited on since the last
barrier (the two waits: two).
"""
from __future__ import annotations

import re

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, warpgroup_mma, warpgroup_mma_wait

# Gluon's explicit barrier of the whole partition: `barrier` in Triton 3.9, `thread_barrier` in 3.6
_BARRIER = getattr(gl, "barrier", None) or gl.thread_barrier
CASES = {0: "wgmma, then wait for it", 1: "mbarrier.arrive (one thread)", 2: "cp.async arrive (every thread)",
         3: "mbarrier.wait on one allocation, twice"}


@gluon.jit
def _loop_kernel(out, n, CASE: gl.constexpr):
    bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(2):
        mbarrier.init(bars.index(i), count=1)
    _BARRIER()  # the inits seen by every thread before the loop: no barrier in it is owed to them
    a = gl.allocate_shared_memory(gl.bfloat16, [128, 64], gl.NVMMASharedLayout.get_default_for([128, 64], gl.bfloat16))
    b = gl.allocate_shared_memory(gl.bfloat16, [64, 64], gl.NVMMASharedLayout.get_default_for([64, 64], gl.bfloat16))
    layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[8, 1], instr_shape=[16, 64, 16])
    acc = gl.zeros([128, 64], gl.float32, layout)
    for j in range(n):
        if CASE == 0:
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(warpgroup_mma(a, b, acc, is_async=True), ))
        elif CASE == 1:
            mbarrier.arrive(bars.index(j % 2), count=1)
        elif CASE == 2:
            async_copy.mbarrier_arrive(bars.index(j % 2), increment_count=False)
        else:
            mbarrier.wait(bars.index(j % 2), j & 1)
            mbarrier.wait(bars.index(j % 2), j & 1)
        acc = acc * 0.5
    rows = gl.arange(0, 128, gl.SliceLayout(1, layout))[:, None]
    gl.store(out + rows * 64 + gl.arange(0, 64, gl.SliceLayout(0, layout))[None, :], acc)


def loop_barriers(case: int) -> int:
    """`bar.sync` instructions inside the loop of case `case`, compiled for sm_90 with 8 warps."""
    source = GluonASTSource(_loop_kernel, {"out": "*fp32", "n": "i32", "CASE": "constexpr"}, {"CASE": case}, {})
    ptx = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 8}).asm["ptx"]
    body = ptx[ptx.index("Loop Header"):]
    body = body[:body.index("._crit_edge")] if "._crit_edge" in body else body
    return len(re.findall(r"\bbar\.sync\s", body))


def main() -> None:
    print(f"Triton {triton.__version__}, sm_90, one partition of 8 warps (two warpgroups)")
    for case, what in CASES.items():
        print(f"{what:>42}: {loop_barriers(case)} bar.sync in the loop")


if __name__ == "__main__":
    main()
