"""C = A @ B with fp32 accumulation, any M, N, K; three ways to spread the work, chosen by the search.

- Tile per program (PROGRAMS_PER_UNIT = 0, SPLIT_K = 1): one program per C tile, grouped tile order so
  GROUP_M row tiles share the B tiles they read while those are in L2.
- Split-K (SPLIT_K > 1): for small M·N with large K, where one program per tile leaves SMs/CUs idle.
  Split s sums K range s into its own fp32 slice of a workspace; a second kernel adds the slices in a
  fixed order and casts to C's dtype. No atomics, so a result is the same bit for bit on every run.
- Persistent (PROGRAMS_PER_UNIT > 0): UNITS * PROGRAMS_PER_UNIT programs, each walking the tiles in
  steps of the grid size, so launch and tail cost is paid once per program instead of once per tile.
  launch() never sees the target, so the unit count is a parameter, UNITS, tied to the target's own
  `units` by the constraint `UNITS == units`: the space lists the unit counts of the targets it may
  run on and the constraint keeps the one that fits. On a device with fewer units than its arch's
  reference part (H100 PCIe) the kernel stays correct and only oversubscribes a little.

dtypes: float32 (tl.dot takes it as tf32), float16, bfloat16 and float8_e4m3 (output bfloat16; B
stored K-major, as fp8 tensor cores and torch._scaled_mm want it). fp8 needs a target whose property
fp8_e4m3 is 1.
"""

import torch
import triton
import triton.language as tl

OUTPUTS = ("c",)
SPACE = {
    "BLOCK_M": [32, 64, 128, 256],
    "BLOCK_N": [32, 64, 128, 256],
    "BLOCK_K": [32, 64, 128],
    "GROUP_M": [1, 4, 8],
    "SPLIT_K": [1, 2, 4, 8],
    "PROGRAMS_PER_UNIT": [0, 1, 2],
    "UNITS": [108, 132, 142, 148, 110, 256, 304],  # nvidia sm_80/90/89/100, amd gfx90a/950/942
    "num_warps": [2, 4, 8],
    "num_stages": [2, 3, 4, 5],
}
CONSTRAINTS = [
    "(BLOCK_M + BLOCK_N) * BLOCK_K * dtype_bytes * (num_stages - 1) <= smem_bytes",
    "BLOCK_M * BLOCK_N // (32 * num_warps) <= 256",  # accumulator registers per thread
    "BLOCK_M <= 2 * M and BLOCK_N <= 2 * N",
    "UNITS == units",
    "SPLIT_K == 1 or PROGRAMS_PER_UNIT == 0",  # split-K and persistence do not combine
    "SPLIT_K * BLOCK_K <= K",  # every split has K to sum
    # split-K only pays while one program per tile leaves units idle
    "SPLIT_K == 1 or ((M + BLOCK_M - 1) // BLOCK_M) * ((N + BLOCK_N - 1) // BLOCK_N) < units",
    "fp8_e4m3 == 1 or dtype_bytes > 1",
]
VERIFY_SHAPES = [{"M": 67, "N": 45, "K": 80}, {"M": 128, "N": 96, "K": 64}]
# Evaluated first in a new study: the config list of Triton's matmul tutorial (what @triton.autotune
# users start from), then split-K and persistent starting points. The search goes on from there.
SEEDS = [
    {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 0,
     "num_stages": s, "num_warps": w}
    for m, n, k, s, w in [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                          (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2)]
] + [
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 4, "PROGRAMS_PER_UNIT": 0,
     "num_stages": 3, "num_warps": 4},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 1,
     "num_stages": 3, "num_warps": 8},
]
TOLERANCE = {"float32": 2e-3}  # tl.dot takes fp32 inputs as tf32 on tensor cores
PEAK_DTYPE = {"float32": "tfloat32"}  # so % of peak compares fp32 GEMMs with the tf32 tensor-core peak


@triton.jit
def _tile_coords(tile, num_m, num_n, GROUP_M: tl.constexpr):
    """Grouped order: GROUP_M row tiles walk the column tiles together, sharing B in L2."""
    group = GROUP_M * num_n
    first_m = (tile // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    return first_m + (tile % group) % size_m, (tile % group) // size_m


@triton.jit
def _tile_dot(a_ptr, b_ptr, rm, rn, M, N, k_lo, k_hi, stride_am, stride_ak, stride_bk, stride_bn,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr):
    """A[rm, k_lo:k_hi] @ B[k_lo:k_hi, rn] in fp32; k_hi - k_lo may be ragged unless EVEN_K.

    Rows past M and columns past N are wrapped onto real ones (their results are never stored), so
    the loads in the loop carry no M/N mask, and with EVEN_K no mask at all: the software pipeliner
    then issues plain asynchronous copies, as the Triton tutorial's kernel does."""
    rk = k_lo + tl.arange(0, BLOCK_K)
    a = a_ptr + (rm % M)[:, None].to(tl.int64) * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + (rn % N)[None, :].to(tl.int64) * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(k_hi - k_lo, BLOCK_K)):
        if EVEN_K:
            a_tile = tl.load(a)
            b_tile = tl.load(b)
        else:
            k_left = k_hi - k_lo - k * BLOCK_K
            a_tile = tl.load(a, mask=tl.arange(0, BLOCK_K)[None, :] < k_left, other=0.0)
            b_tile = tl.load(b, mask=tl.arange(0, BLOCK_K)[:, None] < k_left, other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
        a += BLOCK_K * stride_ak
        b += BLOCK_K * stride_bk
    return acc


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, k_per_split, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cs, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  EVEN_K: tl.constexpr):
    """One C tile per program along axis 0; axis 1 is the K split (slice stride_cs of the output)."""
    pid_m, pid_n = _tile_coords(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    split = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    k_lo = split * k_per_split
    acc = _tile_dot(a_ptr, b_ptr, rm, rn, M, N, k_lo, tl.minimum(k_lo + k_per_split, K), stride_am, stride_ak,
                    stride_bk, stride_bn, BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K)
    c = c_ptr + split.to(tl.int64) * stride_cs + rm[:, None].to(tl.int64) * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                             stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    for tile in range(tl.program_id(0), num_m * num_n, tl.num_programs(0)):
        pid_m, pid_n = _tile_coords(tile, num_m, num_n, GROUP_M)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = _tile_dot(a_ptr, b_ptr, rm, rn, M, N, 0, K, stride_am, stride_ak, stride_bk, stride_bn,
                        BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K)
        c = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :] * stride_cn
        tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def splitk_reduce_kernel(w_ptr, c_ptr, M, N, stride_ws, stride_wm, stride_wn, stride_cm, stride_cn,
                         SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """C tile = sum over splits of its fp32 workspace slices, in split order (deterministic). Tiles
    like the GEMM's, so this launch has fewer programs than the GEMM it follows."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    w = w_ptr + rm[:, None].to(tl.int64) * stride_wm + rn[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for s in range(SPLIT_K):
        acc += tl.load(w + s * stride_ws, mask=mask, other=0.0)
    c = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=mask)


def _out_dtype(dtype):
    return torch.bfloat16 if dtype.itemsize == 1 else dtype


def make_inputs(shape, dtype, t):
    m, n, k = shape["M"], shape["N"], shape["K"]
    b = t.randn(n, k, dtype=dtype).t() if dtype.itemsize == 1 else t.randn(k, n, dtype=dtype)
    return {"a": t.randn(m, k, dtype=dtype), "b": b, "c": t.empty(m, n, dtype=_out_dtype(dtype))}


def reference(inputs):
    return {"c": inputs["a"].double() @ inputs["b"].double()}


def baseline(inputs):
    a, b = inputs["a"], inputs["b"]
    if a.dtype.itemsize == 1:
        one = torch.ones((), dtype=torch.float32, device=a.device)
        return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    if a.dtype == torch.float32:  # the kernel computes in tf32: time torch at the same precision
        previous = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return torch.matmul(a, b)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = previous
    return torch.matmul(a, b)


def launch(k, inputs, params):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    (m, kk), n = a.shape, b.shape[1]
    bm, bn, bk, gm = params["BLOCK_M"], params["BLOCK_N"], params["BLOCK_K"], params["GROUP_M"]
    split_k, per_unit = params.get("SPLIT_K", 1), params.get("PROGRAMS_PER_UNIT", 0)
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    # every split's K range is a whole number of BLOCK_K steps (below), so only K itself can be ragged
    blocks = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, EVEN_K=kk % bk == 0)
    if per_unit:
        grid = (min(tiles, params["UNITS"] * per_unit),)
        k.matmul_persistent_kernel[grid](a, b, c, m, n, kk, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                         c.stride(0), c.stride(1), **blocks)
        return
    if split_k == 1:
        k.matmul_kernel[(tiles, 1)](a, b, c, m, n, kk, kk, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                    0, c.stride(0), c.stride(1), **blocks)
        return
    k_per_split = triton.cdiv(triton.cdiv(kk, split_k), bk) * bk
    splits = triton.cdiv(kk, k_per_split)
    # allocated per call: after the first, torch's caching allocator hands back the same block
    work = torch.empty((splits, m, n), dtype=torch.float32, device=a.device)
    k.matmul_kernel[(tiles, splits)](a, b, work, m, n, kk, k_per_split, a.stride(0), a.stride(1), b.stride(0),
                                     b.stride(1), work.stride(0), work.stride(1), work.stride(2), **blocks)
    k.splitk_reduce_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](work, c, m, n, *work.stride(), c.stride(0),
                                                                     c.stride(1), SPLIT_K=splits, BLOCK_M=bm,
                                                                     BLOCK_N=bn)


def flops(shape, dtype):
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def bytes_moved(shape, dtype):
    m, n, k = shape["M"], shape["N"], shape["K"]
    return (m * k + k * n) * dtype.itemsize + m * n * _out_dtype(dtype).itemsize


def traffic(shape, dtype, params):
    """Each tile row of A is read once per column tile of C and vice versa (L2 reuse ignored); split-K
    also writes and reads back its fp32 partial sums."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    reads = m * k * triton.cdiv(n, params["BLOCK_N"]) + k * n * triton.cdiv(m, params["BLOCK_M"])
    split_k = params.get("SPLIT_K", 1)
    partials = 2 * split_k * m * n * 4 if split_k > 1 else 0
    return reads * dtype.itemsize + m * n * _out_dtype(dtype).itemsize + partials


def shape_of(inputs):
    (m, k), n = inputs["a"].shape, inputs["b"].shape[1]
    return {"M": m, "N": n, "K": k}
