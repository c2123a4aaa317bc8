"""y = A @ x for a sparse N x N matrix A in CSR form (int32 row_ptr and col_idx), fp32 accumulation.
Each program owns BLOCK_M rows and walks their non-zeros BLOCK_K at a time as one [BLOCK_M, BLOCK_K]
tile, so a warp reads consecutive non-zeros of neighbouring rows (coalesced) and gathers x.
The problem has NNZ_PER_ROW non-zeros in every row at random (sorted) columns; the kernel itself takes
any CSR matrix (the chunk loop runs to the longest row of the block)."""

import torch
import triton
import triton.language as tl

OUTPUTS = ("y",)
SPACE = {
    "BLOCK_M": [16, 32, 64, 128, 256, 512],
    "BLOCK_K": [4, 8, 16, 32],
    "num_warps": [1, 2, 4, 8, 16],
    "num_stages": [1, 2, 3],
}
CONSTRAINTS = [
    "BLOCK_M * BLOCK_K >= 32 * num_warps",  # every thread holds at least one non-zero
    "BLOCK_M * BLOCK_K // (32 * num_warps) <= 32",  # three gathered tiles live at once: registers
    "BLOCK_K <= 2 * NNZ_PER_ROW",
]
VERIFY_SHAPES = [{"N": 1000, "NNZ_PER_ROW": 7}, {"N": 37, "NNZ_PER_ROW": 3}, {"N": 256, "NNZ_PER_ROW": 16}]


@triton.jit
def spmv_kernel(y_ptr, row_ptr, col_ptr, val_ptr, x_ptr, n_rows, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    in_rows = rows < n_rows
    start = tl.load(row_ptr + rows, mask=in_rows, other=0)
    end = tl.load(row_ptr + rows + 1, mask=in_rows, other=0)
    acc = tl.zeros([BLOCK_M], tl.float32)
    for k in range(0, tl.max(end - start, axis=0), BLOCK_K):
        idx = start[:, None] + k + tl.arange(0, BLOCK_K)[None, :]
        mask = idx < end[:, None]
        cols = tl.load(col_ptr + idx, mask=mask, other=0, eviction_policy="evict_first")
        vals = tl.load(val_ptr + idx, mask=mask, other=0.0, eviction_policy="evict_first")
        xs = tl.load(x_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last")
        acc += tl.sum(vals.to(tl.float32) * xs.to(tl.float32), axis=1)
    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=in_rows)


def make_inputs(shape, dtype, t):
    n, per_row = shape["N"], shape["NNZ_PER_ROW"]
    # Column indices come from the seeded factory on the device: drawing and sorting 2^26 of them on the
    # host took 19 s on a 2-core machine, for every trial. On meta tensors the same ops only give sizes.
    cols = t.randint(0, n, n, per_row, dtype=torch.int64).sort(dim=1).values
    return {
        "row_ptr": torch.arange(0, n * per_row + 1, per_row, dtype=torch.int32, device=cols.device),
        "col_idx": cols.to(torch.int32).reshape(-1),
        "values": t.randn(n * per_row, dtype=dtype),
        "x": t.randn(n, dtype=dtype),
        "y": t.empty(n, dtype=dtype),
    }


def csr_matvec(row_ptr, col_idx, values, x):
    """Reference y = A @ x for any CSR matrix (in the dtype of `values` and `x`)."""
    rows = torch.repeat_interleave(torch.arange(row_ptr.numel() - 1, device=x.device), row_ptr.diff().long())
    return torch.zeros_like(x).index_add_(0, rows, values * x[col_idx.long()])


def reference(inputs):
    return {"y": csr_matvec(inputs["row_ptr"], inputs["col_idx"], inputs["values"].double(), inputs["x"].double())}


def baseline(inputs):
    n = inputs["x"].numel()
    a = torch.sparse_csr_tensor(inputs["row_ptr"], inputs["col_idx"], inputs["values"], (n, n))
    return torch.mv(a, inputs["x"])


def launch(k, inputs, params):
    y = inputs["y"]
    n, bm = y.numel(), params["BLOCK_M"]
    k.spmv_kernel[(triton.cdiv(n, bm),)](y, inputs["row_ptr"], inputs["col_idx"], inputs["values"], inputs["x"], n,
                                         BLOCK_M=bm, BLOCK_K=params["BLOCK_K"])


def flops(shape, dtype):
    return 2.0 * shape["N"] * shape["NNZ_PER_ROW"]


def bytes_moved(shape, dtype):
    """Values and column indices once, row_ptr once, x once (the gathers hit cache), y once."""
    n, nnz = shape["N"], shape["N"] * shape["NNZ_PER_ROW"]
    return nnz * (dtype.itemsize + 4.0) + (n + 1) * 4.0 + 2.0 * n * dtype.itemsize


def shape_of(inputs):
    n, nnz = inputs["x"].numel(), inputs["col_idx"].numel()
    return {"N": n, "NNZ_PER_ROW": nnz // n}
