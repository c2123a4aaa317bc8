"""C = A @ B with fp32 accumulation, any M, N, K; the search chooses among these variants.

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
- TMA (TMA = 1, persistent only, targets whose property `tma` is 1: sm_90 and later): the persistent
  walk with every A, B and C tile moved by the Tensor Memory Accelerator through descriptors built on
  the device; no masks, no wrapped rows. With SPLIT_K > 1 it walks (tile, K split) pairs into the
  split-K workspace. A tensor the TMA cannot take (a row not a multiple of 16 bytes) runs the plain
  persistent kernel (or the plain split-K one) instead.

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
    "TMA": [0, 1],
    "UNITS": [108, 132, 142, 148, 110, 256, 304],  # nvidia sm_80/90/89/100, amd gfx90a/950/942
    "num_warps": [2, 4, 8],
    "num_stages": [2, 3, 4, 5],
}
CONSTRAINTS = [
    "(BLOCK_M + BLOCK_N) * BLOCK_K * dtype_bytes * (num_stages - 1) <= smem_bytes",
    "BLOCK_M * BLOCK_N // (32 * num_warps) <= 256",  # accumulator registers per thread
    "BLOCK_M <= 2 * M and BLOCK_N <= 2 * N",
    "UNITS == units",
    "SPLIT_K == 1 or PROGRAMS_PER_UNIT == 0 or TMA == 1",  # split-K is persistent only with the TMA
    "SPLIT_K * BLOCK_K <= K",  # every split has K to sum
    # split-K only pays while one program per tile leaves units idle
    "SPLIT_K == 1 or ((M + BLOCK_M - 1) // BLOCK_M) * ((N + BLOCK_N - 1) // BLOCK_N) < units",
    "fp8_e4m3 == 1 or dtype_bytes > 1",
    "TMA == 0 or (tma == 1 and PROGRAMS_PER_UNIT > 0)",  # the TMA variant is persistent, Hopper and later
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
    {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 0,
     "num_stages": 4, "num_warps": 4},  # small GEMMs (1000^3 on an H100: 128 tiles, one a program)
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 1,
     "num_stages": 3, "num_warps": 8},
] + [  # the TMA variant where the space has it (sm_90 and later); split-K where tiles leave SMs idle
    {"BLOCK_M": 128, "BLOCK_N": n, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": sk, "PROGRAMS_PER_UNIT": 1, "TMA": 1,
     "num_stages": s, "num_warps": w}
    for n, sk, s, w in [(256, 1, 3, 8), (128, 1, 4, 8), (128, 2, 4, 4)]
]
_ACCUMULATION = "fp32 accumulation over K in another order than the reference: the error grows with the outputs' typical size"
TOLERANCE = {  # element-wise; `rms` scales with RMS(ref) (kt_cli.evaluate.verify.Tolerance)
    "float32": {"rtol": 2e-3, "atol": 1e-5, "rms": 2e-3, "why": "tl.dot takes fp32 inputs as tf32 on tensor cores; " + _ACCUMULATION},
    "float16": {"rtol": 1e-3, "atol": 1e-5, "rms": 1e-3, "why": _ACCUMULATION},
    "bfloat16": {"rtol": 1.6e-2, "atol": 1e-5, "rms": 8e-3, "why": _ACCUMULATION},
    "float8_e4m3": {"rtol": 1.25e-1, "atol": 1e-5, "rms": 6e-2, "why": _ACCUMULATION},
}
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
                  EVEN_K: tl.constexpr, M_UNIT: tl.constexpr, N_UNIT: tl.constexpr, K_UNIT: tl.constexpr,
                  AM_UNIT: tl.constexpr, AK_UNIT: tl.constexpr, BK_UNIT: tl.constexpr, BN_UNIT: tl.constexpr):
    """One C tile per program along axis 0; axis 1 is the K split (slice stride_cs of the output).
    M, N, K, k_per_split and A's and B's strides arrive divided by their *_UNIT (see _unit): a raw
    k_per_split of 1000 made min(k_lo + k_per_split, K) of unknown divisibility, so the K mask of every
    A load varied element by element and A was loaded 2 bytes at a time (1000^3 on an H100: 29.6 us
    against 9.3 us at K = 1024)."""
    M, N, K, k_per_split = M * M_UNIT, N * N_UNIT, K * K_UNIT, k_per_split * K_UNIT
    stride_am, stride_ak = stride_am * AM_UNIT, stride_ak * AK_UNIT
    stride_bk, stride_bn = stride_bk * BK_UNIT, stride_bn * BN_UNIT
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
                             BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, EVEN_K: tl.constexpr,
                             M_UNIT: tl.constexpr, N_UNIT: tl.constexpr, K_UNIT: tl.constexpr,
                             AM_UNIT: tl.constexpr, AK_UNIT: tl.constexpr, BK_UNIT: tl.constexpr,
                             BN_UNIT: tl.constexpr):
    M, N, K = M * M_UNIT, N * N_UNIT, K * K_UNIT
    stride_am, stride_ak = stride_am * AM_UNIT, stride_ak * AK_UNIT
    stride_bk, stride_bn = stride_bk * BK_UNIT, stride_bn * BN_UNIT
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
def matmul_tma_kernel(a_ptr, b_ptr, c_ptr, M, N, K, k_per_split, splits, stride_am, stride_bk, stride_bn,
                      stride_cs, stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, B_KMAJOR: tl.constexpr, SPLIT: tl.constexpr):
    """Persistent, with every tile moved by the Tensor Memory Accelerator: the descriptors are built on
    the device, the TMA zero-fills what lies past M, N or K on loads and drops it on stores, so nothing
    is masked or wrapped. B_KMAJOR: B is stored K-major (fp8), read as N x K tiles and transposed.
    SPLIT: the programs walk (tile, K split) pairs and store fp32 partial tiles into slice `split` of a
    [splits, M, N] workspace that splitk_reduce_kernel then sums; every split but the last covers whole
    BLOCK_K steps, so no step reads into the next split's range."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    if B_KMAJOR:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_bn, 1],
                                           block_shape=[BLOCK_N, BLOCK_K])
    else:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1],
                                           block_shape=[BLOCK_K, BLOCK_N])
    if SPLIT:
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[splits, M, N], strides=[stride_cs, stride_cm, 1],
                                           block_shape=[1, BLOCK_M, BLOCK_N])
    else:
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1],
                                           block_shape=[BLOCK_M, BLOCK_N])
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    for work in range(tl.program_id(0), num_m * num_n * splits, tl.num_programs(0)):
        pid_m, pid_n = _tile_coords(work // splits, num_m, num_n, GROUP_M)
        k_lo = (work % splits) * k_per_split
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(k_lo, tl.minimum(k_lo + k_per_split, K), BLOCK_K):
            a = a_desc.load([pid_m * BLOCK_M, k])
            if B_KMAJOR:
                b = b_desc.load([pid_n * BLOCK_N, k]).T
            else:
                b = b_desc.load([k, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        if SPLIT:
            c_desc.store([work % splits, pid_m * BLOCK_M, pid_n * BLOCK_N], acc[None, :, :])
        else:
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def splitk_reduce_kernel(w_ptr, c_ptr, M, N, stride_ws, stride_wm, stride_wn, stride_cm, stride_cn,
                         SPLIT_K: tl.constexpr, BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    """C = sum over splits of the fp32 workspace slices, in split order (deterministic). A program per
    ROWS x BLOCK_N piece, its SPLIT_K loads unrolled so they are all in flight at once: whole GEMM
    tiles a program (64 programs at 1000^3) walking their rows one load after another cost more than
    the split saved (split-K configs measured 20-27 us at 1000^3 on an H100 against 13 us without)."""
    rm = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    w = w_ptr + rm[:, None].to(tl.int64) * stride_wm + rn[None, :] * stride_wn
    acc = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):
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


def _unit(value: int) -> int:
    """The power of two (up to 16) that divides a size or stride. Triton marks an integer argument as a
    multiple of 16 or nothing: with 1000-wide rows it cannot prove that rows start 16-byte aligned, nor
    that `rn < N` or `rn % N` stay constant or contiguous over 8 columns, and every load of the K loop is
    scalar. Passing value // unit and multiplying by the constexpr unit inside the kernel lets it
    vectorize (seen in the PTX: ld.global.b16 becomes ld.global.v4.b32 for a 1000-column bf16 A)."""
    return min(16, value & -value) if value > 1 else 1


def _tma_ready(*tensors) -> bool:
    """The TMA's rules: a 16-byte aligned base, one unit stride, every other stride a multiple of 16
    bytes."""
    for t in tensors:
        inner, *outer = sorted(t.stride())
        if inner != 1 or t.data_ptr() % 16 or any((s * t.element_size()) % 16 for s in outer):
            return False
    return True


def _scratch(size, alignment, stream):
    """Global memory for the descriptors matmul_tma_kernel builds on the device."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def launch(k, inputs, params):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    (m, kk), n = a.shape, b.shape[1]
    bm, bn, bk, gm = params["BLOCK_M"], params["BLOCK_N"], params["BLOCK_K"], params["GROUP_M"]
    split_k, per_unit = params.get("SPLIT_K", 1), params.get("PROGRAMS_PER_UNIT", 0)
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    values = (m, n, kk, *a.stride(), *b.stride())
    units = [_unit(v) for v in values]
    blocks = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, EVEN_K=kk % bk == 0,
                  **dict(zip(("M_UNIT", "N_UNIT", "K_UNIT", "AM_UNIT", "AK_UNIT", "BK_UNIT", "BN_UNIT"), units)))
    sizes, sa, sb = [[v // u for v, u in zip(values[i:j], units[i:j])] for i, j in ((0, 3), (3, 5), (5, 7))]
    splits, k_per_split, work = 1, kk, None
    if split_k > 1:
        # every split's K range is a whole number of BLOCK_K steps, so only the last one is ragged
        k_per_split = triton.cdiv(triton.cdiv(kk, split_k), bk) * bk
        splits = triton.cdiv(kk, k_per_split)
        # allocated per call: after the first, torch's caching allocator hands back the same block
        work = torch.empty((splits, m, n), dtype=torch.float32, device=a.device)
    out = c if work is None else work
    if per_unit and params.get("TMA", 0) and a.stride(1) == 1 and out.stride(-1) == 1 and _tma_ready(a, b, out):
        # a config that asks for the TMA on a tensor it cannot take (a row of 45 bf16 values is 90
        # bytes) runs a plain kernel below: same tiles, same K splits, same result
        triton.set_allocator(_scratch)
        k.matmul_tma_kernel[(min(tiles * splits, params["UNITS"] * per_unit),)](
            a, b, out, m, n, kk, k_per_split, splits, a.stride(0), b.stride(0), b.stride(1),
            out.stride(0) if work is not None else 0, out.stride(-2), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
            GROUP_M=gm, B_KMAJOR=b.stride(0) == 1, SPLIT=work is not None)
    elif per_unit and work is None:
        grid = (min(tiles, params["UNITS"] * per_unit),)
        k.matmul_persistent_kernel[grid](a, b, c, *sizes, *sa, *sb, c.stride(0), c.stride(1), **blocks)
    elif work is None:
        k.matmul_kernel[(tiles, 1)](a, b, c, *sizes, sizes[2], *sa, *sb, 0, c.stride(0), c.stride(1), **blocks)
    else:  # k_per_split is a multiple of BLOCK_K, so of K's unit too
        k.matmul_kernel[(tiles, splits)](a, b, work, *sizes, k_per_split // units[2], *sa, *sb, *work.stride(),
                                         **blocks)
    if work is not None:
        rows = max(1, min(bm, 2048 // bn))
        k.splitk_reduce_kernel[(triton.cdiv(m, rows), triton.cdiv(n, bn))](work, c, m, n, *work.stride(), c.stride(0),
                                                                          c.stride(1), SPLIT_K=splits, BLOCK_N=bn,
                                                                          ROWS=rows)


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
