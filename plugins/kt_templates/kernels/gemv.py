"""y = A @ x, A row-major M x N, fp32 accumulation. Each program owns BLOCK_M rows and streams them in
BLOCK_M x BLOCK_N tiles (x is re-read from L2). Rows past M are clamped to the last row instead of
masked, so loads stay unmasked unless N is ragged; only the store is masked."""

import torch
import triton
import triton.language as tl

OUTPUTS = ("y",)
SPACE = {
    "BLOCK_M": [1, 2, 4, 8, 16, 32],
    "BLOCK_N": [128, 256, 512, 1024, 2048],
    "num_warps": [1, 2, 4, 8, 16],
    "num_stages": [1, 2, 3, 4],
}
CONSTRAINTS = [
    "BLOCK_M * BLOCK_N >= 256 * num_warps",  # at least 8 elements a thread: 16-byte loads in bf16
    "BLOCK_M * BLOCK_N // (32 * num_warps) <= 64",  # fp32 accumulator registers per thread
    "BLOCK_M <= M and BLOCK_N <= 2 * N",
]
VERIFY_SHAPES = [{"M": 37, "N": 300}, {"M": 64, "N": 256}, {"M": 5, "N": 1000}]


@triton.jit
def gemv_kernel(y_ptr, a_ptr, x_ptr, m, n, stride_a, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                EVEN_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    a_rows = a_ptr + tl.minimum(rows, m - 1).to(tl.int64)[:, None] * stride_a
    offs = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(0, n, BLOCK_N):
        cols = start + offs
        if EVEN_N:
            a = tl.load(a_rows + cols[None, :], eviction_policy="evict_first")
            x = tl.load(x_ptr + cols, eviction_policy="evict_last")
        else:
            a = tl.load(a_rows + cols[None, :], mask=cols[None, :] < n, other=0.0, eviction_policy="evict_first")
            x = tl.load(x_ptr + cols, mask=cols < n, other=0.0, eviction_policy="evict_last")
        acc += a.to(tl.float32) * x.to(tl.float32)[None, :]
    tl.store(y_ptr + rows, tl.sum(acc, axis=1).to(y_ptr.dtype.element_ty), mask=rows < m)


def make_inputs(shape, dtype, t):
    m, n = shape["M"], shape["N"]
    return {"a": t.randn(m, n, dtype=dtype), "x": t.randn(n, dtype=dtype), "y": t.empty(m, dtype=dtype)}


def reference(inputs):
    return {"y": inputs["a"].double() @ inputs["x"].double()}


def baseline(inputs):
    return torch.mv(inputs["a"], inputs["x"])


def launch(k, inputs, params):
    a, y = inputs["a"], inputs["y"]
    m, n = a.shape
    bm, bn = params["BLOCK_M"], params["BLOCK_N"]
    k.gemv_kernel[(triton.cdiv(m, bm),)](y, a, inputs["x"], m, n, a.stride(0), BLOCK_M=bm, BLOCK_N=bn,
                                         EVEN_N=n % bn == 0)


def flops(shape, dtype):
    return 2.0 * shape["M"] * shape["N"]


def bytes_moved(shape, dtype):
    return (shape["M"] * shape["N"] + shape["N"] + shape["M"]) * dtype.itemsize


def shape_of(inputs):
    m, n = inputs["a"].shape
    return {"M": m, "N": n}
