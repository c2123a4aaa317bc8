"""C = A @ B with fp32 accumulation: grouped tile order (L2 reuse), masked edges, any M, N, K."""

import torch
import triton
import triton.language as tl

OUTPUTS = ("c",)
SPACE = {
    "BLOCK_M": [32, 64, 128, 256],
    "BLOCK_N": [32, 64, 128, 256],
    "BLOCK_K": [32, 64, 128],
    "GROUP_M": [1, 4, 8],
    "num_warps": [2, 4, 8],
    "num_stages": [2, 3, 4, 5],
}
CONSTRAINTS = [
    "(BLOCK_M + BLOCK_N) * BLOCK_K * dtype_bytes * (num_stages - 1) <= smem_bytes",
    "BLOCK_M * BLOCK_N // (32 * num_warps) <= 256",  # accumulator registers per thread
    "BLOCK_M <= 2 * M and BLOCK_N <= 2 * N",
]
VERIFY_SHAPES = [{"M": 67, "N": 45, "K": 80}, {"M": 128, "N": 96, "K": 64}]
TOLERANCE = {"float32": 2e-3}  # tl.dot takes fp32 inputs as tf32 on tensor cores


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None].to(tl.int64) * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :].to(tl.int64) * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a_tile = tl.load(a, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b_tile = tl.load(b, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
        a += BLOCK_K * stride_ak
        b += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def make_inputs(shape, dtype, t):
    m, n, k = shape["M"], shape["N"], shape["K"]
    return {"a": t.randn(m, k, dtype=dtype), "b": t.randn(k, n, dtype=dtype), "c": t.empty(m, n, dtype=dtype)}


def reference(inputs):
    return {"c": inputs["a"].double() @ inputs["b"].double()}


def baseline(inputs):
    return torch.matmul(inputs["a"], inputs["b"])


def launch(k, inputs, params):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    (m, kk), n = a.shape, b.shape[1]
    bm, bn = params["BLOCK_M"], params["BLOCK_N"]
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    k.matmul_kernel[grid](a, b, c, m, n, kk, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                          c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=params["BLOCK_K"], GROUP_M=params["GROUP_M"])


def flops(shape, dtype):
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def bytes_moved(shape, dtype):
    return (shape["M"] * shape["K"] + shape["K"] * shape["N"] + shape["M"] * shape["N"]) * dtype.itemsize


def traffic(shape, dtype, params):
    """Each tile row of A is read once per column tile of C and vice versa (L2 reuse ignored)."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    reads = m * k * triton.cdiv(n, params["BLOCK_N"]) + k * n * triton.cdiv(m, params["BLOCK_M"])
    return (reads + m * n) * dtype.itemsize


def shape_of(inputs):
    (m, k), n = inputs["a"].shape, inputs["b"].shape[1]
    return {"M": m, "N": n, "K": k}
