"""Experiment: why a long row walked in blocks twice beats one block that holds it (not part of kt).

softmax 3072 x 20480 bf16 (the seventh held-out run, s36g): the best config walks each row in 4096-wide blocks
twice on 4 warps (the second pass re-reads the row from L2); the cost model estimated it 1.9x its favourite,
one 32768-wide block on 16 warps (measured 1.19x the best). Each config runs once after a warm-up, for Nsight
Compute to read (run under `ncu --kernel-name softmax_kernel --launch-skip 1 --launch-count 1 ...`)."""
import sys

import torch
import triton

from common import template

CONFIGS = {"best_4096_w4": (4096, 4, 1, 1), "fav_32768_w16": (32768, 16, 1, 1), "b8192_w16": (8192, 16, 1, 1),
           "b16384_w8": (16384, 8, 1, 1)}


def main(name: str) -> None:
    block, warps, rows, stages = CONFIGS[name]
    tmpl = template("softmax")
    m, n = 3072, 20480
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16) * 3
    y = torch.empty_like(x)
    single = block >= n
    r = rows if single else 1
    for _ in range(2):
        tmpl.softmax_kernel[(triton.cdiv(m, r),)](y, x, m, n, x.stride(0), y.stride(0), BLOCK_N=block,
                                                  SINGLE_PASS=single, ROWS=r, ROW_STAGES=stages, num_warps=warps,
                                                  num_stages=1)
    torch.cuda.synchronize()
    err = (y.float() - torch.softmax(x.float(), -1)).abs().max().item()
    print(name, "max error", err)


if __name__ == "__main__":
    main(sys.argv[1])
