# one Gluon 1000^3 GEMM and one cuBLAS call, for ncu
import sys
sys.path.insert(0, "benchmarks/experiments")
import torch
from common import Bound, template
tmpl = template("matmul")
a = torch.randn(1000, 1000, device="cuda", dtype=torch.bfloat16); b = torch.randn(1000, 1000, device="cuda", dtype=torch.bfloat16)
c = torch.empty(1000, 1000, device="cuda", dtype=torch.bfloat16)
p = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, PROGRAMS_PER_UNIT=2, TMA=1, GLUON=1, UNITS=132, num_stages=5)
k = Bound(tmpl, {"num_warps": 4})
for _ in range(3):
    tmpl.launch(k, {"a": a, "b": b, "c": c}, p); torch.matmul(a, b)
torch.cuda.synchronize()
