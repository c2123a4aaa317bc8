"""Attention forward, flash-attention style: O = softmax(Q K^T / sqrt(D)) V, never materialising the
S x S scores. One program owns BLOCK_M query rows of one (batch, head) and streams K/V in BLOCK_N
blocks with an online softmax (running max and sum in fp32, exp2 with the scale folded in).

Shape: B, H (query heads), H_KV (key/value heads; H_KV divides H: grouped-query attention, query head
h reads kv head h // (H // H_KV)), S (sequence, queries and keys), D (head dim, a power of two:
64, 128), and CAUSAL = 1 for causal masking. Recipe sizes must be positive, so full (non-causal)
attention is a shape without CAUSAL.

Key blocks that no mask touches (every key before the query block when causal; every whole block
when not) run a loop without masks; only the diagonal or ragged tail block pays for them, hence
BLOCK_N must divide BLOCK_M.

TMA = 1 (targets whose property `tma` is 1: sm_90 and later): Q, K, V and O tiles move through tensor
descriptors built on the device (4-D, [B, heads, S, D]): the Tensor Memory Accelerator zero-fills
keys past S and drops stores past it, so no load is masked and no address is computed per element,
which frees registers for the tiles. Measured on an H100 against the pointer kernel, best configs of
each: causal D128 0.80x vs 0.77x SDPA, full D128 0.86x vs 0.79x. A layout the TMA cannot take (a
stride not a multiple of 16 bytes) runs the pointer kernel.

GLUON = 1 (with TMA = 1, targets whose property `wgmma` is 1: sm_90 only; fp16/bf16): a FlashAttention-3
style kernel written in Gluon, Triton's layout-explicit dialect, since plain Triton does not
warp-specialize on sm_90 (attention_gluon_kernel). Persistent for full attention: a program per SM walks
the query tiles (batch x head x query block), its K/V ring running on from tile to tile so the next tile's
first key blocks load while this one finishes (H200: 2.7% faster at full D128); causal attention runs a
program per tile, longest first (a fixed round of tiles per program unbalanced them: 1.7-2.8% slower).
A producer warp (PRODUCER_REGS registers) loads each tile's Q once and each key
block's K and V tiles into a ring of num_stages shared-memory stages through host-built 4-D TMA
descriptors ([B, heads, S, D], blocks [1, 1, rows, D]: rows past S are zero-filled on loads and dropped
on stores, never another head's), each tile guarded by a `ready` and an `empty` mbarrier. The query
tile's BLOCK_M rows go to BLOCK_M / (16 num_warps) consumer partitions (16 query rows a warp per wgmma):
one of num_warps warps (one warpgroup, or two in lockstep: every mbarrier arrival syncs the partition), or
two independent warpgroups of 64 rows (the default partition and a worker, num_warps = 4), which share
each K and V stage (its `empty` barrier counts one arrival a consumer); causal consumers stop at their own
diagonal and hand back unread the blocks past it. Two consumers take turns at the tensor cores
(FlashAttention-3's ping-pong, through two mbarriers: _gl_attn_pingpong), so that one's softmax runs while
the other's wgmma do, wherever a turn's wgmma exceed 64 x 64 x 64 (D = 64 over 64-key blocks runs serial
steps); waiting for each turn's wgmma at once, they compile without ptxas serialising them (C7512), which
every other two-consumer schedule at D = 128 or over 128-key blocks met (TWO_CONSUMER_REGS). Each
consumer computes S = Q K^T by an asynchronous wgmma from shared memory, the online softmax in fp32
registers, and O += P V by a wgmma whose A operand is P in registers, rounded to the input dtype. Where O
and two blocks of scores fit 128 fp32 registers a consumer thread, block j+1's Q K^T is issued before
block j's softmax and runs under it, and P_j V_j runs under the next softmax (FlashAttention-3's
intra-warpgroup overlap); larger tiles wait for each Q K^T (P V still overlaps the next Q K^T). Causal
programs stop at the diagonal and mask only the blocks crossing it; full attention masks only a ragged
last block (keys past S). O is normalised, written over Q's shared tile and stored by the TMA (by the
first consumer, once both have written theirs), which then frees Q's tile for the next (q_empty). A launch
it cannot take (another dtype, a head dim not a multiple of 16, a stride the TMA cannot take) runs the TMA
kernel. Gluon kernels do not run under
Triton's CPU interpreter: static mode cross-compiles such a point and records it unverified (failure
kind `interpreter`), so it never wins there; measured mode verifies it on the GPU. Measured on an H200
(bf16 B4 H32 S4096, BENCHMARKS.md thirtieth session, two consumers taking turns): 0.89-0.91x SDPA at full
D128 (persistent), 0.84-0.90x at causal D128, 0.81-0.91x with 8 KV heads, 0.86-0.87x SDPA and 1.14-1.15x
the TMA kernel at causal D64.

GLUON = 1 with TMA = 0 (targets whose property `mfma_gluon` is 1: gfx942, gfx950; fp16/bf16): a
FlashAttention-2 forward written in Gluon for CDNA3/CDNA4 (attention_amd_gluon_kernel): no TMA, no
mbarriers, no warp specialization. One program per (query tile, batch x head), causal tiles longest first;
num_warps waves of 64 lanes stacked over the BLOCK_M query rows (16 rows a wave or more), so a row's
softmax stays within a wave. The Q tile comes once by buffer loads (rows past S masked) through a padded
LDS tile into an MFMA operand; each key block's K and V tiles come by buffer loads from scalar per-block
bases (keys past S masked: the hardware returns zeros) into registers, one block ahead of the MFMAs with
num_stages = 2 (none with 1), then through row-padded LDS tiles into operand layouts (V, N-contiguous, is
read by gfx950's transposing LDS read, and on gfx942 transposed in registers into a key-contiguous tile, as
the library GEMM's B). S = Q K^T and O += P V are MFMAs (16x16 or 32x32 blocks: matrix_instr_nonkdim, 32x32
only where a wave's rows, the key block and D are 32 or more) into fp32 accumulators of one AMDMFMALayout,
whose row slice holds the running max and sum; the scale is folded into exp2 and P is rounded to the input
dtype. Causal programs stop at the diagonal and mask only the blocks crossing it; full attention masks
only a ragged last block. O / l leaves by buffer stores (rows past S masked). Tensors it cannot take
(another dtype, D not a multiple of 16, a last dim not contiguous) run the pointer kernel. Never run on an
AMD GPU: cross-compiled and resource-checked only (docs/amd.md); under Triton's CPU interpreter it is an
`interpreter` failure, as every Gluon kernel is.
"""

import functools
import math

import torch
import torch.nn.functional as F
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

OUTPUTS = ("o",)
SPACE = {
    "BLOCK_M": [16, 32, 64, 128, 256],
    "BLOCK_N": [16, 32, 64, 128],
    "num_warps": [4, 8],
    "num_stages": [1, 2, 3, 4],
    "TMA": [0, 1],
    "GLUON": [0, 1],
}
CONSTRAINTS = [
    "BLOCK_M % BLOCK_N == 0",  # the unmasked loop ends on a block edge
    "(BLOCK_M + 2 * BLOCK_N * max(num_stages - 1, 1)) * D * dtype_bytes <= smem_bytes",  # Q, K and V tiles
    "(BLOCK_M * D + BLOCK_M * BLOCK_N) // (warp_size * num_warps) <= 256",  # fp32 O and scores per thread
    "BLOCK_M <= 2 * S",
    "TMA == 0 or tma == 1",
    # The Gluon variants: sm_90's (wgmma) and AMD's (CDNA3/CDNA4, `mfma_gluon`); this rule names no knob but
    # GLUON, so it holds even where a recipe's space lacks TMA (as AMD spaces do)
    "GLUON == 0 or wgmma == 1 or mfma_gluon == 1",
    # sm_90's (targets whose `wgmma` is 1): the TMA's descriptors, 16-bit inputs, a head dim the wgmma takes
    "GLUON == 0 or wgmma == 0 or (TMA == 1 and wgmma == 1 and dtype_bytes == 2 and D % 16 == 0)",
    # each consumer warp takes 16 rows of a wgmma (a warpgroup 64); a ring of at least two stages (the
    # next block's K lands while this block's V is still read)
    "GLUON == 0 or wgmma == 0 or (num_warps % 4 == 0 and BLOCK_M % (16 * num_warps) == 0 and num_stages >= 2)",
    # the query tile's BLOCK_M / (16 * num_warps) consumer partitions: one (of num_warps warps), or two
    # independent warpgroups of 64 rows, which take turns at the tensor cores (_gl_overlap): on an H200 the
    # fastest Gluon configs at every D = 128 and causal D = 64 problem (results/s40/call5)
    "GLUON == 0 or wgmma == 0 or BLOCK_M == 16 * num_warps or (BLOCK_M == 128 and num_warps == 4)",
    # fp32 registers per consumer thread of O and one block's scores, 16 rows a warp (sm_90
    # cross-compiles past 160 spill, or ptxas serialises the wgmma)
    "GLUON == 0 or wgmma == 0 or 16 * num_warps * (D + BLOCK_N) // (32 * num_warps) <= 160",
    # the Q tile (O leaves through it) and the ring of num_stages K and V tiles, all in shared memory at once
    "GLUON == 0 or wgmma == 0 or (BLOCK_M + 2 * BLOCK_N * num_stages) * D * dtype_bytes + 1024 <= smem_bytes",
    # The Gluon variant for CDNA3/CDNA4 (targets whose `mfma_gluon` is 1: gfx942, gfx950): tensors the launch
    # gives it (16-bit, D a multiple of 16: others run the pointer kernel), one block of K and V prefetched at
    # most (num_stages 3 and 4 cross-compile to the same code as 2). No TMA here: AMD spaces need not list it,
    # and `TMA == 0 or tma == 1` above keeps it 0 where they do. Its LDS, the Q tile, then the padded K and V
    # tiles in the same bytes (max(BLOCK_M, 2 BLOCK_N) (D + 8) elements), is within the Q, K and V budget
    # above, which rejects what does not fit (128 x 128 at D = 128 on gfx942: 69600 bytes compiled)
    "GLUON == 0 or mfma_gluon == 0 or (dtype_bytes == 2 and D % 16 == 0 and num_stages <= 2)",
    # the waves take 16 query rows or more each (MFMA blocks of 16 or 32 rows): with fewer, two waves
    # compute the same rows (gfx942, 32 query rows on 4 waves, 32-key blocks at D = 64: as many MFMAs as
    # 64 rows)
    "GLUON == 0 or mfma_gluon == 0 or BLOCK_M % (16 * num_warps) == 0",
    # vector registers per lane: fp32 O and scores (BLOCK_M / num_warps rows a wave) and the K and V tiles
    # every wave reads whole. Cross-compiled for gfx942 and gfx950 (Triton 3.9: 192 points of the default
    # space at D = 64 and 128; 3.6: those from 640 to 896): up to 768 nothing spills (4 waves may take AGPRs:
    # 512 registers a lane, 256 with 8 waves); at 896 Triton 3.6 spills on 4 waves (256 x 64 at D = 128,
    # 256 x 128 at D = 64), at 1024 3.9 spills on 8 (128 x 128 at D = 128 prefetched)
    "GLUON == 0 or mfma_gluon == 0 or BLOCK_M * (D + BLOCK_N) // 64 + BLOCK_N * D * num_warps // 256 <= 768",
]
# Evaluated first in a new study where they fit: the best configs measured on an H100 (TMA, one
# warpgroup over 128 query rows) and the pointer kernel's.
SEEDS = [{"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2, "TMA": 1},
         {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2, "TMA": 1},
         {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3, "TMA": 0},
         # the Gluon variant where the space has it (sm_90): the H200's best at D = 128 and causal D = 64, two
         # independent consumer warpgroups of 64 rows taking turns over 128-key blocks, 2 stages; the H100's,
         # one partition of two warpgroups over 128 query rows, 128 x 128 blocks, 3 stages; then two
         # consumers over 64-key blocks, 3 stages (turns at D = 128, serial steps at D = 64)
         {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4, "num_stages": 2, "TMA": 1, "GLUON": 1},
         {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3, "TMA": 1, "GLUON": 1},
         {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3, "TMA": 1, "GLUON": 1},
         # the AMD Gluon variant where the space has it (gfx942, gfx950): 4 waves of 32 query rows over 64-key
         # blocks, prefetched, then 8 waves of 16 rows (both fit gfx942's 64 KiB of LDS at D = 128)
         {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2, "GLUON": 1},
         {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2, "GLUON": 1}]
_ROUNDED_P = ("P is rounded to the input dtype before P @ V, as FlashAttention does, and the softmax runs "
              "online over key blocks: errors scale with the outputs' typical size, not each element's")
TOLERANCE = {  # element-wise; `rms` scales with RMS(ref) (kt_cli.evaluate.verify.Tolerance)
    "float32": {"rtol": 2e-3, "atol": 1e-5, "rms": 2e-3, "why": "tl.dot takes fp32 inputs as tf32; " + _ROUNDED_P},
    "float16": {"rtol": 1e-3, "atol": 1e-5, "rms": 4e-3, "why": _ROUNDED_P},
    "bfloat16": {"rtol": 1.6e-2, "atol": 1e-5, "rms": 2e-2, "why": _ROUNDED_P},
}
VERIFY_SHAPES = [
    {"B": 1, "H": 4, "H_KV": 2, "S": 37, "D": 16, "CAUSAL": 1},
    {"B": 2, "H": 2, "H_KV": 1, "S": 45, "D": 32},
]

LOG2E = 1.4426950408889634


@triton.jit
def _attend(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_kd, stride_vn, stride_vd, rows, offs_d, lo, hi,
            n_keys, qk_scale, BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """Fold keys lo..hi into the running (acc, l_i, m_i); MASKED adds the key bound and causal masks."""
    offs_n = tl.arange(0, BLOCK_N)
    for start in range(lo, hi, BLOCK_N):
        cols = start + offs_n
        k_ptrs = k_base + cols[None, :].to(tl.int64) * stride_kn + offs_d[:, None] * stride_kd
        v_ptrs = v_base + cols[:, None].to(tl.int64) * stride_vn + offs_d[None, :] * stride_vd
        if MASKED:
            k = tl.load(k_ptrs, mask=cols[None, :] < n_keys, other=0.0)
        else:
            k = tl.load(k_ptrs)
        s = tl.dot(q, k) * qk_scale
        if MASKED:
            keep = cols[None, :] < n_keys
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None])
            s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        if MASKED:
            v = tl.load(v_ptrs, mask=cols[:, None] < n_keys, other=0.0)
        else:
            v = tl.load(v_ptrs)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, qk_scale, heads_per_kv, H,
                     stride_qb, stride_qh, stride_qs, stride_qd, stride_kb, stride_kh, stride_ks, stride_kd,
                     stride_vb, stride_vh, stride_vs, stride_vd, stride_ob, stride_oh, stride_os, stride_od,
                     D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    b, h = (bh // H).to(tl.int64), bh % H
    kv = (h // heads_per_kv).to(tl.int64)
    rows = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q_ptrs = q_ptr + b * stride_qb + h.to(tl.int64) * stride_qh + rows[:, None] * stride_qs + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=rows[:, None] < S, other=0.0)
    k_base = k_ptr + b * stride_kb + kv * stride_kh
    v_base = v_ptr + b * stride_vb + kv * stride_vh
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    m_i = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    if CAUSAL:
        unmasked_end = start_m  # every key before the block is visible to every row of it
        masked_end = tl.minimum(start_m + BLOCK_M, S)
    else:
        unmasked_end = (S // BLOCK_N) * BLOCK_N
        masked_end = S
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_kd, stride_vs, stride_vd, rows, offs_d,
                            0, unmasked_end, S, qk_scale, BLOCK_N, False, CAUSAL)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_kd, stride_vs, stride_vd, rows, offs_d,
                            unmasked_end, masked_end, S, qk_scale, BLOCK_N, True, CAUSAL)
    o = acc / l_i[:, None]
    o_ptrs = o_ptr + b * stride_ob + h.to(tl.int64) * stride_oh + rows[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < S)


@triton.jit
def _attend_tma(acc, l_i, m_i, q, k_desc, v_desc, b, kv, rows, lo, hi, n_keys, qk_scale, BLOCK_N: tl.constexpr,
                D: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """_attend with K and V tiles loaded by the TMA (zero past S); the scale is applied to the scores
    inside the exponent, one FMA an element."""
    offs_n = tl.arange(0, BLOCK_N)
    for start in range(lo, hi, BLOCK_N):
        k = k_desc.load([b, kv, start, 0]).reshape(BLOCK_N, D)
        s = tl.dot(q, k.T)
        if MASKED:
            cols = start + offs_n
            keep = cols[None, :] < n_keys
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None])
            s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        p = tl.exp2(s * qk_scale - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([b, kv, start, 0]).reshape(BLOCK_N, D)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attention_tma_kernel(q_ptr, k_ptr, v_ptr, o_ptr, B, H, H_KV, S, qk_scale, stride_qb, stride_qh, stride_qs,
                         stride_kb, stride_kh, stride_ks, stride_vb, stride_vh, stride_vs, stride_ob, stride_oh,
                         stride_os, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    b = tl.program_id(1) // H
    h = tl.program_id(1) % H
    kv = h // (H // H_KV)
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[B, H, S, D], strides=[stride_qb, stride_qh, stride_qs, 1],
                                       block_shape=[1, 1, BLOCK_M, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[B, H_KV, S, D], strides=[stride_kb, stride_kh, stride_ks, 1],
                                       block_shape=[1, 1, BLOCK_N, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[B, H_KV, S, D], strides=[stride_vb, stride_vh, stride_vs, 1],
                                       block_shape=[1, 1, BLOCK_N, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[B, H, S, D], strides=[stride_ob, stride_oh, stride_os, 1],
                                       block_shape=[1, 1, BLOCK_M, D])
    rows = start_m + tl.arange(0, BLOCK_M)
    q = q_desc.load([b, h, start_m, 0]).reshape(BLOCK_M, D)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    m_i = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    if CAUSAL:
        unmasked_end = start_m
        masked_end = tl.minimum(start_m + BLOCK_M, S)
    else:
        unmasked_end = (S // BLOCK_N) * BLOCK_N
        masked_end = S
    acc, l_i, m_i = _attend_tma(acc, l_i, m_i, q, k_desc, v_desc, b, kv, rows, 0, unmasked_end, S, qk_scale,
                                BLOCK_N, D, False, CAUSAL)
    acc, l_i, m_i = _attend_tma(acc, l_i, m_i, q, k_desc, v_desc, b, kv, rows, unmasked_end, masked_end, S,
                                qk_scale, BLOCK_N, D, True, CAUSAL)
    o = acc / l_i[:, None]
    o_desc.store([b, h, start_m, 0], o.to(o_ptr.dtype.element_ty).reshape(1, 1, BLOCK_M, D))


@gluon.constexpr_function
def _gl_mma_layout(n, warps):
    """A wgmma accumulator n columns wide: the consumer warps stacked along M, 16 rows a warp per wgmma
    (a warpgroup's wgmma covers 64 rows), one wgmma as wide as the tile (n <= 256)."""
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[warps, 1], instr_shape=[16, n, 16])


@gluon.constexpr_function
def _gl_overlap(OVERLAP, rows, BLOCK_N, D, warps, consumers):
    """How a consumer overlaps softmax and wgmma: 1, a block's softmax under the next block's Q K^T
    (_gl_attn_pipelined); 0, not (_gl_attn_step_serial); PINGPONG (two consumer partitions only), the two
    take turns at the tensor cores (_gl_attn_pingpong). OVERLAP picks; -1, the kernel's choice, from an
    H200 (bf16 B4 H32 S4096, results/s40/call5): two consumers take turns wherever a turn's wgmma are
    larger than 64 x 64 x 64 (the fastest config at every D = 128 and causal D = 64 problem there: 1.03-1.20x
    their serial steps), and run serial steps at D = 64 over 64-key blocks (turns 1.16x slower there, the
    softmax overlap 1.16x); one consumer partition overlaps where O and the scores of two blocks take at
    most 128 fp32 registers a thread (with more, ptxas spills or serialises the wgmma, as sm_90
    cross-compiles show for 128 x 128 blocks at D = 128)."""
    if OVERLAP == PINGPONG.value and consumers != 2:
        raise ValueError("the ping-pong (OVERLAP 2) takes two consumer partitions")
    if OVERLAP >= 0:
        return OVERLAP
    if consumers == 2:
        return PINGPONG.value if BLOCK_N * D > 64 * 64 else 0
    return 1 if (rows * D + 2 * rows * BLOCK_N) // (32 * warps) <= 128 else 0


PINGPONG = gl.constexpr(2)  # OVERLAP: two consumer partitions take turns at the tensor cores


# Two consumer partitions: registers a thread of the worker consumer warpgroup and of the producer's warpgroup
# (one warp, padded to a warpgroup) ask for; Triton caps a thread of the 12 warps at 65536 / 384 -> 168 and
# gives the default partition (consumer 0) what the workers leave: 3 x 168 - 192 - 120 = 192, the same as
# consumer 1. sm_90 cross-compiles (ptxas of Triton 3.6 and 3.9) serialise every wgmma of the kernel
# (C7512, "insufficient register resources") once a worker partition issues wgmma and the producer's
# warpgroup asks for fewer registers (FlashAttention-3's 24 or 40 serialise even 64-wide tiles; 104 and up
# do not); with 120 they take D = 64 with BLOCK_N <= 64 cleanly, 128-wide accumulators (D = 128 or
# BLOCK_N = 128) still serialise, with any split of the registers (240 and 24, 232 and 40, 216 and 72 tried,
# Triton 3.6 and 3.9, with and without the softmax overlap). Taking turns (_gl_attn_pingpong), where each
# turn waits for its wgmma at once and no accumulator stays in flight under other code, they compile cleanly
# at every tile (128 x 128 at D = 128 spills 88 bytes a thread with Triton 3.6, 232 with 3.9).
TWO_CONSUMER_REGS = gl.constexpr(192)
TWO_CONSUMER_PRODUCER_REGS = gl.constexpr(120)


@gluon.jit
def _gl_attn_tile(t, H, H_KV, S, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
    """Tile t's (batch, query head, kv head, first query row, key blocks). Tiles run query block by query
    block within a (batch, head), whose K and V the programs working at once share in the L2; causal
    tiles take the query blocks last first, so the longest rows start first and the short ones fill the
    tail."""
    n_m = gl.cdiv(S, BLOCK_M)
    pid_m = t % n_m
    if CAUSAL:
        pid_m = n_m - 1 - pid_m
    b = (t // n_m) // H
    h = (t // n_m) % H
    start_m = pid_m * BLOCK_M
    if CAUSAL:
        hi = gl.minimum(start_m + BLOCK_M, S)  # no key block wholly above the diagonal
    else:
        hi = S
    return b, h, h // (H // H_KV), start_m, gl.cdiv(hi, BLOCK_N)


@gluon.jit
def _gl_kv_load(k_desc, v_desc, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty, b, kv, j, r):
    """Key block j's K and V tiles into stage r % STAGES of their rings (r: the ring's running count of
    blocks), each once every consumer has handed that stage back (separate barriers: Q K^T starts before
    V has landed). A fresh mbarrier counts as having completed the phase before its first: the first lap
    through the ring does not wait."""
    BLOCK_N: gl.constexpr = k_desc.block_type.shape[2]
    STAGES: gl.constexpr = k_ring.type.shape[0]
    s = r % STAGES
    phase = (r // STAGES) & 1
    mbarrier.wait(k_empty.index(s), phase ^ 1)
    mbarrier.expect(k_ready.index(s), k_desc.block_type.nbytes)
    _tma_load(k_desc, [b, kv, j * BLOCK_N, 0], k_ready.index(s), k_ring.index(s))
    mbarrier.wait(v_empty.index(s), phase ^ 1)
    mbarrier.expect(v_ready.index(s), v_desc.block_type.nbytes)
    _tma_load(v_desc, [b, kv, j * BLOCK_N, 0], v_ready.index(s), v_ring.index(s))


@gluon.jit
def _gl_attn_load(q_desc, k_desc, v_desc, q_smem, k_ring, v_ring, q_ready, q_empty, k_ready, v_ready, k_empty, v_empty,
                  B, H, H_KV, S, CAUSAL: gl.constexpr):
    """The producer warp, tile after tile of the program (_gl_attn_tile): the first key blocks' K and V
    (as many as the ring holds, into stages the consumers free while they finish the tile before), then
    the Q tile once the tile before's O has left Q's shared memory (q_empty), then the other blocks."""
    BLOCK_M: gl.constexpr = q_desc.block_type.shape[2]
    BLOCK_N: gl.constexpr = k_desc.block_type.shape[2]
    STAGES: gl.constexpr = k_ring.type.shape[0]
    r = 0  # blocks through the ring so far
    done = 0  # tiles so far
    for t in range(gl.program_id(0), gl.cdiv(S, BLOCK_M) * B * H, gl.num_programs(0)):
        b, h, kv, start_m, n_blocks = _gl_attn_tile(t, H, H_KV, S, BLOCK_M, BLOCK_N, CAUSAL)
        ahead = gl.minimum(n_blocks, STAGES)
        for j in range(ahead):
            _gl_kv_load(k_desc, v_desc, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty, b, kv, j, r + j)
        mbarrier.wait(q_empty, (done & 1) ^ 1)
        mbarrier.expect(q_ready, q_desc.block_type.nbytes)
        _tma_load(q_desc, [b, h, start_m, 0], q_ready, q_smem)
        for j in range(ahead, n_blocks):
            _gl_kv_load(k_desc, v_desc, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty, b, kv, j, r + j)
        r += n_blocks
        done += 1


@gluon.jit
def _gl_softmax(s, m_i, l_i, rows, cols, S, qk_scale, masked, CAUSAL: gl.constexpr):
    """One key block of the online softmax, in fp32 with the scale folded into exp2: P (unnormalised),
    the factor alpha that rescales what came before, the new running max and sum. `masked` (the
    diagonal block, or the block holding key S): keys past S, and above the diagonal when causal, are
    -inf; rows past S are computed and never stored."""
    if masked:
        keep = gl.expand_dims(cols, 0) < S
        if CAUSAL:
            keep = keep & (gl.expand_dims(cols, 0) <= gl.expand_dims(rows, 1))
        s = gl.where(keep, s, -float("inf"))
    m_new = gl.maximum(m_i, gl.max(s, 1) * qk_scale)
    p = gl.exp2(s * qk_scale - gl.expand_dims(m_new, 1))
    alpha = gl.exp2(m_i - m_new)
    return p, alpha, m_new, l_i * alpha + gl.sum(p, 1)


@gluon.jit
def _gl_qk(q, k_ring, k_ready, j, ROWS: gl.constexpr):
    """Issue S = Q K_j^T (asynchronous wgmma, both operands in shared memory) once K_j has landed."""
    STAGES: gl.constexpr = k_ring.type.shape[0]
    BLOCK_N: gl.constexpr = k_ring.type.shape[3]
    D: gl.constexpr = k_ring.type.shape[4]
    mbarrier.wait(k_ready.index(j % STAGES), (j // STAGES) & 1)
    s_zero = gl.zeros([ROWS, BLOCK_N], gl.float32, _gl_mma_layout(BLOCK_N, gl.num_warps()))
    return warpgroup_mma(q, k_ring.index(j % STAGES).reshape([BLOCK_N, D]).permute((1, 0)), s_zero, use_acc=False,
                         is_async=True)


@gluon.jit
def _gl_pv(p, acc, alpha, v_ring, v_ready, j):
    """Rescale O by alpha and issue O += P V_j (asynchronous wgmma, P the register operand) once V_j has
    landed; the P @ V before must be done."""
    STAGES: gl.constexpr = v_ring.type.shape[0]
    BLOCK_N: gl.constexpr = v_ring.type.shape[3]
    D: gl.constexpr = v_ring.type.shape[4]
    o_layout: gl.constexpr = _gl_mma_layout(D, gl.num_warps())
    acc = acc * gl.expand_dims(gl.convert_layout(alpha, gl.SliceLayout(1, o_layout)), 1)
    p = gl.convert_layout(p.to(v_ring.dtype), gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2))
    mbarrier.wait(v_ready.index(j % STAGES), (j // STAGES) & 1)
    return warpgroup_mma(p, v_ring.index(j % STAGES).reshape([BLOCK_N, D]), acc, is_async=True)


@gluon.jit
def _gl_attn_step(j, c, q, s_cur, acc, m_i, l_i, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty, rows, cols, S,
                  qk_scale, first_masked, CAUSAL: gl.constexpr):
    """Block j of the pipelined loop, block j + 1 existing. In: S_j in registers, P_{j-1} V_{j-1} maybe in
    flight. Q K_{j+1}^T is issued first, and both it and P_{j-1} V_{j-1} run under block j's softmax; both
    are then waited for (their K and V stages go back) and P_j V_j is issued. Out: S_{j+1} in registers,
    P_j V_j in flight."""
    STAGES: gl.constexpr = k_ring.type.shape[0]
    ROWS: gl.constexpr = s_cur.type.shape[0]
    BLOCK_N: gl.constexpr = s_cur.type.shape[1]
    s_next = _gl_qk(q, k_ring, k_ready, j + 1, ROWS)
    p, alpha, m_i, l_i = _gl_softmax(s_cur, m_i, l_i, rows, (j - c) * BLOCK_N + cols, S, qk_scale,
                                     j - c >= first_masked, CAUSAL)
    # in flight: P @ V of the block before, then Q K^T of the next, both issued before the softmax. Waiting
    # for the first only (num_outstanding=1) would let P V_j queue behind Q K_{j+1}^T sooner, but then
    # ptxas cannot prove the rescale reads a finished accumulator and serialises every wgmma (C7514)
    s_next, acc = warpgroup_mma_wait(num_outstanding=0, deps=(s_next, acc))
    mbarrier.arrive(k_empty.index((j + 1) % STAGES), count=1)
    mbarrier.arrive(v_empty.index((j + STAGES - 1) % STAGES), count=1, pred=j > c)
    # P_j V_j stays in flight under the next block's Q K^T issue and softmax (a wait that leaves it so
    # turns the token into a tensor, read only after the next step's wait)
    acc = warpgroup_mma_wait(num_outstanding=1, deps=(_gl_pv(p, acc, alpha, v_ring, v_ready, j), ))
    return s_next, acc, m_i, l_i


@gluon.jit
def _gl_attn_step_serial(j, c, q, acc, m_i, l_i, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty, rows, cols, S,
                         qk_scale, first_masked, CAUSAL: gl.constexpr):
    """Block j without the overlap, for tiles whose scores of two blocks do not fit the registers: Q K_j^T
    is issued while P_{j-1} V_{j-1} may still run, both are waited for, then the softmax; P_j V_j stays in
    flight."""
    STAGES: gl.constexpr = k_ring.type.shape[0]
    ROWS: gl.constexpr = acc.type.shape[0]
    BLOCK_N: gl.constexpr = k_ring.type.shape[3]
    s, acc = warpgroup_mma_wait(num_outstanding=0, deps=(_gl_qk(q, k_ring, k_ready, j, ROWS), acc))
    mbarrier.arrive(k_empty.index(j % STAGES), count=1)
    mbarrier.arrive(v_empty.index((j + STAGES - 1) % STAGES), count=1, pred=j > c)
    p, alpha, m_i, l_i = _gl_softmax(s, m_i, l_i, rows, (j - c) * BLOCK_N + cols, S, qk_scale, j - c >= first_masked,
                                     CAUSAL)
    acc = warpgroup_mma_wait(num_outstanding=1, deps=(_gl_pv(p, acc, alpha, v_ring, v_ready, j), ))
    return acc, m_i, l_i


@gluon.jit
def _gl_attn_pipelined(q, acc, m_i, l_i, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty, rows, cols, S, qk_scale,
                       first_masked, n_mine, c, CAUSAL: gl.constexpr):
    """A consumer's n_mine key blocks of a tile whose first is the ring's block c, pipelined
    (_gl_attn_step): the first Q K^T alone, the steps, the last block's softmax; its P @ V is left in
    flight (its V goes back once it is done)."""
    STAGES: gl.constexpr = k_ring.type.shape[0]
    BLOCK_N: gl.constexpr = k_ring.type.shape[3]
    ROWS: gl.constexpr = acc.type.shape[0]
    s_cur = warpgroup_mma_wait(num_outstanding=0, deps=(_gl_qk(q, k_ring, k_ready, c, ROWS), ))
    mbarrier.arrive(k_empty.index(c % STAGES), count=1)
    if n_mine > 1:
        s_cur, acc, m_i, l_i = _gl_attn_step(c, c, q, s_cur, acc, m_i, l_i, k_ring, v_ring, k_ready, v_ready,
                                             k_empty, v_empty, rows, cols, S, qk_scale, first_masked, CAUSAL)
        for j in range(c + 1, c + n_mine - 1):
            s_cur, acc, m_i, l_i = _gl_attn_step(j, c, q, s_cur, acc, m_i, l_i, k_ring, v_ring, k_ready, v_ready,
                                                 k_empty, v_empty, rows, cols, S, qk_scale, first_masked, CAUSAL)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        mbarrier.arrive(v_empty.index((c + n_mine + STAGES - 2) % STAGES), count=1)  # the block before the last
    last = c + n_mine - 1
    p, alpha, m_i, l_i = _gl_softmax(s_cur, m_i, l_i, rows, (n_mine - 1) * BLOCK_N + cols, S, qk_scale,
                                     n_mine - 1 >= first_masked, CAUSAL)
    return _gl_pv(p, acc, alpha, v_ring, v_ready, last), m_i, l_i


@gluon.jit
def _gl_turn(turns, turn, CONSUMER: gl.constexpr):
    """Wait for this consumer's turn-th turn at the tensor cores (the other passes it: _gl_pass)."""
    mbarrier.wait(turns.index(CONSUMER), turn & 1)
    return turn + 1


@gluon.jit
def _gl_pass(turns, CONSUMER: gl.constexpr):
    """Pass the other consumer the turn at the tensor cores."""
    mbarrier.arrive(turns.index(1 - CONSUMER), count=1)


@gluon.jit
def _gl_attn_pingpong(q, acc, m_i, l_i, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty, turns, turn, rows, cols,
                      S, qk_scale, first_masked, n_mine, n_blocks, c, CAUSAL: gl.constexpr, CONSUMER: gl.constexpr):
    """FlashAttention-3's ping-pong between two consumer partitions (a warpgroup each): they take turns
    at the tensor cores, so that one's softmax runs while the other's wgmma do. In turn j a consumer
    issues block j's Q K^T and block j-1's P V, waits for both, passes the turn, hands the stages back
    and runs block j's softmax; O is rescaled before the next turn's P V. A tile takes n_blocks + 1 turns
    of each: a causal consumer past its diagonal spends its remaining turns handing back the other's
    blocks (_gl_hand_back_block), passing each turn at once. `turn` counts this consumer's turns over
    the program's tiles (the phase of its turn barrier); returns it with O and the running max and sum."""
    STAGES: gl.constexpr = k_ring.type.shape[0]
    BLOCK_N: gl.constexpr = k_ring.type.shape[3]
    ROWS: gl.constexpr = acc.type.shape[0]
    turn = _gl_turn(turns, turn, CONSUMER)
    s = warpgroup_mma_wait(num_outstanding=0, deps=(_gl_qk(q, k_ring, k_ready, c, ROWS), ))
    _gl_pass(turns, CONSUMER)
    mbarrier.arrive(k_empty.index(c % STAGES), count=1)
    p, alpha, m_i, l_i = _gl_softmax(s, m_i, l_i, rows, cols, S, qk_scale, 0 >= first_masked, CAUSAL)
    for j in range(c + 1, c + n_mine):
        turn = _gl_turn(turns, turn, CONSUMER)
        s_tok = _gl_qk(q, k_ring, k_ready, j, ROWS)
        s, acc = warpgroup_mma_wait(num_outstanding=0, deps=(s_tok, _gl_pv(p, acc, alpha, v_ring, v_ready, j - 1)))
        _gl_pass(turns, CONSUMER)
        mbarrier.arrive(k_empty.index(j % STAGES), count=1)
        mbarrier.arrive(v_empty.index((j - 1) % STAGES), count=1)
        p, alpha, m_i, l_i = _gl_softmax(s, m_i, l_i, rows, (j - c) * BLOCK_N + cols, S, qk_scale,
                                         j - c >= first_masked, CAUSAL)
    turn = _gl_turn(turns, turn, CONSUMER)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(_gl_pv(p, acc, alpha, v_ring, v_ready, c + n_mine - 1), ))
    _gl_pass(turns, CONSUMER)
    mbarrier.arrive(v_empty.index((c + n_mine - 1) % STAGES), count=1)
    for j in range(c + n_mine, c + n_blocks):
        turn = _gl_turn(turns, turn, CONSUMER)
        _gl_pass(turns, CONSUMER)
        _gl_hand_back_block(k_ring, k_ready, v_ready, k_empty, v_empty, j)
    return acc, m_i, l_i, turn


@gluon.jit
def _gl_hand_back(k_ring, k_ready, v_ready, k_empty, v_empty, n_mine, n_blocks, c):
    """With two consumers: the blocks of the tile (the first is the ring's block c) past this one's
    diagonal, which the other consumer reads (_gl_hand_back_block)."""
    for j in range(c + n_mine, c + n_blocks):
        _gl_hand_back_block(k_ring, k_ready, v_ready, k_empty, v_empty, j)


@gluon.jit
def _gl_hand_back_block(k_ring, k_ready, v_ready, k_empty, v_empty, j):
    """Hand the ring's block j back unread, once it has landed, so that no arrival counts toward a lap of
    the ring the other consumer has not finished."""
    STAGES: gl.constexpr = k_ring.type.shape[0]
    mbarrier.wait(k_ready.index(j % STAGES), (j // STAGES) & 1)
    mbarrier.arrive(k_empty.index(j % STAGES), count=1)
    mbarrier.wait(v_ready.index(j % STAGES), (j // STAGES) & 1)
    mbarrier.arrive(v_empty.index(j % STAGES), count=1)


@gluon.jit
def _gl_attn_rows(q, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty, turns, turn, S, start_m, n_blocks, c,
                  qk_scale, CAUSAL: gl.constexpr, MODE: gl.constexpr, CONSUMER: gl.constexpr,
                  CONSUMERS: gl.constexpr):
    """One tile's rows of consumer CONSUMER of CONSUMERS (a partition of num_warps warps, 16 rows a warp: rows
    CONSUMER * ROWS onwards of the query tile at start_m, q its view of Q's shared tile, whose key blocks are
    the ring's blocks c to c + n_blocks), its overlap MODE (_gl_overlap), normalised: O = softmax(Q K^T) V in
    fp32. S = Q K^T by an asynchronous wgmma from shared memory; P = exp2(...) in registers, rounded to the
    input dtype, is the register A operand of the wgmma P @ V. Software pipelined as FlashAttention-3 does
    within a warpgroup (_gl_attn_step) where the registers allow: block j+1's Q K^T runs under block j's
    softmax, and P_j V_j under block j+1's softmax. The first step is peeled off the loop so that every
    iteration starts with one P @ V in flight: ptxas serialises every wgmma of the kernel when it cannot prove
    that an accumulator read waits for its wgmma, and a loop entered both with and without one in flight is such
    a case. Causal consumers stop at their own diagonal; key blocks the program loads beyond it (another
    consumer's) are handed back unread. Every K and V stage goes back to the producer. With two consumers taking
    turns (PINGPONG), `turn` counts this one's turns (_gl_attn_pingpong); returns O and the count."""
    ROWS: gl.constexpr = q.type.shape[0]
    D: gl.constexpr = q.type.shape[1]
    BLOCK_N: gl.constexpr = k_ring.type.shape[3]
    STAGES: gl.constexpr = k_ring.type.shape[0]
    s_layout: gl.constexpr = _gl_mma_layout(BLOCK_N, gl.num_warps())
    o_layout: gl.constexpr = _gl_mma_layout(D, gl.num_warps())
    row0 = start_m + CONSUMER * ROWS
    if CAUSAL:
        first_masked = row0 // BLOCK_N  # the blocks that cross this consumer's diagonal
        n_mine = gl.cdiv(gl.minimum(row0 + ROWS, S), BLOCK_N)
    else:
        first_masked = S // BLOCK_N  # the ragged last block, if any
        n_mine = n_blocks
    rows = row0 + gl.arange(0, ROWS, layout=gl.SliceLayout(1, s_layout))
    cols = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
    m_i = gl.full([ROWS], -float("inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.zeros([ROWS], gl.float32, gl.SliceLayout(1, s_layout))
    acc = gl.zeros([ROWS, D], gl.float32, o_layout)
    if MODE == PINGPONG:
        acc, m_i, l_i, turn = _gl_attn_pingpong(q, acc, m_i, l_i, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty,
                                                turns, turn, rows, cols, S, qk_scale, first_masked, n_mine, n_blocks,
                                                c, CAUSAL, CONSUMER)
    else:
        if MODE == 1:
            acc, m_i, l_i = _gl_attn_pipelined(q, acc, m_i, l_i, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty,
                                               rows, cols, S, qk_scale, first_masked, n_mine, c, CAUSAL)
        else:
            for j in range(c, c + n_mine):
                acc, m_i, l_i = _gl_attn_step_serial(j, c, q, acc, m_i, l_i, k_ring, v_ring, k_ready, v_ready,
                                                     k_empty, v_empty, rows, cols, S, qk_scale, first_masked, CAUSAL)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        mbarrier.arrive(v_empty.index((c + n_mine - 1) % STAGES), count=1)  # the last block's V
        if CONSUMERS > 1:
            _gl_hand_back(k_ring, k_ready, v_ready, k_empty, v_empty, n_mine, n_blocks, c)
    return acc / gl.expand_dims(gl.convert_layout(l_i, gl.SliceLayout(1, o_layout)), 1), turn


@gluon.jit
def _gl_attn_compute(o_desc, q_smem, k_ring, v_ring, q_ready, q_empty, k_ready, v_ready, k_empty, v_empty, o_ready,
                     turns, B, H, H_KV, S, qk_scale, CAUSAL: gl.constexpr, OVERLAP: gl.constexpr,
                     CONSUMER: gl.constexpr):
    """Consumer CONSUMER, tile after tile of the program (_gl_attn_tile, the producer's order): its rows
    of the tile (_gl_attn_rows), written over its rows of Q (no longer read). One consumer stores O by
    the TMA (rows past S dropped) and frees Q's shared memory for the next tile's Q (q_empty); of two,
    the second hands its rows to the first (o_ready), which stores the tile."""
    BLOCK_M: gl.constexpr = o_desc.block_type.shape[2]
    D: gl.constexpr = o_desc.block_type.shape[3]
    BLOCK_N: gl.constexpr = k_ring.type.shape[3]
    ROWS: gl.constexpr = 16 * gl.num_warps()
    CONSUMERS: gl.constexpr = BLOCK_M // ROWS
    MODE: gl.constexpr = _gl_overlap(OVERLAP, ROWS, BLOCK_N, D, gl.num_warps(), CONSUMERS)
    q = q_smem.reshape([BLOCK_M, D])  # this consumer's rows of Q's shared tile
    if CONSUMERS > 1:
        q = q.slice(CONSUMER * ROWS, ROWS)
    r = 0  # blocks through the ring so far
    done = 0  # tiles so far
    turn = 0  # turns at the tensor cores so far (PINGPONG)
    if CONSUMER == 1 and MODE == PINGPONG:
        _gl_pass(turns, CONSUMER)  # the first turn is consumer 0's
    for t in range(gl.program_id(0), gl.cdiv(S, BLOCK_M) * B * H, gl.num_programs(0)):
        b, h, kv, start_m, n_blocks = _gl_attn_tile(t, H, H_KV, S, BLOCK_M, BLOCK_N, CAUSAL)
        mbarrier.wait(q_ready, done & 1)
        o, turn = _gl_attn_rows(q, k_ring, v_ring, k_ready, v_ready, k_empty, v_empty, turns, turn, S, start_m,
                                n_blocks, r, qk_scale, CAUSAL, MODE, CONSUMER, CONSUMERS)
        # every wgmma that read this consumer's rows of Q is done (each warpgroup reads and writes only its
        # own 64 rows)
        q.store(o.to(o_desc.dtype))
        fence_async_shared()
        if CONSUMER == 1:
            mbarrier.arrive(o_ready, count=1)
        else:
            if CONSUMERS > 1:
                mbarrier.wait(o_ready, done & 1)
            _tma_store(o_desc, [b, h, start_m, 0], q_smem)
            tma.store_wait(0)
            mbarrier.arrive(q_empty, count=1)
        r += n_blocks
        done += 1


@gluon.jit
def attention_gluon_kernel(q_desc, k_desc, v_desc, o_desc, B, H, H_KV, S, qk_scale, CAUSAL: gl.constexpr,
                           num_stages: gl.constexpr, PRODUCER_REGS: gl.constexpr, OVERLAP: gl.constexpr = -1):
    """Warp-specialized flash attention (sm_90), persistent: program p takes query tiles p, p + programs,
    ... of the cdiv(S, BLOCK_M) x B x H (_gl_attn_tile), its K/V ring running on from tile to tile, so
    the next tile's first key blocks load while this one finishes. A query tile (the Q and O
    descriptors' rows, BLOCK_M) is split among BLOCK_M / (16 num_warps) consumer partitions of num_warps
    warps each, 16 rows a warp: one (the default partition, one or two warpgroups in lockstep) or two
    independent warpgroups of 64 rows (the default partition and a worker), which share every K and V
    stage (its `empty` barrier counts one arrival a consumer) and take turns at the tensor cores (`turns`,
    _gl_overlap). One producer warp with PRODUCER_REGS registers.
    Q, K, V and O move through host-built 4-D TMA descriptors ([B, heads, S, D], blocks [1, 1, rows,
    D]), which zero-fill rows past S on loads and drop them on stores: no tile reads or writes another
    (batch, head)'s rows."""
    # with one stage the producer's V_j waits for P_{j-1} V_{j-1}, which the overlapped consumers finish
    # only after Q K_{j+1}^T, whose K the producer loads after V_j: a deadlock
    gl.static_assert(num_stages >= 2, "the K/V ring needs two stages")
    BLOCK_M: gl.constexpr = q_desc.block_type.shape[2]
    CONSUMERS: gl.constexpr = BLOCK_M // (16 * gl.num_warps())
    gl.static_assert(CONSUMERS * 16 * gl.num_warps() == BLOCK_M, "16 query rows a consumer warp")
    gl.static_assert(CONSUMERS == 1 or (CONSUMERS == 2 and gl.num_warps() == 4),
                     "one consumer partition, or two of one warpgroup each")
    q_smem = gl.allocate_shared_memory(q_desc.dtype, q_desc.block_type.shape, q_desc.layout)
    k_ring = gl.allocate_shared_memory(k_desc.dtype, [num_stages] + k_desc.block_type.shape, k_desc.layout)
    v_ring = gl.allocate_shared_memory(v_desc.dtype, [num_stages] + v_desc.block_type.shape, v_desc.layout)
    q_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    q_empty = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    o_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    turns = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    k_ready = gl.allocate_shared_memory(gl.int64, [num_stages, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [num_stages, 1], mbarrier.MBarrierLayout())
    k_empty = gl.allocate_shared_memory(gl.int64, [num_stages, 1], mbarrier.MBarrierLayout())
    v_empty = gl.allocate_shared_memory(gl.int64, [num_stages, 1], mbarrier.MBarrierLayout())
    mbarrier.init(q_ready, count=1)
    mbarrier.init(q_empty, count=1)
    mbarrier.init(o_ready, count=1)
    mbarrier.init(turns.index(0), count=1)
    mbarrier.init(turns.index(1), count=1)
    for i in gl.static_range(num_stages):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(k_empty.index(i), count=CONSUMERS)
        mbarrier.init(v_empty.index(i), count=CONSUMERS)
    if CONSUMERS == 1:
        gl.warp_specialize([
            (_gl_attn_compute, (o_desc, q_smem, k_ring, v_ring, q_ready, q_empty, k_ready, v_ready, k_empty, v_empty,
                                o_ready, turns, B, H, H_KV, S, qk_scale, CAUSAL, OVERLAP, 0)),
            (_gl_attn_load, (q_desc, k_desc, v_desc, q_smem, k_ring, v_ring, q_ready, q_empty, k_ready, v_ready,
                             k_empty, v_empty, B, H, H_KV, S, CAUSAL)),
        ], [1], [PRODUCER_REGS])
    else:
        gl.warp_specialize([
            (_gl_attn_compute, (o_desc, q_smem, k_ring, v_ring, q_ready, q_empty, k_ready, v_ready, k_empty, v_empty,
                                o_ready, turns, B, H, H_KV, S, qk_scale, CAUSAL, OVERLAP, 0)),
            (_gl_attn_compute, (o_desc, q_smem, k_ring, v_ring, q_ready, q_empty, k_ready, v_ready, k_empty, v_empty,
                                o_ready, turns, B, H, H_KV, S, qk_scale, CAUSAL, OVERLAP, 1)),
            (_gl_attn_load, (q_desc, k_desc, v_desc, q_smem, k_ring, v_ring, q_ready, q_empty, k_ready, v_ready,
                             k_empty, v_empty, B, H, H_KV, S, CAUSAL)),
        ], [4, 1], [TWO_CONSUMER_REGS, TWO_CONSUMER_PRODUCER_REGS])


# ---- the Gluon variant for AMD CDNA3/CDNA4 (gfx942, gfx950) ----


@_gl_builtin
def _cdna_version(_semantic=None):
    """The CDNA generation the kernel is being compiled for (3: gfx942, 4: gfx950), read from the
    compile options: launch() never sees the target, and a cross-compile has no driver to ask."""
    return gl.constexpr(4 if _semantic.builder.options.arch == "gfx950" else 3)


@gluon.constexpr_function
def _amd_mfma_layout(version, nonkdim, BLOCK_M, BLOCK_N, D, warps):
    """The layout of both accumulators (scores and O): the waves stacked along the query rows, so a
    row's softmax reductions stay within a wave, each covering its rows with nonkdim x nonkdim MFMA
    blocks (K per instruction for 16-bit inputs: gfx942 32x32x8 or 16x16x16, gfx950 twice that).
    32x32 blocks only where a wave's rows, the key block and the head dim are 32 or more (else 16x16:
    a 32x32 block over 16 rows or columns computes half of it twice). Transposed: a lane holds 4
    consecutive columns of a row (O leaves in 8-byte stores)."""
    nonkdim = 32 if nonkdim == 32 and min(BLOCK_M // warps, BLOCK_N, D) >= 32 else 16
    k = (8 if nonkdim == 32 else 16) * (2 if version == 4 else 1)
    return gl.amd.AMDMFMALayout(version=version, instr_shape=[nonkdim, nonkdim, k], transposed=True,
                                warps_per_cta=[warps, 1])


@gluon.constexpr_function
def _amd_row_layout(ROWS, COLS, warps):
    """Global loads of a ROWS x COLS tile, contiguous along COLS: 8 elements (16 bytes) a lane, the lanes
    of a wave along the row first, the waves stacked over rows."""
    lanes = min(64, COLS // 8)
    return gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[64 // lanes, lanes], warps_per_cta=[warps, 1],
                            order=[1, 0])


@gluon.constexpr_function
def _amd_v_layout(version, BLOCK_N, D, warps):
    """Global loads of a V tile (BLOCK_N keys x D, contiguous along D), the B operand of P V whose K is
    the keys. CDNA4 keeps it so in LDS and reads it with the transposing ds_read_b64_tr_b16; CDNA3 has no
    transposing LDS read, so each lane loads a kv x 8 block and writes its transpose into a
    key-contiguous LDS tile (as the library GEMM's B)."""
    if version == 4:
        return _amd_row_layout(BLOCK_N, D, warps)
    lanes_d = min(64, D // 8)
    lanes_n = 64 // lanes_d
    kv = max(1, min(8, BLOCK_N // (lanes_n * warps)))
    return gl.BlockedLayout(size_per_thread=[kv, 8], threads_per_warp=[lanes_n, lanes_d], warps_per_cta=[warps, 1],
                            order=[1, 0])


@gluon.constexpr_function
def _padded_lds(ROWS, COLS):
    """LDS layout of a ROWS x COLS tile, contiguous along COLS, each row followed by 16 bytes of padding:
    consecutive rows start 4 banks apart, so operand reads (a row a lane) and row-wise writes do not
    conflict."""
    return gl.PaddedSharedLayout.with_identity_for([[COLS, 8]], [ROWS, COLS], [1, 0])


@gluon.jit
def _amd_kv_load(k_ptr, v_ptr, k_offs, v_offs, k_rows, v_rows, start, stride_ks, stride_vs, S):
    """Buffer loads of key block `start`'s K and V tiles from scalar per-block bases (32-bit offsets);
    keys past S, and every key of a block past the last, are masked off (the hardware returns zeros)."""
    k = gl.amd.cdna3.buffer_load(k_ptr + start * stride_ks, k_offs, mask=k_rows < S - start, other=0.0)
    v = gl.amd.cdna3.buffer_load(v_ptr + start * stride_vs, v_offs, mask=v_rows < S - start, other=0.0)
    return k, v


@gluon.jit
def _amd_block(q, k, v, k_lds, v_lds, acc, m_i, l_i, rows, cols, start, S, qk_scale, masked,
               CAUSAL: gl.constexpr, V_KCONTIG: gl.constexpr):
    """One key block: K and V (in registers) go through LDS into MFMA operand layouts; S = Q K^T; the
    online softmax in fp32 with the scale folded into exp2 (`masked`: the block crossing the diagonal or
    holding key S, where keys past S, and above the diagonal when causal, get -inf); O += P V with P
    rounded to the input dtype."""
    s_layout: gl.constexpr = acc.type.layout
    k_dot: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=s_layout, k_width=8)
    p_dot: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=s_layout, k_width=8)
    BLOCK_M: gl.constexpr = acc.type.shape[0]
    BLOCK_N: gl.constexpr = k.type.shape[0]
    k_lds.store(k)
    if V_KCONTIG:
        v_lds.store(v.permute(1, 0))
        v_op = v_lds.permute((1, 0)).load(k_dot)
    else:
        v_lds.store(v)
        v_op = v_lds.load(k_dot)
    s = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
    s = gl.amd.cdna3.mfma(q, k_lds.permute((1, 0)).load(k_dot), s)
    if masked:
        keep = gl.expand_dims(start + cols, 0) < S
        if CAUSAL:
            keep = keep & (gl.expand_dims(start + cols, 0) <= gl.expand_dims(rows, 1))
        s = gl.where(keep, s, -float("inf"))
    m_new = gl.maximum(m_i, gl.max(s, 1) * qk_scale)
    p = gl.exp2(s * qk_scale - gl.expand_dims(m_new, 1))
    alpha = gl.exp2(m_i - m_new)
    l_i = l_i * alpha + gl.sum(p, 1)
    p = gl.convert_layout(p.to(k.dtype), p_dot)
    acc = gl.amd.cdna3.mfma(p, v_op, acc * gl.expand_dims(alpha, 1))
    return acc, m_new, l_i


@gluon.jit
def attention_amd_gluon_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, qk_scale, heads_per_kv, H, stride_qb, stride_qh,
                               stride_qs, stride_kb, stride_kh, stride_ks, stride_vb, stride_vh, stride_vs,
                               stride_ob, stride_oh, stride_os, D: gl.constexpr, BLOCK_M: gl.constexpr,
                               BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr, num_stages: gl.constexpr,
                               matrix_instr_nonkdim: gl.constexpr = 0):
    """FlashAttention-2 forward for CDNA3/CDNA4, num_warps waves of 64 lanes stacked over the BLOCK_M
    query rows. The Q tile comes once by buffer loads through LDS into an MFMA operand; each key block's
    K and V tiles come by buffer loads into registers, one block ahead of the MFMAs with num_stages = 2
    (none ahead with 1), then through row-padded LDS tiles into operand layouts (_amd_block). The last
    dimension of every tensor is contiguous."""
    version: gl.constexpr = _cdna_version()
    warps: gl.constexpr = gl.num_warps()
    V_KCONTIG: gl.constexpr = version == 3
    s_layout: gl.constexpr = _amd_mfma_layout(version, matrix_instr_nonkdim, BLOCK_M, BLOCK_N, D, warps)
    row_load: gl.constexpr = _amd_row_layout(BLOCK_N, D, warps)
    v_load: gl.constexpr = _amd_v_layout(version, BLOCK_N, D, warps)
    b, h, start_m, n_blocks, first_masked = _amd_tile(H, S, BLOCK_M, BLOCK_N, CAUSAL)
    kv = (h // heads_per_kv).to(gl.int64)
    q = _amd_q_operand(q_ptr + b * stride_qb + h.to(gl.int64) * stride_qh + start_m.to(gl.int64) * stride_qs,
                       stride_qs, S - start_m, BLOCK_M, D, s_layout)
    k_ptr = k_ptr + b * stride_kb + kv * stride_kh
    v_ptr = v_ptr + b * stride_vb + kv * stride_vh
    k_rows = gl.expand_dims(gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, row_load)), 1)
    v_rows = gl.expand_dims(gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, v_load)), 1)
    k_offs = k_rows * stride_ks + gl.expand_dims(gl.arange(0, D, layout=gl.SliceLayout(0, row_load)), 0)
    v_offs = v_rows * stride_vs + gl.expand_dims(gl.arange(0, D, layout=gl.SliceLayout(0, v_load)), 0)
    k_lds = gl.allocate_shared_memory(k_ptr.dtype.element_ty, [BLOCK_N, D], _padded_lds(BLOCK_N, D))
    if V_KCONTIG:
        v_lds = gl.allocate_shared_memory(v_ptr.dtype.element_ty, [D, BLOCK_N], _padded_lds(D, BLOCK_N))
    else:
        v_lds = gl.allocate_shared_memory(v_ptr.dtype.element_ty, [BLOCK_N, D], _padded_lds(BLOCK_N, D))
    rows = start_m + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, s_layout))
    cols = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
    acc = gl.zeros([BLOCK_M, D], gl.float32, s_layout)
    m_i = gl.full([BLOCK_M], -float("inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.zeros([BLOCK_M], gl.float32, gl.SliceLayout(1, s_layout))
    if num_stages >= 2:
        k, v = _amd_kv_load(k_ptr, v_ptr, k_offs, v_offs, k_rows, v_rows, 0, stride_ks, stride_vs, S)
        for j in range(n_blocks):
            k_cur, v_cur = k, v
            k, v = _amd_kv_load(k_ptr, v_ptr, k_offs, v_offs, k_rows, v_rows, (j + 1) * BLOCK_N, stride_ks,
                                stride_vs, S)
            acc, m_i, l_i = _amd_block(q, k_cur, v_cur, k_lds, v_lds, acc, m_i, l_i, rows, cols, j * BLOCK_N, S,
                                       qk_scale, j >= first_masked, CAUSAL, V_KCONTIG)
    else:
        for j in range(n_blocks):
            k, v = _amd_kv_load(k_ptr, v_ptr, k_offs, v_offs, k_rows, v_rows, j * BLOCK_N, stride_ks, stride_vs, S)
            acc, m_i, l_i = _amd_block(q, k, v, k_lds, v_lds, acc, m_i, l_i, rows, cols, j * BLOCK_N, S, qk_scale,
                                       j >= first_masked, CAUSAL, V_KCONTIG)
    o = acc / gl.expand_dims(l_i, 1)
    _amd_store_o(o, o_ptr + b * stride_ob + h.to(gl.int64) * stride_oh + start_m.to(gl.int64) * stride_os, stride_os,
                 S - start_m)


@gluon.jit
def _amd_tile(H, S, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
    """This program's (batch, query head, first query row, key blocks, first masked block): causal
    programs take their query tiles last first, so the longest rows start first; causal key blocks
    stop at the diagonal and those crossing it are masked, full attention masks only a ragged last
    block."""
    pid_m = gl.program_id(0)
    if CAUSAL:
        pid_m = gl.num_programs(0) - 1 - pid_m
    start_m = pid_m * BLOCK_M
    if CAUSAL:
        n_blocks = gl.cdiv(gl.minimum(start_m + BLOCK_M, S), BLOCK_N)
        first_masked = start_m // BLOCK_N
    else:
        n_blocks = gl.cdiv(S, BLOCK_N)
        first_masked = S // BLOCK_N
    return (gl.program_id(1) // H).to(gl.int64), gl.program_id(1) % H, start_m, n_blocks, first_masked


@gluon.jit
def _amd_q_operand(q_ptr, stride_qs, rows_left, BLOCK_M: gl.constexpr, D: gl.constexpr, s_layout: gl.constexpr):
    """The Q tile (rows past S masked off), by buffer loads through a padded LDS tile into the A operand
    layout of Q K^T (its LDS is free again before the key loop's is taken)."""
    q_load: gl.constexpr = _amd_row_layout(BLOCK_M, D, gl.num_warps())
    rm = gl.expand_dims(gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, q_load)), 1)
    rd = gl.expand_dims(gl.arange(0, D, layout=gl.SliceLayout(0, q_load)), 0)
    q = gl.amd.cdna3.buffer_load(q_ptr, rm * stride_qs + rd, mask=rm < rows_left, other=0.0)
    q_lds = gl.allocate_shared_memory(q_ptr.dtype.element_ty, [BLOCK_M, D], _padded_lds(BLOCK_M, D), q)
    return q_lds.load(gl.DotOperandLayout(operand_index=0, parent=s_layout, k_width=8))


@gluon.jit
def _amd_store_o(o, o_ptr, stride_os, rows_left):
    """O by buffer stores straight from the accumulator layout, in the output dtype; rows past S
    masked."""
    layout: gl.constexpr = o.type.layout
    BLOCK_M: gl.constexpr = o.type.shape[0]
    D: gl.constexpr = o.type.shape[1]
    rm = gl.expand_dims(gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, layout)), 1)
    rd = gl.expand_dims(gl.arange(0, D, layout=gl.SliceLayout(0, layout)), 0)
    gl.amd.cdna3.buffer_store(o.to(o_ptr.dtype.element_ty), o_ptr, rm * stride_os + rd, mask=rm < rows_left)


def make_inputs(shape, dtype, t):
    b, h, h_kv, s, d = shape["B"], shape["H"], shape["H_KV"], shape["S"], shape["D"]
    return {"q": t.randn(b, h, s, d, dtype=dtype), "k": t.randn(b, h_kv, s, d, dtype=dtype),
            "v": t.randn(b, h_kv, s, d, dtype=dtype), "causal": bool(shape.get("CAUSAL", 0)),
            "o": t.empty(b, h, s, d, dtype=dtype)}


def reference(inputs):
    """fp32 attention, one batch at a time so a long sequence's S x S scores fit in device memory."""
    q, k, v, causal = inputs["q"], inputs["k"], inputs["v"], inputs["causal"]
    groups = q.shape[1] // k.shape[1]
    s = q.shape[2]
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).tril() if causal else None
    out = []
    for i in range(q.shape[0]):
        kb = k[i].float().repeat_interleave(groups, 0)
        vb = v[i].float().repeat_interleave(groups, 0)
        scores = q[i].float() @ kb.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out.append(torch.softmax(scores, -1) @ vb)
    return {"o": torch.stack(out)}


def baseline(inputs):
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    return F.scaled_dot_product_attention(q, k, v, is_causal=inputs["causal"], enable_gqa=q.shape[1] != k.shape[1])


def _tma_ready(*tensors) -> bool:
    """The TMA's rules: a 16-byte aligned base, a unit last stride, every other stride a multiple of 16
    bytes."""
    return all(t.stride(-1) == 1 and t.data_ptr() % 16 == 0
               and all(st * t.element_size() % 16 == 0 for st in t.stride()[:-1]) for t in tensors)


_GLUON_DTYPES = {torch.bfloat16: "bfloat16", torch.float16: "float16"}
PRODUCER_REGS = 40  # the producer warp's registers (setmaxnreg); the consumers get what is left


def _gluon_ready(q, k, v, o) -> bool:
    """Whether the Gluon kernel takes these tensors: 16-bit Q, K, V and O of one dtype, a head dim the
    wgmma takes (a multiple of 16, at most 256), and strides the TMA takes (_tma_ready)."""
    d = q.shape[-1]
    return (q.dtype in _GLUON_DTYPES and k.dtype == v.dtype == o.dtype == q.dtype and d % 16 == 0 and d <= 256
            and _tma_ready(q, k, v, o))


def _amd_gluon_ready(q, k, v, o) -> bool:
    """Whether the AMD Gluon kernel takes these tensors: 16-bit Q, K, V and O of one dtype, the head dim
    contiguous and a multiple of 16, and a head's offsets from its base (32-bit byte offsets of the buffer
    loads and stores) below 2 GiB."""
    s, d = q.shape[-2], q.shape[-1]
    return (q.dtype in _GLUON_DTYPES and k.dtype == v.dtype == o.dtype == q.dtype and d % 16 == 0
            and all(t.stride(-1) == 1 and s * t.stride(-2) * t.element_size() < 2**31 for t in (q, k, v, o)))


def gluon_descriptors(q, k, v, o, block_m, block_n) -> tuple:
    """Host-built 4-D TMA descriptors ([B, heads, S, D], blocks [1, 1, rows, D]) of Q, K, V and O for
    attention_gluon_kernel, in NVMMA shared layouts (the 128-byte swizzle where a row of D allows it)."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    element = getattr(gl, _GLUON_DTYPES[q.dtype])
    d = q.shape[-1]

    def descriptor(t, rows):
        block = [1, 1, rows, d]
        return TensorDescriptor.from_tensor(t, block, gl.NVMMASharedLayout.get_default_for(block, element))

    return descriptor(q, block_m), descriptor(k, block_n), descriptor(v, block_n), descriptor(o, block_m)


def gluon_programs(q, tiles: int, causal: bool) -> int:
    """The Gluon kernel's grid. Full attention: persistent, a program per SM of q's GPU (one holds an SM's
    shared memory), never more than the tiles. Causal: a program per tile, since tiles differ in length
    and a fixed round of them per program left programs with up to a fifth more work than others (H200:
    causal D128 2.8% and D64 1.7% slower persistent; full D128 2.7% faster). Off a GPU (a launch recorded
    for a cross-compile) a program per tile."""
    return min(tiles, _sm_count(q.device.index)) if q.is_cuda and not causal else tiles


@functools.lru_cache(maxsize=None)
def _sm_count(index) -> int:
    return torch.cuda.get_device_properties(torch.device("cuda", index)).multi_processor_count


def _scratch(size, alignment, stream):
    """Global memory for the descriptors attention_tma_kernel builds on the device."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def launch(k, inputs, params):
    q, kk, v, o = inputs["q"], inputs["k"], inputs["v"], inputs["o"]
    b, h, s, d = q.shape
    bm = params["BLOCK_M"]
    grid = (triton.cdiv(s, bm), b * h)
    if params.get("GLUON", 0) and not params.get("TMA", 0) and _amd_gluon_ready(q, kk, v, o):
        # GLUON = 1 with TMA = 0 is the AMD kernel (its constraints keep it to gfx942 and gfx950); tensors
        # it cannot take run the pointer kernel below
        k.attention_amd_gluon_kernel[grid](q, kk, v, o, s, LOG2E / math.sqrt(d), h // kk.shape[1], h,
                                           *q.stride()[:-1], *kk.stride()[:-1], *v.stride()[:-1], *o.stride()[:-1],
                                           D=d, BLOCK_M=bm, BLOCK_N=params["BLOCK_N"], CAUSAL=inputs["causal"],
                                           num_stages=params.get("num_stages", 2))
        return
    if params.get("GLUON", 0) and params.get("TMA", 0) and _gluon_ready(q, kk, v, o):
        # a config that asks for Gluon on tensors it cannot take runs the TMA kernel below
        k.attention_gluon_kernel[(gluon_programs(q, grid[0] * grid[1], inputs["causal"]), )](
            *gluon_descriptors(q, kk, v, o, bm, params["BLOCK_N"]), b, h, kk.shape[1], s, LOG2E / math.sqrt(d),
            CAUSAL=inputs["causal"], num_stages=params.get("num_stages", 2), PRODUCER_REGS=PRODUCER_REGS)
        return
    if params.get("TMA", 0) and _tma_ready(q, kk, v, o):
        triton.set_allocator(_scratch)
        k.attention_tma_kernel[grid](q, kk, v, o, b, h, kk.shape[1], s, LOG2E / math.sqrt(d), *q.stride()[:-1],
                                     *kk.stride()[:-1], *v.stride()[:-1], *o.stride()[:-1], D=d, BLOCK_M=bm,
                                     BLOCK_N=params["BLOCK_N"], CAUSAL=inputs["causal"])
        return
    k.attention_kernel[grid](q, kk, v, o, s, LOG2E / math.sqrt(d), h // kk.shape[1], h, *q.stride(), *kk.stride(),
                             *v.stride(), *o.stride(), D=d, BLOCK_M=bm, BLOCK_N=params["BLOCK_N"],
                             CAUSAL=inputs["causal"])


def flops(shape, dtype):
    """Two S x S x D GEMMs per head; causal does half of them."""
    full = 4.0 * shape["B"] * shape["H"] * shape["S"] * shape["S"] * shape["D"]
    return full / 2 if shape.get("CAUSAL", 0) else full


def bytes_moved(shape, dtype):
    q_and_o = 2 * shape["B"] * shape["H"] * shape["S"] * shape["D"]
    k_and_v = 2 * shape["B"] * shape["H_KV"] * shape["S"] * shape["D"]
    return (q_and_o + k_and_v) * dtype.itemsize


def traffic(shape, dtype, params):
    """K and V are streamed once per query block of every query head (L2 reuse across the heads of a
    group ignored); causal blocks stop at the diagonal."""
    blocks = triton.cdiv(shape["S"], params["BLOCK_M"])
    kv_reads = 2 * shape["B"] * shape["H"] * blocks * shape["S"] * shape["D"]
    if shape.get("CAUSAL", 0):
        kv_reads /= 2
    return (2 * shape["B"] * shape["H"] * shape["S"] * shape["D"] + kv_reads) * dtype.itemsize


def shape_of(inputs):
    b, h, s, d = inputs["q"].shape
    shape = {"B": b, "H": h, "H_KV": inputs["k"].shape[1], "S": s, "D": d}
    return {**shape, "CAUSAL": 1} if inputs["causal"] else shape


def load_warps(shape, dtype, params):
    """sm_90's warp-specialized Gluon kernel (GLUON = 1 with TMA = 1) loads from one producer warp; the
    other variants load from the warps that compute."""
    return 1.0 if params.get("GLUON") and params.get("TMA") else 0.0
