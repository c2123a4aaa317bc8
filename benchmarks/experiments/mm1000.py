"""Experiment: bf16 GEMM 1000^3 configs of the template vs cuBLAS, graph-replayed (not part of kt).

    python mm1000.py [SIZE] [--gluon]   # --gluon: only the warp-specialized Gluon kernel's configs
    python mm1000.py [SIZE] --split     # the Gluon kernel with and without its in-kernel K splits
    python mm1000.py 512x512x16384 --split   # M x N x K

Each config is checked against an fp32 reference before it is timed and again after (a split-K point
whose tile counters were left set would sum wrong partials on the calls after its first).
"""
import itertools
import sys
import time

import torch
import triton

from common import Bound, template


def main():
    tmpl = template("matmul")

    sizes = [[int(v) for v in a.split("x")] for a in sys.argv[1:] if a.replace("x", "").isdigit()]
    m, n, k = (sizes[0] * 3)[:3] if sizes else (1000, 1000, 1000)  # SIZE, or MxNxK
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    ref = a.float() @ b.float()
    t_ref = triton.testing.do_bench_cudagraph(lambda: torch.matmul(a, b), rep=200)
    print(f"cuBLAS {m}x{n}x{k}: {t_ref*1e3:.2f} us", flush=True)
    results = []
    plain = itertools.product((64, 128), (64, 128, 256), (64,), (1, 2, 4), (0, 1), (0, 1), (4, 8), (3, 4), (0,))
    # the warp-specialized Gluon kernel: TMA, persistent, no split; its own ring of num_stages stages
    gluon = itertools.product((64, 128), (64, 128, 256), (64, 128), (1,), (1, 2), (1,), (4, 8), (3, 4, 5, 6), (1,))
    split = itertools.product((128,), (64, 128), (64,), (1, 2, 3, 4), (1,), (1,), (4,), (4, 5, 6), (1,))
    chosen = (split,) if "--split" in sys.argv else (gluon,) if "--gluon" in sys.argv else (plain, gluon)
    for bm, bn, bk, sk, ppu, tma, w, st, gl in itertools.chain(*chosen):
        if (tma and not ppu) or (sk > 1 and ppu and not tma) or (bm + bn) * bk * 2 * (st - 1) > 220000:
            continue
        if gl and (bm + bn) * bk * 2 * st + bm * bn * 2 > 225000:
            continue
        if bm * bn // (32 * w) > 256 or (bm == 64 and w == 8 and bn < 256):
            continue
        params = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, SPLIT_K=sk, PROGRAMS_PER_UNIT=ppu, TMA=tma,
                      GLUON=gl, UNITS=132)
        if gl:  # the Gluon kernel takes num_stages as its own argument (its ring), from the params
            params["num_stages"] = st
        kmod = Bound(tmpl, {"num_warps": w} if gl else {"num_warps": w, "num_stages": st})
        inputs = {"a": a, "b": b, "c": c}
        def error():  # the largest error of one fresh call, relative to the reference's largest value
            c.zero_()
            tmpl.launch(kmod, inputs, params)
            torch.cuda.synchronize()
            return ((c.float() - ref).abs().max() / ref.abs().max()).item()

        try:
            if error() > 1e-2:
                print("WRONG", params)
                continue
            t = triton.testing.do_bench_cudagraph(lambda: tmpl.launch(kmod, inputs, params), rep=100)
            if error() > 1e-2:
                print("WRONG AFTER TIMING", params)
                continue
            results.append((t, f"BM{bm} BN{bn} BK{bk} SK{sk} PPU{ppu} TMA{tma} GLUON{gl} w{w} st{st}"))
        except Exception as e:  # noqa: BLE001
            print(params, type(e).__name__, str(e)[:80])
    results.sort()
    for t, name in results[:25]:
        print(f"{name}: {t*1e3:.2f} us  {t_ref/t:.2f}x cuBLAS", flush=True)
    print(len(results), "configs")


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"done in {time.time()-t0:.0f} s")
