"""Experiment: attention forward variants vs SDPA on the GPU (not part of kt)."""
import math
import sys
import time

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _attend(acc, l_i, m_i, q, k_desc, v_desc, kv_row, rows, lo, hi, n_keys, qk_scale,
            BLOCK_N: tl.constexpr, D: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    offs_n = tl.arange(0, BLOCK_N)
    for start in tl.range(lo, hi, BLOCK_N):
        k = k_desc.load([kv_row, start, 0]).reshape(BLOCK_N, D)
        s = tl.dot(q, k.T)
        if MASKED:
            cols = start + offs_n
            keep = cols[None, :] < n_keys
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None])
            s = tl.where(keep, s, -1.0e6)
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([kv_row, start, 0]).reshape(BLOCK_N, D)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attn_tma(q_ptr, k_ptr, v_ptr, o_ptr, S, qk_scale, heads_per_kv, H, H_KV,
             D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
             REVERSE: tl.constexpr):
    pid = tl.program_id(0)
    if REVERSE:
        pid = tl.num_programs(0) - 1 - pid
    start_m = pid * BLOCK_M
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    kv_row = b * H_KV + h // heads_per_kv
    BH = tl.num_programs(1)
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[BH, S, D], strides=[S * D, D, 1], block_shape=[1, BLOCK_M, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[BH, S, D], strides=[S * D, D, 1], block_shape=[1, BLOCK_M, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[BH // heads_per_kv, S, D], strides=[S * D, D, 1],
                                       block_shape=[1, BLOCK_N, D])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[BH // heads_per_kv, S, D], strides=[S * D, D, 1],
                                       block_shape=[1, BLOCK_N, D])
    rows = start_m + tl.arange(0, BLOCK_M)
    q = q_desc.load([bh, start_m, 0]).reshape(BLOCK_M, D)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32) + 1.0
    m_i = tl.zeros((BLOCK_M,), dtype=tl.float32) - float("inf")
    if CAUSAL:
        unmasked_end = start_m
        masked_end = tl.minimum(start_m + BLOCK_M, S)
    else:
        unmasked_end = (S // BLOCK_N) * BLOCK_N
        masked_end = S
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_desc, v_desc, kv_row, rows, 0, unmasked_end, S, qk_scale,
                            BLOCK_N, D, False, CAUSAL)
    if masked_end > unmasked_end:
        acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_desc, v_desc, kv_row, rows, unmasked_end, masked_end, S,
                                qk_scale, BLOCK_N, D, True, CAUSAL)
    o = acc / l_i[:, None]
    o_desc.store([bh, start_m, 0], o.to(o_ptr.dtype.element_ty)[None, :, :])


def _scratch(size, alignment, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


def run_tma(q, k, v, o, causal, bm, bn, warps, stages, reverse):
    b, h, s, d = q.shape
    triton.set_allocator(_scratch)
    grid = (triton.cdiv(s, bm), b * h)
    attn_tma[grid](q, k, v, o, s, LOG2E / math.sqrt(d), h // k.shape[1], h, k.shape[1], D=d, BLOCK_M=bm,
                   BLOCK_N=bn, CAUSAL=causal, REVERSE=reverse, num_warps=warps, num_stages=stages)


def bench(fn):
    fn()
    torch.cuda.synchronize()
    return triton.testing.do_bench(fn, warmup=50, rep=300)


def main():
    sys.path[:0] = [".", "plugins"]
    from kt_templates.kernels import attention as tmpl

    torch.manual_seed(0)
    shapes = [(4, 32, 32, 4096, 128, True), (4, 32, 32, 4096, 128, False), (4, 32, 32, 4096, 64, True)]
    configs = [(bm, bn, w, st) for bm in (64, 128) for bn in (64, 128) for w in (4, 8) for st in (2, 3)
               if not (bm == 64 and w == 8) and not (bm == 64 and bn == 128)]
    for b, h, hkv, s, d, causal in shapes:
        q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        o = torch.empty_like(q)
        flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=h != hkv)
        t_sdpa = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=h != hkv))
        print(f"\n== B{b} H{h} HKV{hkv} S{s} D{d} causal={causal}: SDPA {t_sdpa*1e3:.1f} us "
              f"{flops/t_sdpa/1e9:.0f} TFLOP/s", flush=True)
        results = []
        for bm, bn, w, st in configs:
            for reverse in ((False, True) if causal else (False,)):
                try:
                    o.zero_()
                    run_tma(q, k, v, o, causal, bm, bn, w, st, reverse)
                    err = (o.float() - ref.float()).abs().max().item()
                    if err > 2e-2:
                        print(f"tma {bm} {bn} w{w} s{st} r{reverse}: WRONG err {err}")
                        continue
                    t = bench(lambda: run_tma(q, k, v, o, causal, bm, bn, w, st, reverse))
                    results.append((t, f"tma BM{bm} BN{bn} w{w} s{st} rev{int(reverse)}"))
                except Exception as e:  # noqa: BLE001
                    print(f"tma {bm} {bn} w{w} s{st}: {type(e).__name__} {str(e)[:100]}")
        for bm, bn, w, st in configs:
            def go():
                b_, h_, s_, d_ = q.shape
                tmpl.attention_kernel[(triton.cdiv(s_, bm), b_ * h_)](
                    q, k, v, o, s_, LOG2E / math.sqrt(d_), h_ // k.shape[1], h_, *q.stride(), *k.stride(),
                    *v.stride(), *o.stride(), D=d_, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, num_warps=w,
                    num_stages=st)
            try:
                go()
                err = (o.float() - ref.float()).abs().max().item()
                if err > 2e-2:
                    print(f"tmpl {bm} {bn}: WRONG {err}")
                    continue
                results.append((bench(go), f"tmpl BM{bm} BN{bn} w{w} s{st}"))
            except Exception as e:  # noqa: BLE001
                print(f"tmpl {bm} {bn} w{w} s{st}: {type(e).__name__} {str(e)[:100]}")
        results.sort()
        for t, name in results[:8]:
            print(f"{name}: {t*1e3:.1f} us  {t_sdpa/t:.3f}x SDPA  {flops/t/1e9:.0f} TFLOP/s", flush=True)
        best_tmpl = min((r for r in results if r[1].startswith("tmpl")), default=None)
        print("best template:", best_tmpl and f"{best_tmpl[1]} {t_sdpa/best_tmpl[0]:.3f}x")


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"done in {time.time()-t0:.0f} s")
