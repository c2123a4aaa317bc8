"""Row-wise LayerNorm (weight, bias, eps 1e-5). A row that fits one block is read once, ROWS rows a
program (weight and bias re-read from L2 for each): with ROW_STAGES > 1 the next rows' loads are issued
while the current row is reduced. A longer row takes two passes, one row a program: fp32 shifted sums
(the shift by the row's first element keeps sum-of-squares from cancelling when |mean| >> std), then
normalize, the second read served from L2."""

import torch
import triton
import triton.language as tl

EPS = 1e-5
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
    # the best measured on an H100: whole rows one a program (4096 wide: 8 warps; 32768 wide: 16)
    {"BLOCK_N": n, "ROWS": 1, "ROW_STAGES": 1, "num_warps": w, "num_stages": 1} for n, w in ((4096, 8), (32768, 16))]
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
def layernorm_kernel(y_ptr, x_ptr, w_ptr, b_ptr, n_rows, n_cols, stride_x, stride_y, eps,
                     BLOCK_N: tl.constexpr, SINGLE_PASS: tl.constexpr, EVEN_N: tl.constexpr, ROWS: tl.constexpr,
                     ROW_STAGES: tl.constexpr):
    offs = tl.arange(0, BLOCK_N)
    if SINGLE_PASS:
        in_row = offs < n_cols
        for r in tl.range(0, ROWS, num_stages=ROW_STAGES):
            # past the last row, the last program redoes the last row (same values): no row mask
            row = tl.minimum(tl.program_id(0).to(tl.int64) * ROWS + r, n_rows - 1)
            if EVEN_N:
                x = tl.load(x_ptr + row * stride_x + offs).to(tl.float32)
            else:
                x = tl.load(x_ptr + row * stride_x + offs, mask=in_row, other=0.0).to(tl.float32)
            mean = tl.sum(x, axis=0) * (1.0 / n_cols)
            d = tl.where(in_row, x - mean, 0.0)
            rstd = tl.rsqrt(tl.sum(d * d, axis=0) * (1.0 / n_cols) + eps)
            # weight and bias are read (from L2) once the row's statistics are known and stay in their
            # own dtype until the last multiply-add: loaded first as fp32 they took twice the row's
            # registers (on an H100, 4096 x 32768 bf16: 72% of copy loaded first, 96.5% loaded last)
            w = tl.load(w_ptr + offs, mask=in_row, other=0.0)
            b = tl.load(b_ptr + offs, mask=in_row, other=0.0)
            y = (d * rstd * w.to(tl.float32) + b.to(tl.float32)).to(y_ptr.dtype.element_ty)
            if EVEN_N:
                tl.store(y_ptr + row * stride_y + offs, y)
            else:
                tl.store(y_ptr + row * stride_y + offs, y, mask=in_row)
    else:
        row = tl.program_id(0).to(tl.int64)
        x_row = x_ptr + row * stride_x
        y_row = y_ptr + row * stride_y
        shift = tl.load(x_row).to(tl.float32)
        s = tl.zeros([BLOCK_N], tl.float32)
        ss = tl.zeros([BLOCK_N], tl.float32)
        for start in range(0, n_cols, BLOCK_N):
            if EVEN_N:
                d = tl.load(x_row + start + offs, eviction_policy="evict_last").to(tl.float32) - shift
            else:
                mask = start + offs < n_cols
                x = tl.load(x_row + start + offs, mask=mask, other=0.0, eviction_policy="evict_last")
                d = tl.where(mask, x.to(tl.float32) - shift, 0.0)
            s += d
            ss += d * d
        mean_d = tl.sum(s, axis=0) / n_cols
        var = tl.maximum(tl.sum(ss, axis=0) / n_cols - mean_d * mean_d, 0.0)
        mean = shift + mean_d
        rstd = 1.0 / tl.sqrt(var + eps)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + offs
            if EVEN_N:
                x = tl.load(x_row + cols, eviction_policy="evict_first").to(tl.float32)
                w = tl.load(w_ptr + cols).to(tl.float32)
                b = tl.load(b_ptr + cols).to(tl.float32)
                tl.store(y_row + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty))
            else:
                mask = cols < n_cols
                x = tl.load(x_row + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
                w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
                b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
                tl.store(y_row + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


def make_inputs(shape, dtype, t):
    m, n = shape["M"], shape["N"]
    return {"x": t.randn(m, n, dtype=dtype, scale=2.0), "w": t.rand(n, dtype=dtype, low=0.5, high=1.5),
            "b": t.randn(n, dtype=dtype, scale=0.5), "y": t.empty(m, n, dtype=dtype)}


def reference(inputs):
    x = inputs["x"].double()
    return {"y": torch.nn.functional.layer_norm(x, x.shape[-1:], inputs["w"].double(), inputs["b"].double(), EPS)}


def baseline(inputs):
    x = inputs["x"]
    return torch.nn.functional.layer_norm(x, x.shape[-1:], inputs["w"], inputs["b"], EPS)


def launch(k, inputs, params):
    x, y = inputs["x"], inputs["y"]
    n_rows, n_cols = x.shape
    block, rows = params["BLOCK_N"], params.get("ROWS", 1) if params["BLOCK_N"] >= n_cols else 1
    k.layernorm_kernel[(triton.cdiv(n_rows, rows),)](y, x, inputs["w"], inputs["b"], n_rows, n_cols, x.stride(0),
                                                     y.stride(0), EPS, BLOCK_N=block, SINGLE_PASS=block >= n_cols,
                                                     EVEN_N=n_cols % block == 0, ROWS=rows,
                                                     ROW_STAGES=params.get("ROW_STAGES", 1))


def flops(shape, dtype):
    return 8.0 * shape["M"] * shape["N"]


def bytes_moved(shape, dtype):
    return (2.0 * shape["M"] + 2.0) * shape["N"] * dtype.itemsize


def traffic(shape, dtype, params):
    """A row longer than one block is read twice (the second read may hit L2)."""
    passes = 2 if params["BLOCK_N"] < shape["N"] else 1
    return (passes + 1.0) * shape["M"] * shape["N"] * dtype.itemsize + 2.0 * shape["N"] * dtype.itemsize


def work_items(shape, dtype, params):
    """Rows: a program walks its ROWS rows one after another (the cost model: one row's loads in flight)."""
    return float(shape["M"])


def shape_of(inputs):
    m, n = inputs["x"].shape
    return {"M": m, "N": n}
