"""Experiment: does the row stride (2000 bytes for a 1000-wide bf16 row, 2048 for 1024) make the
1000^3 GEMM slow? Times the Gluon kernel and cuBLAS at M = N = K = 1000 on contiguous tensors and on
views of buffers whose rows are 1024 (or 1008) elements apart, graph-replayed (not part of kt). Then
which operand's pitch costs it: A, B and C each at 1000 or 1024 elements apart."""
import torch
import triton

from common import Bound, template

tmpl = template("matmul")
configs = {"gluon128": (dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, PROGRAMS_PER_UNIT=2, TMA=1,
                             GLUON=1, UNITS=132, num_stages=5), {"num_warps": 4}),
           "gluon64x128": (dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, PROGRAMS_PER_UNIT=2, TMA=1,
                                GLUON=1, UNITS=132, num_stages=4), {"num_warps": 4})}


def views(size: int, pitch_a: int, pitch_b: int, pitch_c: int):
    """A, B and C of size x size, each a view of a buffer whose rows lie its pitch (elements) apart."""
    def one(pitch, fill):
        return fill(size, pitch, device="cuda", dtype=torch.bfloat16)[:, :size]
    return one(pitch_a, torch.randn), one(pitch_b, torch.randn), one(pitch_c, torch.empty)


CASES = [(1000, 1000, 1000, 1000), (1000, 1008, 1008, 1008), (1000, 1024, 1024, 1024), (1024, 1024, 1024, 1024),
         # A, B, C rows apart: one operand at a time
         (1000, 1000, 1024, 1024), (1000, 1024, 1000, 1024), (1000, 1024, 1024, 1000), (1000, 1000, 1000, 1024)]
for size, pitch_a, pitch_b, pitch_c in CASES:
    a, b, c = views(size, pitch_a, pitch_b, pitch_c)
    ref = a.float() @ b.float()
    t_ref = triton.testing.do_bench_cudagraph(lambda: torch.matmul(a, b), rep=200)
    line = f"M=N=K={size}, rows of A, B, C {pitch_a}, {pitch_b}, {pitch_c} apart: cuBLAS {t_ref * 1e3:.2f} us"
    for name, (params, opts) in configs.items():
        kmod, inputs = Bound(tmpl, opts), {"a": a, "b": b, "c": c}
        tmpl.launch(kmod, inputs, params)
        err = float((c.float() - ref).abs().max() / ref.abs().max())
        t = triton.testing.do_bench_cudagraph(lambda: tmpl.launch(kmod, inputs, params), rep=200)
        line += f" | {name} {t * 1e3:.2f} us ({t_ref / t:.2f}x, err {err:.1e})"
    print(line, flush=True)
