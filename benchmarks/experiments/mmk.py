"""Experiment: fixed vs per-K-step cost of the GEMM template at M = N = 1000 (not part of kt)."""
import torch
import triton

from common import Bound, template

tmpl = template("matmul")

configs = {"tma128": (dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, PROGRAMS_PER_UNIT=1, TMA=1,
                           UNITS=132), {"num_warps": 4, "num_stages": 3}),
           "plain128x64": (dict(BLOCK_M=128, BLOCK_N=64, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, PROGRAMS_PER_UNIT=0, TMA=0,
                                UNITS=132), {"num_warps": 4, "num_stages": 4}),
           # the warp-specialized Gluon kernel (its ring's depth is its own num_stages argument, from the params)
           "gluon128": (dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, PROGRAMS_PER_UNIT=2, TMA=1,
                             GLUON=1, UNITS=132, num_stages=5), {"num_warps": 4}),
           "gluon64x128": (dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, PROGRAMS_PER_UNIT=2, TMA=1,
                                GLUON=1, UNITS=132, num_stages=4), {"num_warps": 4})}
for mn in (1000, 1024):
    for kk in (64, 256, 1000, 1024, 2000, 4000):
        a = torch.randn(mn, kk, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(kk, mn, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(mn, mn, device="cuda", dtype=torch.bfloat16)
        t_ref = triton.testing.do_bench_cudagraph(lambda: torch.matmul(a, b), rep=100)
        line = f"M=N={mn} K={kk}: cuBLAS {t_ref*1e3:.2f} us"
        for name, (params, opts) in configs.items():
            kmod = Bound(tmpl, opts)
            inputs = {"a": a, "b": b, "c": c}
            t = triton.testing.do_bench_cudagraph(lambda: tmpl.launch(kmod, inputs, params), rep=100)
            line += f" | {name} {t*1e3:.2f} us"
        print(line, flush=True)
empty = triton.testing.do_bench_cudagraph(lambda: torch.empty(0, device="cuda").add_(1), rep=100)
print(f"an empty elementwise kernel: {empty*1e3:.2f} us")
