"""One conjugate-gradient iteration on a sparse SPD matrix in CSR form:

    Ap = A p;  alpha = (r.r) / (p.Ap);  x' = x + alpha p;  r' = r - alpha Ap;  beta = (r'.r') / (r.r);  p' = r' + beta p

Three kernels, no host synchronisation: (1) spmv with the dots p.Ap and r.r fused into its epilogue,
(2) the two axpys x', r' with the dot r'.r' fused, (3) the xpay p'. Dots accumulate per program and
are combined with fp32 atomics into a 3-float workspace; alpha and beta are read from it on the device.

The matrix is symmetric and strictly diagonally dominant with a positive diagonal (hence SPD): every
row i has the diagonal and the pairs (i + o, i - o) mod N for NNZ_PER_ROW // 2 random offsets o, with
random weights shared by each mirrored pair, so every row has exactly NNZ_PER_ROW non-zeros."""

import torch
import triton
import triton.language as tl

OUTPUTS = ("x_new", "r_new", "p_new")
SPACE = {
    "BLOCK_M": [32, 64, 128, 256, 512],
    "BLOCK_K": [4, 8, 16],
    "BLOCK": [1024, 2048, 4096, 8192],
    "num_warps": [2, 4, 8, 16],
    "num_stages": [1, 2, 3],
}
CONSTRAINTS = [
    "BLOCK_M * BLOCK_K >= 32 * num_warps",  # every thread holds at least one non-zero
    "BLOCK_M * BLOCK_K // (32 * num_warps) <= 32",  # three gathered tiles live at once: registers
    "BLOCK >= 128 * num_warps and BLOCK // (32 * num_warps) <= 32",  # vector kernels: 16-byte loads, registers
    "BLOCK_K <= 2 * NNZ_PER_ROW",
]
VERIFY_SHAPES = [{"N": 1000, "NNZ_PER_ROW": 7}, {"N": 37, "NNZ_PER_ROW": 5}, {"N": 512, "NNZ_PER_ROW": 9}]


@triton.jit
def cg_spmv_dot_kernel(ap_ptr, dots_ptr, row_ptr, col_ptr, val_ptr, p_ptr, r_ptr, n_rows,
                       BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
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
        ps = tl.load(p_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last")
        acc += tl.sum(vals.to(tl.float32) * ps.to(tl.float32), axis=1)
    tl.store(ap_ptr + rows, acc, mask=in_rows)
    p = tl.load(p_ptr + rows, mask=in_rows, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + rows, mask=in_rows, other=0.0).to(tl.float32)
    tl.atomic_add(dots_ptr, tl.sum(p * acc, axis=0))
    tl.atomic_add(dots_ptr + 1, tl.sum(r * r, axis=0))


@triton.jit
def cg_update_xr_kernel(x_new_ptr, r_new_ptr, dots_ptr, x_ptr, r_ptr, p_ptr, ap_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    alpha = tl.load(dots_ptr + 1) / tl.load(dots_ptr)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    ap = tl.load(ap_ptr + offs, mask=mask, other=0.0)
    tl.store(x_new_ptr + offs, (x + alpha * p).to(x_new_ptr.dtype.element_ty), mask=mask)
    r_new = (r - alpha * ap).to(r_new_ptr.dtype.element_ty)
    tl.store(r_new_ptr + offs, r_new, mask=mask)
    r_new = r_new.to(tl.float32)
    tl.atomic_add(dots_ptr + 2, tl.sum(r_new * r_new, axis=0))


@triton.jit
def cg_update_p_kernel(p_new_ptr, dots_ptr, r_new_ptr, p_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    beta = tl.load(dots_ptr + 2) / tl.load(dots_ptr + 1)
    r_new = tl.load(r_new_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(p_new_ptr + offs, (r_new + beta * p).to(p_new_ptr.dtype.element_ty), mask=mask)


def spd_csr(n: int, per_row: int, t, dtype):
    """row_ptr, col_idx (int32) and values of the SPD matrix described in the module docstring."""
    half = per_row // 2
    if per_row % 2 == 0 or n // 2 - 1 < half:
        raise ValueError(f"cg needs an odd NNZ_PER_ROW and N >= 2 * NNZ_PER_ROW + 2, not N={n}, NNZ_PER_ROW={per_row}")
    offsets = (torch.randperm(n // 2 - 1, generator=t.generator())[:half] + 1).to(t.device)
    weights = t.rand(half, n, dtype=torch.float32, low=0.1, high=1.0)  # weights[j, i]: edge (i, i + o_j)
    i = torch.arange(n, device=offsets.device)
    plus = (i[None, :] + offsets[:, None]) % n
    minus = (i[None, :] - offsets[:, None]) % n
    mirrored = torch.gather(weights, 1, minus)  # edge (i - o_j, i) carries the weight row i - o_j gave it
    diagonal = 1.0 + weights.sum(0) + mirrored.sum(0)
    cols = torch.cat([i[None, :], plus, minus]).t()
    vals = torch.cat([diagonal[None, :], -weights, -mirrored]).t()
    cols, order = cols.sort(dim=1)
    vals = torch.gather(vals, 1, order)
    row_ptr = torch.arange(0, n * per_row + 1, per_row, dtype=torch.int32, device=cols.device)
    return row_ptr, cols.to(torch.int32).reshape(-1), vals.to(dtype).reshape(-1)


def make_inputs(shape, dtype, t):
    n = shape["N"]
    row_ptr, col_idx, values = spd_csr(n, shape["NNZ_PER_ROW"], t, dtype)
    inputs = {"row_ptr": row_ptr, "col_idx": col_idx, "values": values}
    inputs.update({name: t.randn(n, dtype=dtype) for name in ("x", "r", "p")})
    inputs.update({name: t.empty(n, dtype=dtype) for name in OUTPUTS})
    return inputs


def _iteration(row_ptr, col_idx, values, x, r, p):
    rows = torch.repeat_interleave(torch.arange(row_ptr.numel() - 1, device=x.device), row_ptr.diff().long())
    ap = torch.zeros_like(p).index_add_(0, rows, values * p[col_idx.long()])
    rr = r.dot(r)
    alpha = rr / p.dot(ap)
    x_new, r_new = x + alpha * p, r - alpha * ap
    return {"x_new": x_new, "r_new": r_new, "p_new": r_new + (r_new.dot(r_new) / rr) * p}


def reference(inputs):
    i = inputs
    return _iteration(i["row_ptr"], i["col_idx"], i["values"].double(), i["x"].double(), i["r"].double(),
                      i["p"].double())


def baseline(inputs):
    """The same iteration as a user writes it with torch's CSR matrix-vector product."""
    i, n = inputs, inputs["x"].numel()
    a = torch.sparse_csr_tensor(i["row_ptr"], i["col_idx"], i["values"], (n, n))
    x, r, p = i["x"], i["r"], i["p"]
    ap = torch.mv(a, p)
    rr = r.dot(r)
    alpha = rr / p.dot(ap)
    x_new, r_new = x + alpha * p, r - alpha * ap
    return x_new, r_new, r_new + (r_new.dot(r_new) / rr) * p


def launch(k, inputs, params):
    i = inputs
    n = i["x"].numel()
    ap = torch.empty(n, dtype=torch.float32, device=i["x"].device)
    dots = torch.zeros(3, dtype=torch.float32, device=i["x"].device)  # p.Ap, r.r, r'.r'
    bm, block = params["BLOCK_M"], params["BLOCK"]
    k.cg_spmv_dot_kernel[(triton.cdiv(n, bm),)](ap, dots, i["row_ptr"], i["col_idx"], i["values"], i["p"], i["r"], n,
                                                BLOCK_M=bm, BLOCK_K=params["BLOCK_K"])
    grid = (triton.cdiv(n, block),)
    k.cg_update_xr_kernel[grid](i["x_new"], i["r_new"], dots, i["x"], i["r"], i["p"], ap, n, BLOCK=block)
    k.cg_update_p_kernel[grid](i["p_new"], dots, i["r_new"], i["p"], n, BLOCK=block)


def flops(shape, dtype):
    """spmv, three dots and three vector updates."""
    return 2.0 * shape["N"] * shape["NNZ_PER_ROW"] + 12.0 * shape["N"]


def bytes_moved(shape, dtype):
    """The matrix once, x, r, p read once, x', r', p' written once."""
    n, nnz = shape["N"], shape["N"] * shape["NNZ_PER_ROW"]
    return nnz * (dtype.itemsize + 4.0) + (n + 1) * 4.0 + 6.0 * n * dtype.itemsize


def traffic(shape, dtype, params):
    """Three kernels: Ap is written and read back (fp32), r and p are read again by the updates and
    r' is read back by the last one."""
    n = shape["N"]
    return bytes_moved(shape, dtype) + 8.0 * n + 4.0 * n * dtype.itemsize


def shape_of(inputs):
    n, nnz = inputs["x"].numel(), inputs["col_idx"].numel()
    return {"N": n, "NNZ_PER_ROW": nnz // n}
