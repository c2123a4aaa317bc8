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
- Gluon (GLUON = 1, with TMA = 1, targets whose property `wgmma` is 1: sm_90 only): a
  persistent, warp-specialized kernel written in Gluon, Triton's layout-explicit dialect, since plain
  Triton does not warp-specialize on sm_90. In each program one producer warp issues the TMA loads of A
  and B tiles into a ring of num_stages shared-memory stages, each guarded by a `ready` and an `empty`
  mbarrier; the num_warps // 4 consumer warpgroups issue asynchronous wgmma on each stage as it lands,
  keep one MMA in flight and hand the previous stage back once it is done; the C tile leaves through
  shared memory and TMA stores, which run while the next tile's loads are already in flight. With SPLIT_K
  > 1 the programs walk (tile, K split) items, a tile's splits on neighbouring programs; the splits before
  the last write their fp32 partial sums to a workspace and count themselves in on the tile's counter
  (release), and the last waits for them (acquire), adds them to its accumulator in split order (the same
  result bit for bit on every run) and stores C: one launch, no reduction kernel (small M·N with long K,
  as at 1000^3 where 128 x 128 tiles leave half of an H100's SMs idle). The C tile leaves
  in column slices EPILOGUE_N wide (BLOCK_N: whole), split off the accumulator in registers and each
  stored through one BLOCK_M x EPILOGUE_N buffer: the shared memory a whole C tile would take can hold
  another ring stage (bf16 128x256x64 or fp8 128x256x128 with 4 stages). The descriptors are built on
  the host. fp8 e4m3 runs it too, B K-major (the only B layout fp8 wgmma reads from shared memory: its
  tiles land N x K and are handed to the wgmma transposed), C bf16. A
  launch it cannot take (not fp16/bf16/fp8, a row not a multiple of 16 bytes, a 16-bit B stored K-major)
  runs the TMA variant's kernels. Gluon kernels do not run under Triton's CPU
  interpreter: in static mode kt cross-compiles such a point (its resources are recorded) but records
  it unverified (failure kind `interpreter`), so it never wins there; measured mode verifies it on the
  GPU. docs/kernel-protocol.md describes it, with figures.
- AMD Gluon (GLUON = 1 with PROGRAMS_PER_UNIT = 0 and SPLIT_K = 1, targets whose property `mfma_gluon` is 1:
  gfx942, gfx950): a Gluon kernel written for CDNA3/CDNA4, a program per C tile. Waves of 64 lanes in a
  grid over the tile compute it with MFMA instructions (16x16 or 32x32 blocks: matrix_instr_nonkdim; the K
  per instruction of the arch it is compiled for); A and B come by buffer loads one K step ahead, into
  registers, then through row-padded LDS buffers (num_stages - 1 of them) into MFMA operand layouts; B is
  read from LDS by gfx950's transposing ds_read_b64_tr_b16, and on gfx942 transposed in registers into a
  K-contiguous LDS tile. Tensors it cannot take (not 16-bit, not row-major) run the plain tile kernel.
  Never run on an AMD GPU: cross-compiled and resource-checked only (docs/amd.md).

dtypes: float32 (tl.dot takes it as tf32), float16, bfloat16 and float8_e4m3 (output bfloat16; B
stored K-major, as fp8 tensor cores and torch._scaled_mm want it). fp8 needs a target whose property
fp8_e4m3 is 1.
"""

import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language._core import builtin as _gl_builtin  # Triton 3.6 to 3.9
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)

# Triton 3.9 renamed Gluon's TMA copies (async_copy_global_to_shared -> async_load, async_copy_shared_to_global
# -> async_store) and made the old names raise; Triton 3.6 has only the old names. The arguments are the same.
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
_tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
# A barrier of the partition's threads: Triton 3.9 names it gl.barrier, 3.6 gl.thread_barrier
_thread_barrier = getattr(gl, "barrier", None) or gl.thread_barrier

OUTPUTS = ("c",)
PRODUCER_REGS = 40  # sm_90's Gluon kernel: the producer warp's registers (setmaxnreg) where a point leaves the knob out
SPACE = {
    "BLOCK_M": [32, 64, 128, 256],
    "BLOCK_N": [32, 64, 128, 256],
    "BLOCK_K": [32, 64, 128],
    "GROUP_M": [1, 4, 8],
    "SPLIT_K": [1, 2, 4, 8],
    "PROGRAMS_PER_UNIT": [0, 1, 2],
    "TMA": [0, 1],
    "GLUON": [0, 1],
    # sm_90's Gluon kernel: the width of the C slices its epilogue stores (BLOCK_N: the whole tile). Widest
    # first: a seed that leaves it out is completed with the first value that fits, its whole tile
    "EPILOGUE_N": [256, 128, 64, 32],
    # sm_90's Gluon kernel: the producer warp's registers (setmaxnreg), the register split between it and
    # the consumer warpgroups, which get what is left. Today's value first: a seed that leaves it out keeps it
    "PRODUCER_REGS": [PRODUCER_REGS, 24, 56, 88],
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
    # Shared memory on targets with a TMA (sm_90 and later), where the software pipeline keeps num_stages A and
    # B tiles, not the num_stages - 1 of the recipes' rule (Triton's tutorial's): the TMA variant adds one C
    # tile for its TMA store (bf16 for fp8 inputs), and barriers take at most 64 B. Exact for SPLIT_K 1 on sm_90
    # (Triton 3.6 and 3.9; bf16, fp8, fp32; every stored point the GPUs ran or refused) and sm_100 (Triton 3.9);
    # split-K takes more, which the compile still refuses. Without them a tenth of a matmul tune's trials on
    # sm_90 compiled only to be refused (docs/performance.md, thirty-fifth session). The first names GLUON: a
    # space without it (matmul_fp32's) drops it, and its TMA points are refused by their compile as before
    "TMA == 0 or GLUON == 1 or (BLOCK_M + BLOCK_N) * BLOCK_K * dtype_bytes * num_stages"
    " + BLOCK_M * BLOCK_N * max(dtype_bytes, 2) + 64 <= smem_bytes",
    "TMA == 1 or tma == 0 or (BLOCK_M + BLOCK_N) * BLOCK_K * dtype_bytes * num_stages + 64 <= smem_bytes",
    # The Gluon variants: sm_90's (wgmma) and AMD's (CDNA3/CDNA4, `mfma_gluon`); this rule names no knob but
    # GLUON, so it holds even where a recipe's space lacks TMA (as AMD spaces do)
    "GLUON == 0 or wgmma == 1 or mfma_gluon == 1",
    # sm_90's (targets whose `mfma_gluon` is 0): wgmma, the TMA's persistent walk (K splits reduced in the
    # kernel), 16-bit or fp8 inputs (fp8_e4m3 above keeps fp8 where the tensor cores take it)
    "GLUON == 0 or mfma_gluon == 1 or (wgmma == 1 and TMA == 1 and dtype_bytes <= 2)",
    # rows a TMA can take at the tuned shape (K and N times the element size a multiple of 16)
    "GLUON == 0 or mfma_gluon == 1 or (K * dtype_bytes % 16 == 0 and N * dtype_bytes % 16 == 0)",
    # each consumer warp takes 16 rows of a wgmma; accumulator registers per consumer thread
    "GLUON == 0 or mfma_gluon == 1 or (num_warps % 4 == 0 and BLOCK_M % (16 * num_warps) == 0)",
    "GLUON == 0 or mfma_gluon == 1 or BLOCK_M * BLOCK_N // (32 * num_warps) <= 128",
    # the epilogue stores whole slices of the C tile; every other kernel ignores EPILOGUE_N, so it stays
    # BLOCK_N there and the search spends no trial on a copy of a point it has
    "EPILOGUE_N == BLOCK_N or (GLUON == 1 and mfma_gluon == 0 and EPILOGUE_N <= BLOCK_N"
    " and BLOCK_N % EPILOGUE_N == 0)",
    # the register split is sm_90's Gluon kernel's alone: every other kernel keeps the default, so that
    # the search spends no trial on a copy of a point it has
    f"PRODUCER_REGS == {PRODUCER_REGS} or (GLUON == 1 and mfma_gluon == 0)",
    # the ring of num_stages A and B tiles and one C slice of the epilogue (bf16 for fp8 inputs), all in
    # shared memory at once
    "GLUON == 0 or mfma_gluon == 1 or (BLOCK_M + BLOCK_N) * BLOCK_K * dtype_bytes * num_stages"
    " + BLOCK_M * EPILOGUE_N * max(dtype_bytes, 2) + 1024 <= smem_bytes",
    # the same with the narrowest slice: it names no EPILOGUE_N, so it still prunes in a space without
    # the knob (kt drops a kernel rule naming a knob the recipe lacks; such points store whole tiles, and
    # one that does not fit is refused on its compiled shared memory before it reaches the device)
    "GLUON == 0 or mfma_gluon == 1 or (BLOCK_M + BLOCK_N) * BLOCK_K * dtype_bytes * num_stages"
    " + BLOCK_M * 32 * max(dtype_bytes, 2) + 1024 <= smem_bytes",
    # The Gluon variant for CDNA3/CDNA4 (targets whose `mfma_gluon` is 1: gfx942, gfx950): a program per
    # tile, no split-K, 16-bit inputs; num_stages - 1 LDS buffers (1 or 2)
    # (no TMA here: AMD spaces need not list it, and `TMA == 0 or tma == 1` above keeps it 0 where they do)
    "GLUON == 0 or mfma_gluon == 0 or (PROGRAMS_PER_UNIT == 0 and SPLIT_K == 1 and dtype_bytes == 2"
    " and (num_stages == 2 or num_stages == 3))",
    # the waves tile BLOCK_M x BLOCK_N with 32 x 32 blocks (two 16 x 16 or one 32 x 32 MFMA shape), K steps
    # of whole 32-deep MFMA operand loads; the global loads give each lane at least 8 elements of A and B
    "GLUON == 0 or mfma_gluon == 0 or (BLOCK_M % 32 == 0 and BLOCK_N % 32 == 0 and BLOCK_K % 32 == 0"
    " and (BLOCK_M // 32) * (BLOCK_N // 32) >= num_warps and BLOCK_K * min(BLOCK_M, BLOCK_N) >= 512 * num_warps)",
    # LDS: num_stages - 1 buffers of A and B, each row padded by 8 elements
    "GLUON == 0 or mfma_gluon == 0 or (num_stages - 1) * ((BLOCK_M + BLOCK_N) * BLOCK_K"
    " + 8 * (BLOCK_M + BLOCK_N + BLOCK_K)) * dtype_bytes <= smem_bytes",
    # vector registers per lane: the fp32 accumulator plus A and B tiles (staged and in operand layout).
    # Cross-compiled for gfx942 and gfx950: up to 224 no point spills or takes AGPRs (at most 226 VGPRs);
    # at 256 some spill to scratch
    "GLUON == 0 or mfma_gluon == 0 or BLOCK_M * BLOCK_N // (64 * num_warps)"
    " + (BLOCK_M + BLOCK_N) * BLOCK_K // (32 * num_warps) <= 224",
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
] + [  # the Gluon variant where the space has it (sm_90): two consumer warpgroups, then one; 128-byte
    # K steps fit shared memory only in fp8
    {"BLOCK_M": 128, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 1, "TMA": 1,
     "GLUON": 1, "num_stages": s, "num_warps": w}
    for n, k, s, w in [(256, 64, 3, 8), (128, 64, 4, 4), (256, 128, 3, 8), (128, 128, 4, 4)]
] + [  # the same with a C tile stored in 64-column slices: the shared memory it frees takes a 4th stage
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": k, "GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 1, "TMA": 1,
     "GLUON": 1, "EPILOGUE_N": 64, "num_stages": 4, "num_warps": 8}
    for k in (64, 128)
] + [  # the AMD Gluon variant where the space has it (gfx942, gfx950): both fit gfx942's 64 KiB of LDS
    {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 0, "GLUON": 1,
     "num_stages": 2, "num_warps": w}
    for m, n, k, w in [(256, 256, 32, 8), (128, 128, 64, 4)]
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


@gluon.constexpr_function
def _wgmma_layout(BLOCK_M, BLOCK_N, warps, input_bits):
    """The accumulator's layout: the consumer warps stacked along M (16 rows a warp per wgmma), each wgmma
    as wide as BLOCK_N allows (a multiple of 8 dividing it, at most 256) and 32 bytes of K deep (16
    elements of a 16-bit type, 32 of fp8: the shapes PTX's wgmma.mma_async has)."""
    n = min(BLOCK_N, 256)
    while BLOCK_N % n:
        n -= 8
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[warps, 1], instr_shape=[16, n, 256 // input_bits])


@gluon.jit
def _gl_tile_coords(tile, num_m, num_n, GROUP_M: gl.constexpr):
    """_tile_coords in Gluon (a Gluon kernel cannot call a @triton.jit function)."""
    group = GROUP_M * num_n
    first_m = (tile // group) * GROUP_M
    size_m = gl.minimum(num_m - first_m, GROUP_M)
    return first_m + (tile % group) % size_m, (tile % group) // size_m


@gluon.jit
def _gl_item(item, num_m, num_n, K, k_per_split, SPLITS: gl.constexpr, GROUP_M: gl.constexpr):
    """Work item `item` of a program's walk: its C tile's coordinates, the tile's index, the K split and
    the split's K range. A tile's SPLITS splits are neighbouring items, so they run at the same time on
    neighbouring programs and their partial sums meet while still in L2."""
    tile = item // SPLITS
    split = item % SPLITS
    pid_m, pid_n = _gl_tile_coords(tile, num_m, num_n, GROUP_M)
    k_lo = split * k_per_split
    return pid_m, pid_n, tile, split, k_lo, gl.minimum(K, k_lo + k_per_split)


@gluon.jit
def _gl_produce(a_desc, b_desc, a_ring, b_ring, ready, empty, M, N, K, k_per_split, SPLITS: gl.constexpr,
                GROUP_M: gl.constexpr, B_KMAJOR: gl.constexpr):
    """The producer warp: for every K step of every work item (a C tile, or one K split of it) of this
    program, wait until the consumers have handed the next stage back, then have the TMA fill it (it
    signals `ready` with the bytes). A K-major B (fp8: its descriptor is over Bᵀ, N rows of K) lands as a
    [BLOCK_N, BLOCK_K] tile."""
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_type.shape[0 if B_KMAJOR else 1]
    STAGES: gl.constexpr = a_ring.type.shape[0]
    num_m = gl.cdiv(M, BLOCK_M)
    num_n = gl.cdiv(N, BLOCK_N)
    step = 0
    for item in range(gl.program_id(0), num_m * num_n * SPLITS, gl.num_programs(0)):
        pid_m, pid_n, _, _, k_lo, k_hi = _gl_item(item, num_m, num_n, K, k_per_split, SPLITS, GROUP_M)
        for k in range(k_lo, k_hi, BLOCK_K):
            s = step % STAGES
            # a fresh mbarrier counts as having completed the phase before its first: the first lap
            # through the ring does not wait
            mbarrier.wait(empty.index(s), ((step // STAGES) & 1) ^ 1)
            mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            _tma_load(a_desc, [pid_m * BLOCK_M, k], ready.index(s), a_ring.index(s))
            if B_KMAJOR:
                _tma_load(b_desc, [pid_n * BLOCK_N, k], ready.index(s), b_ring.index(s))
            else:
                _tma_load(b_desc, [k, pid_n * BLOCK_N], ready.index(s), b_ring.index(s))
            step += 1


@gluon.jit
def _gl_store_slices(c_desc, c_smem, acc, row, col):
    """Stores `acc`, whose top left corner is C[row, col], in slices as wide as c_desc's block: halved
    in registers, each half by a call of its own (unrolled at compile time: the widths are constexpr),
    until one is that wide ([M, 2, N // 2] permuted to [M, N // 2, 2] and split: each thread already
    holds both halves, so nothing moves); each slice through c_smem and a TMA store, once the store
    before it has read c_smem."""
    if acc.shape[1] > c_desc.block_type.shape[1]:
        HALF: gl.constexpr = acc.shape[1] // 2
        left, right = acc.reshape(acc.shape[0], 2, HALF).permute(0, 2, 1).split()
        _gl_store_slices(c_desc, c_smem, left, row, col)
        _gl_store_slices(c_desc, c_smem, right, row, col + HALF)
    else:
        tma.store_wait(0)
        c_smem.store(acc.to(c_desc.dtype))
        fence_async_shared()
        _tma_store(c_desc, [row, col], c_smem)


@gluon.jit
def _gl_partial_offsets(part, tile, split, tiles):
    """Offsets, in the layout of `part` (a C tile's accumulator or a column slice of it), of its elements in
    split `split`'s part of the workspace region the caller points at: [SPLITS - 1, tiles, rows, columns]
    fp32 (only the splits before the last write one), each slice's region after its left neighbour's."""
    ROWS: gl.constexpr = part.shape[0]
    COLS: gl.constexpr = part.shape[1]
    rows = gl.arange(0, ROWS, layout=gl.SliceLayout(1, part.type.layout))
    cols = gl.arange(0, COLS, layout=gl.SliceLayout(0, part.type.layout))
    return (split * tiles + tile) * (ROWS * COLS) + gl.expand_dims(rows, 1) * COLS + gl.expand_dims(cols, 0)


@gluon.jit
def _gl_partials(c_desc, c_smem, acc, work_ptr, tile, split, tiles, row, col, SPLITS: gl.constexpr,
                 LAST: gl.constexpr):
    """A split before a tile's last (LAST False) writes its partial sum to its part of the workspace; the
    last adds the others' partials to its accumulator, in split order (the same sum bit for bit on every
    run), and stores C, as _gl_store_slices does. Both halve the accumulator in registers the same way
    until a half is an epilogue slice wide, each half in a region of its own, so that what one writes
    the other reads and a slice and a partial fit the registers beside each other."""
    if acc.shape[1] > c_desc.block_type.shape[1]:
        HALF: gl.constexpr = acc.shape[1] // 2
        left, right = acc.reshape(acc.shape[0], 2, HALF).permute(0, 2, 1).split()
        _gl_partials(c_desc, c_smem, left, work_ptr + 0, tile, split, tiles, row, col, SPLITS, LAST)
        _gl_partials(c_desc, c_smem, right, work_ptr + (SPLITS - 1) * tiles * acc.shape[0] * HALF, tile, split,
                     tiles, row, col + HALF, SPLITS, LAST)
    elif LAST:
        for s in range(SPLITS - 1):  # a loop, not unrolled: one partial in registers at a time
            acc += gl.load(work_ptr + _gl_partial_offsets(acc, tile, s, tiles), cache_modifier=".cg")
        _gl_store_slices(c_desc, c_smem, acc, row, col)
    else:
        gl.store(work_ptr + _gl_partial_offsets(acc, tile, split, tiles), acc)


@gluon.jit
def _gl_reduce_splits(c_desc, c_smem, acc, work_ptr, counts_ptr, tile, split, row, col, tiles, SPLITS: gl.constexpr):
    """One K split of a C tile is done. A split before the last writes its fp32 partial sum to the
    workspace and counts itself in on the tile's counter (a release atomic, after every consumer warp's
    stores). The last split, the tile's highest work item, waits until the others have counted in (an
    acquire), adds their partials to its own accumulator in split order and stores C: no second kernel, no
    atomics on data (the counters come zeroed with every call). No deadlock: the grid is a
    multiple of SPLITS, so a tile's splits run on neighbouring programs of one round of the walk, the last
    on the highest-numbered; a program waits only for lower-numbered ones, whose items are lower too, and
    which the GPU dispatches first (what CUTLASS's serial split-K relies on as well), also where the grid
    outnumbers the programs resident at once; only a last split ever waits."""
    if split < SPLITS - 1:
        _gl_partials(c_desc, c_smem, acc, work_ptr, tile, split, tiles, row, col, SPLITS, False)
        _thread_barrier()
        gl.atomic_add(counts_ptr + tile, 1, sem="release", scope="gpu")
    else:
        while gl.atomic_add(counts_ptr + tile, 0, sem="acquire", scope="gpu") < SPLITS - 1:
            pass
        _thread_barrier()
        _gl_partials(c_desc, c_smem, acc, work_ptr, tile, split, tiles, row, col, SPLITS, True)


@gluon.jit
def _gl_consume(c_desc, a_ring, b_ring, ready, empty, c_smem, M, N, K, k_per_split, work_ptr, counts_ptr,
                SPLITS: gl.constexpr, GROUP_M: gl.constexpr, B_KMAJOR: gl.constexpr):
    """The consumer warpgroups: one asynchronous wgmma per landed stage, one left in flight; the stage of
    the MMA before it is then done and goes back to the producer. A C tile is stored by the TMA from
    shared memory in slices of c_desc's block (EPILOGUE_N columns), each waited for only when the next
    slice needs that memory; with K splits (SPLITS > 1) each split's partial sum is reduced in the kernel
    (_gl_reduce_splits). A K-major B tile is handed to the wgmma transposed (a view: fp8 wgmma reads B
    only K-major)."""
    BLOCK_M: gl.constexpr = a_ring.type.shape[1]
    BLOCK_N: gl.constexpr = b_ring.type.shape[1 if B_KMAJOR else 2]
    BLOCK_K: gl.constexpr = a_ring.type.shape[2]
    STAGES: gl.constexpr = a_ring.type.shape[0]
    layout: gl.constexpr = _wgmma_layout(BLOCK_M, BLOCK_N, gl.num_warps(), a_ring.dtype.primitive_bitwidth)
    num_m = gl.cdiv(M, BLOCK_M)
    num_n = gl.cdiv(N, BLOCK_N)
    step = 0
    for item in range(gl.program_id(0), num_m * num_n * SPLITS, gl.num_programs(0)):
        pid_m, pid_n, tile, split, k_lo, k_hi = _gl_item(item, num_m, num_n, K, k_per_split, SPLITS, GROUP_M)
        acc = gl.zeros((BLOCK_M, BLOCK_N), gl.float32, layout)
        for ki in range(gl.cdiv(k_hi - k_lo, BLOCK_K)):
            s = step % STAGES
            mbarrier.wait(ready.index(s), (step // STAGES) & 1)
            b = b_ring.index(s).permute((1, 0)) if B_KMAJOR else b_ring.index(s)
            acc = warpgroup_mma(a_ring.index(s), b, acc, is_async=True)
            acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc, ))
            # Triton puts a barrier of the consumer warps before the arrive: every warpgroup's MMA is done
            mbarrier.arrive(empty.index((step + STAGES - 1) % STAGES), count=1, pred=ki > 0)
            step += 1
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        mbarrier.arrive(empty.index((step + STAGES - 1) % STAGES), count=1)
        if SPLITS == 1:
            _gl_store_slices(c_desc, c_smem, acc, pid_m * BLOCK_M, pid_n * BLOCK_N)
        else:
            _gl_reduce_splits(c_desc, c_smem, acc, work_ptr, counts_ptr, tile, split, pid_m * BLOCK_M,
                              pid_n * BLOCK_N, num_m * num_n, SPLITS)
    tma.store_wait(0)


@gluon.jit
def matmul_gluon_kernel(a_desc, b_desc, c_desc, M, N, K, k_per_split, work_ptr, counts_ptr, GROUP_M: gl.constexpr,
                        num_stages: gl.constexpr, PRODUCER_REGS: gl.constexpr, SPLITS: gl.constexpr = 1,
                        B_KMAJOR: gl.constexpr = False):
    """Persistent and warp-specialized (sm_90): num_warps consumer warps (the default partition) and one
    producer warp with PRODUCER_REGS registers; A, B and C move through host-built TMA descriptors, which
    zero-fill what lies past M, N or K on loads and drop it on stores. C's block is one epilogue slice
    (BLOCK_M x EPILOGUE_N), and so is the shared memory it leaves through. With SPLITS > 1 the programs
    walk (tile, K split) items of k_per_split each and reduce the splits' partial sums in the kernel
    through `work_ptr` (fp32, (SPLITS - 1) x tiles x BLOCK_M x BLOCK_N) and one zeroed int32 counter a tile
    at `counts_ptr` (_gl_reduce_splits)."""
    a_ring = gl.allocate_shared_memory(a_desc.dtype, [num_stages] + a_desc.block_type.shape, a_desc.layout)
    b_ring = gl.allocate_shared_memory(b_desc.dtype, [num_stages] + b_desc.block_type.shape, b_desc.layout)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [num_stages, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [num_stages, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(num_stages):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    gl.warp_specialize([
        (_gl_consume, (c_desc, a_ring, b_ring, ready, empty, c_smem, M, N, K, k_per_split, work_ptr, counts_ptr,
                       SPLITS, GROUP_M, B_KMAJOR)),
        (_gl_produce, (a_desc, b_desc, a_ring, b_ring, ready, empty, M, N, K, k_per_split, SPLITS, GROUP_M,
                       B_KMAJOR)),
    ], [1], [PRODUCER_REGS])


# ---- the Gluon variant for AMD CDNA3/CDNA4 (gfx942, gfx950) ----


@_gl_builtin
def _cdna_version(_semantic=None):
    """The CDNA generation the kernel is being compiled for (3: gfx942, 4: gfx950), read from the
    compile options: launch() never sees the target, and a cross-compile has no driver to ask."""
    return gl.constexpr(4 if _semantic.builder.options.arch == "gfx950" else 3)


@gluon.constexpr_function
def _mfma_layout(version, nonkdim, BLOCK_M, BLOCK_N, warps):
    """The accumulator's layout: `warps` waves in a WM x WN grid over the tile, the split whose wave
    tiles (BLOCK_M / WM x BLOCK_N / WN) are the squarest (least LDS read per MFMA), each wave covering
    its tile with nonkdim x nonkdim MFMA blocks. K per instruction for 16-bit inputs: gfx942 32x32x8 or
    16x16x16, gfx950 32x32x16 or 16x16x32 (twice the K: CDNA4's doubled bf16/fp16 rate). Transposed:
    a lane holds 4 consecutive columns of a row, so C leaves in 8-byte stores."""
    nonkdim = nonkdim or 16
    wm = 1
    best = None
    while wm <= warps:
        wn = warps // wm
        if BLOCK_M % (wm * nonkdim) == 0 and BLOCK_N % (wn * nonkdim) == 0:
            skew = max(BLOCK_M // wm, BLOCK_N // wn) / min(BLOCK_M // wm, BLOCK_N // wn)
            if best is None or skew < best[0]:
                best = (skew, wm, wn)
        wm *= 2
    assert best is not None, f"no wave grid of {warps} waves tiles {BLOCK_M}x{BLOCK_N} with {nonkdim}x{nonkdim} MFMAs"
    k = (8 if nonkdim == 32 else 16) * (2 if version == 4 else 1)
    return gl.amd.AMDMFMALayout(version=version, instr_shape=[nonkdim, nonkdim, k], transposed=True,
                                warps_per_cta=[best[1], best[2]])


@gluon.constexpr_function
def _row_load_layout(ROWS, COLS, warps):
    """Global loads of a ROWS x COLS tile, contiguous along COLS: 8 elements (16 bytes) a lane, the lanes
    of a wave along the row first (coalesced 128-byte and wider segments), the waves stacked over rows."""
    lanes = min(64, COLS // 8)
    return gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[64 // lanes, lanes], warps_per_cta=[warps, 1],
                            order=[1, 0])


@gluon.constexpr_function
def _b_load_layout(version, BLOCK_K, BLOCK_N, warps):
    """Global loads of B (BLOCK_K x BLOCK_N, contiguous along N). CDNA4 keeps B as it is in LDS and
    reads it with the transposing ds_read_b64_tr_b16, so this is _row_load_layout. CDNA3 has no
    transposing LDS read (an N-contiguous B would be read 2 bytes at a time into the MFMA operands):
    there each lane loads a kv x 8 block (8 columns, 16 bytes, in each of kv rows), whose transpose
    the lane then writes as 8 runs of kv elements into a K-contiguous LDS tile."""
    if version == 4:
        return _row_load_layout(BLOCK_K, BLOCK_N, warps)
    lanes_n = min(64, BLOCK_N // 8)
    lanes_k = 64 // lanes_n
    kv = max(1, min(8, BLOCK_K // (lanes_k * warps)))  # the waves stacked along K
    return gl.BlockedLayout(size_per_thread=[kv, 8], threads_per_warp=[lanes_k, lanes_n], warps_per_cta=[warps, 1],
                            order=[1, 0])


@gluon.constexpr_function
def _padded_lds(ROWS, COLS):
    """LDS layout of a ROWS x COLS tile, contiguous along COLS, each row followed by 16 bytes of padding:
    consecutive rows start 4 banks apart, so the lanes of an MFMA operand read (one row each, 16 bytes
    at the same column) and of a row-wise store hit distinct banks."""
    return gl.PaddedSharedLayout.with_identity_for([[COLS, 8]], [ROWS, COLS], [1, 0])


@gluon.jit
def _amd_step(a_lds, b_lds, a, b, acc, a_ptr, b_ptr, a_offs, b_offs, a_rows_ok, b_cols_ok, rk_a, rk_b, k_next, K,
              stride_bk, a_dot: gl.constexpr, b_dot: gl.constexpr, B_KCONTIG: gl.constexpr):
    """One K step: the A and B tiles loaded during the previous step go into LDS buffers a_lds and b_lds,
    the next step's tiles are requested by buffer loads (what lies past M, N or K is masked off: the
    hardware returns zeros; all of it after the last step), and the MFMAs run on the stored tiles read
    back in operand layout. B_KCONTIG: B is kept K-contiguous in LDS (transposed in registers as it is
    written)."""
    BLOCK_K: gl.constexpr = a_lds.type.shape[1]
    a_lds.store(a)
    if B_KCONTIG:
        b_lds.store(b.permute(1, 0))
    else:
        b_lds.store(b)
    k_left = K - k_next * BLOCK_K
    a = gl.amd.cdna3.buffer_load(a_ptr + k_next * BLOCK_K, a_offs, mask=a_rows_ok & (rk_a[None, :] < k_left),
                                 other=0.0)
    b = gl.amd.cdna3.buffer_load(b_ptr + (k_next * BLOCK_K).to(gl.int64) * stride_bk, b_offs,
                                 mask=(rk_b[:, None] < k_left) & b_cols_ok, other=0.0)
    if B_KCONTIG:
        b_op = b_lds.permute((1, 0)).load(b_dot)
    else:
        b_op = b_lds.load(b_dot)
    acc = gl.amd.cdna3.mfma(a_lds.load(a_dot), b_op, acc)
    return a, b, acc


@gluon.jit
def _amd_store(acc, c_ptr, M, N, pid_m, pid_n, stride_cm):
    """C tile (pid_m, pid_n) by buffer stores straight from the accumulator layout, masked past M and N."""
    BLOCK_M: gl.constexpr = acc.type.shape[0]
    BLOCK_N: gl.constexpr = acc.type.shape[1]
    rcm = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, acc.type.layout))
    rcn = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, acc.type.layout))
    c_ptr = c_ptr + (pid_m * BLOCK_M).to(gl.int64) * stride_cm + pid_n * BLOCK_N
    c_mask = (rcm[:, None] < M - pid_m * BLOCK_M) & (rcn[None, :] < N - pid_n * BLOCK_N)
    gl.amd.cdna3.buffer_store(acc.to(c_ptr.dtype.element_ty), c_ptr, rcm[:, None] * stride_cm + rcn[None, :],
                              mask=c_mask)


@gluon.jit
def _amd_two_buffers(a_lds0, b_lds0, a_lds1, b_lds1, a, b, acc, a_ptr, b_ptr, a_offs, b_offs, a_rows_ok, b_cols_ok,
                     rk_a, rk_b, K, stride_bk, a_dot: gl.constexpr, b_dot: gl.constexpr, B_KCONTIG: gl.constexpr):
    """The K loop over two LDS buffers used in turn (num_stages = 3): a step writes the buffer the step
    before it did not read."""
    BLOCK_K: gl.constexpr = a_lds0.type.shape[1]
    k_steps = gl.cdiv(K, BLOCK_K)
    for ki in range(0, k_steps - 1, 2):
        a, b, acc = _amd_step(a_lds0, b_lds0, a, b, acc, a_ptr, b_ptr, a_offs, b_offs, a_rows_ok, b_cols_ok,
                              rk_a, rk_b, ki + 1, K, stride_bk, a_dot, b_dot, B_KCONTIG)
        a, b, acc = _amd_step(a_lds1, b_lds1, a, b, acc, a_ptr, b_ptr, a_offs, b_offs, a_rows_ok, b_cols_ok,
                              rk_a, rk_b, ki + 2, K, stride_bk, a_dot, b_dot, B_KCONTIG)
    if k_steps % 2:
        a, b, acc = _amd_step(a_lds0, b_lds0, a, b, acc, a_ptr, b_ptr, a_offs, b_offs, a_rows_ok, b_cols_ok,
                              rk_a, rk_b, k_steps, K, stride_bk, a_dot, b_dot, B_KCONTIG)
    return acc


@gluon.jit
def matmul_amd_gluon_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                            BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr,
                            GROUP_M: gl.constexpr, M_UNIT: gl.constexpr, N_UNIT: gl.constexpr, K_UNIT: gl.constexpr,
                            AM_UNIT: gl.constexpr, BK_UNIT: gl.constexpr, CM_UNIT: gl.constexpr,
                            num_stages: gl.constexpr, matrix_instr_nonkdim: gl.constexpr = 0):
    """One C tile per program (grouped order) for CDNA3/CDNA4, num_warps waves of 64 lanes. Global loads
    run one K step ahead of the MFMAs, into registers; LDS holds num_stages - 1 buffers of A and B:
    - num_stages = 2: one buffer; each step waits at two barriers (the MFMA reads of the previous step
      are done before the store, the store is done before the reads);
    - num_stages = 3: two buffers, separate allocations used in turn, so a step writes the buffer the
      previous step did not read: one barrier a step.
    A, B and C are row-major; sizes and row strides arrive divided by their *_UNIT (see _unit), so the
    compiler can prove rows and masks 16-byte aligned and issue 16-byte buffer loads."""
    M, N, K = M * M_UNIT, N * N_UNIT, K * K_UNIT
    stride_am, stride_bk, stride_cm = stride_am * AM_UNIT, stride_bk * BK_UNIT, stride_cm * CM_UNIT
    warps: gl.constexpr = gl.num_warps()
    version: gl.constexpr = _cdna_version()
    B_KCONTIG: gl.constexpr = version == 3
    acc_layout: gl.constexpr = _mfma_layout(version, matrix_instr_nonkdim, BLOCK_M, BLOCK_N, warps)
    a_dot: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=8)
    b_dot: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=acc_layout, k_width=8)
    a_load: gl.constexpr = _row_load_layout(BLOCK_M, BLOCK_K, warps)
    b_load: gl.constexpr = _b_load_layout(version, BLOCK_K, BLOCK_N, warps)
    a_layout: gl.constexpr = _padded_lds(BLOCK_M, BLOCK_K)
    if B_KCONTIG:
        b_shape: gl.constexpr = [BLOCK_N, BLOCK_K]
        b_layout: gl.constexpr = _padded_lds(BLOCK_N, BLOCK_K)
    else:
        b_shape: gl.constexpr = [BLOCK_K, BLOCK_N]
        b_layout: gl.constexpr = _padded_lds(BLOCK_K, BLOCK_N)

    pid_m, pid_n = _gl_tile_coords(gl.program_id(0), gl.cdiv(M, BLOCK_M), gl.cdiv(N, BLOCK_N), GROUP_M)
    # scalar bases at the tile's corner: the per-lane offsets stay small 32-bit values
    a_ptr = a_ptr + (pid_m * BLOCK_M).to(gl.int64) * stride_am
    b_ptr = b_ptr + pid_n * BLOCK_N
    rm = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, a_load))
    rk_a = gl.arange(0, BLOCK_K, layout=gl.SliceLayout(0, a_load))
    rk_b = gl.arange(0, BLOCK_K, layout=gl.SliceLayout(1, b_load))
    rn = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, b_load))
    a_offs = rm[:, None] * stride_am + rk_a[None, :]
    b_offs = rk_b[:, None] * stride_bk + rn[None, :]
    a_rows_ok = rm[:, None] < M - pid_m * BLOCK_M
    b_cols_ok = rn[None, :] < N - pid_n * BLOCK_N
    a = gl.amd.cdna3.buffer_load(a_ptr, a_offs, mask=a_rows_ok & (rk_a[None, :] < K), other=0.0)
    b = gl.amd.cdna3.buffer_load(b_ptr, b_offs, mask=(rk_b[:, None] < K) & b_cols_ok, other=0.0)

    acc = gl.zeros((BLOCK_M, BLOCK_N), gl.float32, acc_layout)
    a_lds0 = gl.allocate_shared_memory(a_ptr.dtype.element_ty, [BLOCK_M, BLOCK_K], a_layout)
    b_lds0 = gl.allocate_shared_memory(b_ptr.dtype.element_ty, b_shape, b_layout)
    if num_stages == 2:
        for ki in range(gl.cdiv(K, BLOCK_K)):
            a, b, acc = _amd_step(a_lds0, b_lds0, a, b, acc, a_ptr, b_ptr, a_offs, b_offs, a_rows_ok, b_cols_ok,
                                  rk_a, rk_b, ki + 1, K, stride_bk, a_dot, b_dot, B_KCONTIG)
    else:
        a_lds1 = gl.allocate_shared_memory(a_ptr.dtype.element_ty, [BLOCK_M, BLOCK_K], a_layout)
        b_lds1 = gl.allocate_shared_memory(b_ptr.dtype.element_ty, b_shape, b_layout)
        acc = _amd_two_buffers(a_lds0, b_lds0, a_lds1, b_lds1, a, b, acc, a_ptr, b_ptr, a_offs, b_offs, a_rows_ok,
                               b_cols_ok, rk_a, rk_b, K, stride_bk, a_dot, b_dot, B_KCONTIG)
    _amd_store(acc, c_ptr, M, N, pid_m, pid_n, stride_cm)


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


_GLUON_DTYPES = {torch.bfloat16: "bfloat16", torch.float16: "float16"}
_GLUON_FP8 = torch.float8_e4m3fn  # sm_90's Gluon kernel takes it too: A row-major, B K-major, C bf16


def _gluon_ready(a, b, c) -> bool:
    """Whether sm_90's Gluon kernel takes these tensors: rows the TMA takes (_tma_ready), A and C
    row-major, and either 16-bit A, B and C of one dtype with B row-major, or fp8 e4m3 A and B with B
    K-major and a bf16 C (as fp8 wgmma and torch._scaled_mm want them)."""
    if a.stride(1) != 1 or c.stride(1) != 1 or not _tma_ready(a, b, c):
        return False
    if a.dtype == b.dtype == _GLUON_FP8:
        return b.stride(0) == 1 and c.dtype == torch.bfloat16
    return a.dtype in _GLUON_DTYPES and b.dtype == c.dtype == a.dtype and b.stride(1) == 1


def _amd_gluon_ready(a, b, c, block_m, block_k) -> bool:
    """Whether the AMD Gluon kernel takes these tensors: 16-bit A, B and C of one dtype, row-major (B
    not K-major), and a tile's offsets from its corner (32-bit byte offsets of the buffer loads and
    stores) below 2 GiB."""
    return (a.dtype in _GLUON_DTYPES and b.dtype == c.dtype == a.dtype
            and a.stride(1) == b.stride(1) == c.stride(1) == 1
            and max(block_m * a.stride(0), block_k * b.stride(0), block_m * c.stride(0)) * a.element_size() < 2**31)


def gluon_descriptors(a, b, c, block_m, block_n, block_k, epilogue_n) -> tuple:
    """Host-built TMA descriptors of A, B and C for matmul_gluon_kernel, in NVMMA shared layouts (the
    128-byte swizzle where the tile's rows allow it). A K-major B (fp8) is described as Bᵀ, N rows of K,
    in [block_n, block_k] tiles; C in [block_m, epilogue_n] slices, the epilogue's stores."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    def descriptor(t, block):
        element = gl.float8e4nv if t.dtype == _GLUON_FP8 else getattr(gl, _GLUON_DTYPES[t.dtype])
        return TensorDescriptor.from_tensor(t, block, gl.NVMMASharedLayout.get_default_for(block, element))

    b_tile = descriptor(b.t(), [block_n, block_k]) if b.stride(0) == 1 else descriptor(b, [block_k, block_n])
    return descriptor(a, [block_m, block_k]), b_tile, descriptor(c, [block_m, epilogue_n])


def _scratch(size, alignment, stream):
    """Global memory for the descriptors matmul_tma_kernel builds on the device."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def _launch_hopper_gluon(k, a, b, c, params, tiles: int, splits: int, k_per_split: int) -> None:
    """sm_90's Gluon kernel, its K splits (if any) reduced in the kernel: their fp32 partials (a workspace of
    whole tiles; after the first call torch's caching allocator hands back the same block) and a zeroed
    counter a tile."""
    (m, kk), n = a.shape, b.shape[1]
    bm, bn, bk = params["BLOCK_M"], params["BLOCK_N"], params["BLOCK_K"]
    work = torch.empty(((splits - 1) * tiles * bm * bn,), dtype=torch.float32, device=a.device) if splits > 1 else c
    # zeroed on the launch's stream every call (a memset of 4 bytes a tile): two calls at once on two
    # streams never share counters (launch may not ask for the stream: kt rejects it)
    counts = torch.zeros(tiles, dtype=torch.int32, device=a.device) if splits > 1 else c
    # with K splits the epilogue takes slices of at most 64 columns: a slice and the partial added to it
    # fit the registers beside each other (a whole 128-column slice and its partial spill)
    epilogue_n = min(params.get("EPILOGUE_N", bn), 64) if splits > 1 else params.get("EPILOGUE_N", bn)
    # a multiple of the splits: a tile's splits land on neighbouring programs of one round of the walk,
    # its last split on the highest of them (_gl_reduce_splits)
    grid = min(tiles * splits, params["UNITS"] * params["PROGRAMS_PER_UNIT"]) // splits * splits
    k.matmul_gluon_kernel[(grid,)](
        *gluon_descriptors(a, b, c, bm, bn, bk, epilogue_n), m, n, kk, k_per_split, work, counts,
        GROUP_M=params["GROUP_M"], num_stages=params.get("num_stages", 3),
        PRODUCER_REGS=params.get("PRODUCER_REGS", PRODUCER_REGS), SPLITS=splits, B_KMAJOR=b.stride(0) == 1)


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
    splits, k_per_split = 1, kk
    if split_k > 1:
        # every split's K range is a whole number of BLOCK_K steps, so only the last one is ragged
        k_per_split = triton.cdiv(triton.cdiv(kk, split_k), bk) * bk
        splits = triton.cdiv(kk, k_per_split)
    gluon, tma = params.get("GLUON", 0), params.get("TMA", 0)
    if gluon and tma and per_unit and _gluon_ready(a, b, c):
        _launch_hopper_gluon(k, a, b, c, params, tiles, splits, k_per_split)
        return
    # allocated per call: after the first, torch's caching allocator hands back the same block
    work = torch.empty((splits, m, n), dtype=torch.float32, device=a.device) if splits > 1 else None
    out = c if work is None else work
    # GLUON = 1 is sm_90's kernel where TMA = 1 (persistent: above), the AMD kernel where TMA = 0 (its
    # constraints: a program per tile, no split-K). A config that asks for Gluon on tensors its kernel cannot
    # take runs the plain kernels (AMD) or the TMA variant's (sm_90) below.
    if gluon and not tma and not per_unit and work is None and _amd_gluon_ready(a, b, c, bm, bk):
        amd_units = [_unit(v) for v in (m, n, kk, a.stride(0), b.stride(0), c.stride(0))]
        k.matmul_amd_gluon_kernel[(tiles,)](
            a, b, c, *[v // u for v, u in zip((m, n, kk, a.stride(0), b.stride(0), c.stride(0)), amd_units)],
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm,
            **dict(zip(("M_UNIT", "N_UNIT", "K_UNIT", "AM_UNIT", "BK_UNIT", "CM_UNIT"), amd_units)),
            num_stages=params.get("num_stages", 2))
    elif per_unit and params.get("TMA", 0) and a.stride(1) == 1 and out.stride(-1) == 1 and _tma_ready(a, b, out):
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
    also writes and reads back its fp32 partial sums (every split's through the reduction kernel; all but
    the last split's in the Gluon kernel, whose last split adds them in registers)."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    reads = m * k * triton.cdiv(n, params["BLOCK_N"]) + k * n * triton.cdiv(m, params["BLOCK_M"])
    split_k = params.get("SPLIT_K", 1)
    written = split_k - 1 if params.get("GLUON") and params.get("TMA") else split_k
    partials = 2 * written * m * n * 4 if split_k > 1 else 0
    return reads * dtype.itemsize + m * n * _out_dtype(dtype).itemsize + partials


def lockstep_reads(shape, dtype, params):
    """The tile re-reads (every read of an A or B tile after its first): programs of one wave, grouped
    GROUP_M rows at a time, read a row's A tiles and a column's B tiles at the same K step."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    rereads = m * k * (triton.cdiv(n, params["BLOCK_N"]) - 1) + k * n * (triton.cdiv(m, params["BLOCK_M"]) - 1)
    return rereads * dtype.itemsize


def pipeline_stages(shape, dtype, params):
    """The K loop's ring of A and B tiles in shared memory: num_stages (Triton's pipeliner, the Gluon
    kernels' rings)."""
    return params.get("num_stages", 0)


def work_items(shape, dtype, params):
    """Output tiles (times the K splits): a persistent grid's programs walk through them."""
    tiles = triton.cdiv(shape["M"], params["BLOCK_M"]) * triton.cdiv(shape["N"], params["BLOCK_N"])
    return tiles * params.get("SPLIT_K", 1)


def shape_of(inputs):
    (m, k), n = inputs["a"].shape, inputs["b"].shape[1]
    return {"M": m, "N": n, "K": k}


def load_warps(shape, dtype, params):
    """sm_90's warp-specialized Gluon kernel (GLUON = 1 with TMA = 1) loads from one producer warp; the
    other variants load from the warps that compute."""
    return 1.0 if params.get("GLUON") and params.get("TMA") else 0.0
