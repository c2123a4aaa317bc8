"""Row-wise RMSNorm (weight, eps 1e-6). A row that fits one block is read once, ROWS rows a program
(the weight re-read from L2 for each): with ROW_STAGES > 1 the next rows' loads are issued while the
current row is reduced. A longer row takes two passes, one row a program: an fp32 sum of squares, then
scale, the second read served from L2."""

import torch
import triton
import triton.language as tl

EPS = 1e-6
OUTPUTS = ("y",)
SPACE = {
    "BLOCK_N": [256, 512, 1024, 2048, 4096, 8192, 16384, 32768],
    "num_warps": [1, 2, 4, 8, 16, 32],
    "num_stages": [1, 2, 3, 4],
    "ROWS": [1, 2, 4, 8],
    "ROW_STAGES": [1, 2, 3],
}
CONSTRAINTS = [
    "ROWS == 1 or BLOCK_N >= N",  # the two-pass path takes one row a program
    "ROW_STAGES == 1 or ROWS > 1",  # nothing to prefetch with one row
    "(ROW_STAGES - 1) * BLOCK_N * dtype_bytes <= smem_bytes",
    "BLOCK_N >= 32 * num_warps",  # every thread holds at least one element
    "BLOCK_N // (32 * num_warps) <= 64",  # at most 64 fp32 values a thread: no spills
    "BLOCK_N <= 2 * N",  # a block far wider than the row only wastes lanes
]
# Evaluated first in a new study where they fit the problem: whole rows, several a program, prefetched.
SEEDS = [{"BLOCK_N": n, "ROWS": 4, "ROW_STAGES": 2, "num_warps": 16 if n >= 16384 else 8, "num_stages": 1}
         for n in (4096, 8192, 32768)] + [
    # the best measured on an H100: 4096-wide rows whole, 8 warps; 32768-wide rows in two passes of
    # 8192-wide blocks over 32 warps (the second pass reads from L2)
    {"BLOCK_N": 4096, "ROWS": 1, "ROW_STAGES": 1, "num_warps": 8, "num_stages": 1},
    {"BLOCK_N": 8192, "ROWS": 1, "ROW_STAGES": 1, "num_warps": 32, "num_stages": 2}]
VERIFY_SHAPES = [{"M": 37, "N": 300}, {"M": 5, "N": 1000}, {"M": 4, "N": 512}]
# What launch computes per call, as expressions of the kernel's arguments: `kt export` gives them as
# @triton.heuristics and the grid, and checks them against launch at every problem the artifact names.
HEURISTICS = {
    "SINGLE_PASS": "BLOCK_N >= n_cols",
    "EVEN_N": "n_cols % BLOCK_N == 0",
    "ROWS": "ROWS if BLOCK_N >= n_cols else 1",  # the two-pass path takes one row a program
}
GRID = "(triton.cdiv(n_rows, ROWS),)"


@triton.jit
def rmsnorm_kernel(y_ptr, x_ptr, w_ptr, n_rows, n_cols, stride_x, stride_y, eps,
                   BLOCK_N: tl.constexpr, SINGLE_PASS: tl.constexpr, EVEN_N: tl.constexpr, ROWS: tl.constexpr,
                   ROW_STAGES: tl.constexpr):
    offs = tl.arange(0, BLOCK_N)
    if SINGLE_PASS:
        for r in tl.range(0, ROWS, num_stages=ROW_STAGES):
            # the weight is re-read per row (from L2): held across rows it takes as many registers as
            # the row itself (layernorm's weight and bias, held that way, ran 1.4-1.9x slower at 32768
            # columns on an H200)
            w = tl.load(w_ptr + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
            # past the last row, the last program redoes the last row (same values): no row mask
            row = tl.minimum(tl.program_id(0).to(tl.int64) * ROWS + r, n_rows - 1)
            if EVEN_N:
                x = tl.load(x_ptr + row * stride_x + offs).to(tl.float32)
            else:
                x = tl.load(x_ptr + row * stride_x + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
            y = (x * (1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)) * w).to(y_ptr.dtype.element_ty)
            if EVEN_N:
                tl.store(y_ptr + row * stride_y + offs, y)
            else:
                tl.store(y_ptr + row * stride_y + offs, y, mask=offs < n_cols)
    else:
        row = tl.program_id(0).to(tl.int64)
        x_row = x_ptr + row * stride_x
        y_row = y_ptr + row * stride_y
        ss = tl.zeros([BLOCK_N], tl.float32)
        for start in range(0, n_cols, BLOCK_N):
            if EVEN_N:
                x = tl.load(x_row + start + offs, eviction_policy="evict_last").to(tl.float32)
            else:
                mask = start + offs < n_cols
                x = tl.load(x_row + start + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
            ss += x * x
        rrms = 1.0 / tl.sqrt(tl.sum(ss, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + offs
            if EVEN_N:
                x = tl.load(x_row + cols, eviction_policy="evict_first").to(tl.float32)
                w = tl.load(w_ptr + cols).to(tl.float32)
                tl.store(y_row + cols, (x * rrms * w).to(y_ptr.dtype.element_ty))
            else:
                mask = cols < n_cols
                x = tl.load(x_row + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
                w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
                tl.store(y_row + cols, (x * rrms * w).to(y_ptr.dtype.element_ty), mask=mask)


def make_inputs(shape, dtype, t):
    m, n = shape["M"], shape["N"]
    return {"x": t.randn(m, n, dtype=dtype, scale=2.0), "w": t.rand(n, dtype=dtype, low=0.5, high=1.5),
            "y": t.empty(m, n, dtype=dtype)}


def reference(inputs):
    x = inputs["x"].double()
    return {"y": x * torch.rsqrt(x.square().mean(-1, keepdim=True) + EPS) * inputs["w"].double()}


def baseline(inputs):
    x = inputs["x"]
    return torch.nn.functional.rms_norm(x, x.shape[-1:], inputs["w"], EPS)


def launch(k, inputs, params):
    x, y = inputs["x"], inputs["y"]
    n_rows, n_cols = x.shape
    block, rows = params["BLOCK_N"], params.get("ROWS", 1) if params["BLOCK_N"] >= n_cols else 1
    k.rmsnorm_kernel[(triton.cdiv(n_rows, rows),)](y, x, inputs["w"], n_rows, n_cols, x.stride(0), y.stride(0), EPS,
                                                   BLOCK_N=block, SINGLE_PASS=block >= n_cols,
                                                   EVEN_N=n_cols % block == 0, ROWS=rows,
                                                   ROW_STAGES=params.get("ROW_STAGES", 1))


def flops(shape, dtype):
    return 4.0 * shape["M"] * shape["N"]


def bytes_moved(shape, dtype):
    return (2.0 * shape["M"] + 1.0) * shape["N"] * dtype.itemsize


def traffic(shape, dtype, params):
    """A row longer than one block is read twice (the second read may hit L2)."""
    passes = 2 if params["BLOCK_N"] < shape["N"] else 1
    return (passes + 1.0) * shape["M"] * shape["N"] * dtype.itemsize + shape["N"] * dtype.itemsize


def work_items(shape, dtype, params):
    """Rows: a program walks its ROWS rows one after another (the cost model: one row's loads in flight)."""
    return float(shape["M"])


def shape_of(inputs):
    m, n = inputs["x"].shape
    return {"M": m, "N": n}
