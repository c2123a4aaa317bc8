"""Experiment: the attention template's TMA variant vs its pointer kernel vs SDPA, bf16."""
import time

import torch

from common import Bound, bench, template


def main():
    tmpl = template("attention")
    torch.manual_seed(0)
    shapes = [(4, 32, 32, 4096, 128, True), (4, 32, 32, 4096, 128, False), (4, 32, 32, 4096, 64, True)]
    configs = [(bm, bn, w, st) for bm in (64, 128) for bn in (64, 128) for w in (4, 8) for st in (2, 3)
               if not (bm == 64 and w == 8) and not (bm == 64 and bn == 128)]
    for b, h, hkv, s, d, causal in shapes:
        q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        inputs = {"q": q, "k": k, "v": v, "o": torch.empty_like(q), "causal": causal}
        flops = tmpl.flops({"B": b, "H": h, "S": s, "D": d, "CAUSAL": int(causal)}, torch.bfloat16)
        ref = tmpl.baseline(inputs)
        t_sdpa = bench(lambda: tmpl.baseline(inputs), rep=300)
        print(f"\n== B{b} H{h} HKV{hkv} S{s} D{d} causal={causal}: SDPA {t_sdpa*1e3:.1f} us "
              f"{flops/t_sdpa/1e9:.0f} TFLOP/s", flush=True)
        results = []
        for bm, bn, w, st in configs:
            for tma in (0, 1):
                params = {"BLOCK_M": bm, "BLOCK_N": bn, "TMA": tma}
                kmod = Bound(tmpl, {"num_warps": w, "num_stages": st})
                name = f"{'tma' if tma else 'pointers'} BM{bm} BN{bn} w{w} s{st}"
                try:
                    inputs["o"].zero_()
                    tmpl.launch(kmod, inputs, params)
                    err = (inputs["o"].float() - ref.float()).abs().max().item()
                    if err > 2e-2:
                        print(name, "WRONG", err)
                        continue
                    results.append((bench(lambda: tmpl.launch(kmod, inputs, params), rep=300), name))
                except Exception as e:  # noqa: BLE001
                    print(name, type(e).__name__, str(e)[:100])
        results.sort()
        for t, name in results[:8]:
            print(f"{name}: {t*1e3:.1f} us  {t_sdpa/t:.3f}x SDPA  {flops/t/1e9:.0f} TFLOP/s", flush=True)
        for variant in ("pointers", "tma"):
            best = min(r for r in results if r[1].startswith(variant))
            print(f"best {variant}: {best[1]} {t_sdpa/best[0]:.3f}x SDPA")


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"done in {time.time()-t0:.0f} s")
