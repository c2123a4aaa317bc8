"""Experiment: long-row layernorm / rmsnorm variants (4096 x 32768 bf16) vs copy (not part of kt)."""
import time

import torch
import triton
import triton.language as tl

from common import bench, template


@triton.jit
def layernorm_late(y_ptr, x_ptr, w_ptr, b_ptr, n_cols, stride, eps, BLOCK_N: tl.constexpr, WB_FIRST: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    if WB_FIRST:
        w = tl.load(w_ptr + offs)
        b = tl.load(b_ptr + offs)
    x = tl.load(x_ptr + row * stride + offs).to(tl.float32)
    mean = tl.sum(x, axis=0) * (1.0 / n_cols)
    d = x - mean
    rstd = tl.rsqrt(tl.sum(d * d, axis=0) * (1.0 / n_cols) + eps)
    if not WB_FIRST:
        w = tl.load(w_ptr + offs)
        b = tl.load(b_ptr + offs)
    tl.store(y_ptr + row * stride + offs, (d * rstd * w.to(tl.float32) + b.to(tl.float32)).to(y_ptr.dtype.element_ty))


@triton.jit
def rmsnorm_late(y_ptr, x_ptr, w_ptr, n_cols, stride, eps, BLOCK_N: tl.constexpr, WB_FIRST: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    if WB_FIRST:
        w = tl.load(w_ptr + offs)
    x = tl.load(x_ptr + row * stride + offs).to(tl.float32)
    r = tl.rsqrt(tl.sum(x * x, axis=0) * (1.0 / n_cols) + eps)
    if not WB_FIRST:
        w = tl.load(w_ptr + offs)
    tl.store(y_ptr + row * stride + offs, (x * r * w.to(tl.float32)).to(y_ptr.dtype.element_ty))


def main():
    ln, rms = template("layernorm"), template("rmsnorm")

    for m, n in ((4096, 32768), (32768, 4096)):
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16) * 2
        w = torch.rand(n, device="cuda", dtype=torch.bfloat16) + 0.5
        bias = torch.randn(n, device="cuda", dtype=torch.bfloat16) * 0.5
        y = torch.empty_like(x)
        t_copy = bench(lambda: y.copy_(x))
        refs = {"ln": torch.nn.functional.layer_norm(x.float(), (n,), w.float(), bias.float(), 1e-5),
                "rms": torch.nn.functional.rms_norm(x.float(), (n,), w.float(), 1e-5)}
        print(f"\n== {m}x{n}: copy {t_copy*1e3:.1f} us; torch layer_norm "
              f"{t_copy/bench(lambda: torch.nn.functional.layer_norm(x, (n,), w, bias, 1e-5)):.1%}, rms_norm "
              f"{t_copy/bench(lambda: torch.nn.functional.rms_norm(x, (n,), w, 1e-5)):.1%} of copy", flush=True)
        results = []

        def check(name, ref, fn):
            try:
                y.zero_()
                fn()
                err = (y.float() - refs[ref]).abs().max().item()
                if err > 5e-2:
                    print(name, "WRONG", err)
                    return
                results.append((bench(fn), name))
            except Exception as e:  # noqa: BLE001
                print(name, type(e).__name__, str(e)[:120])

        for wf in (0, 1):
            for nw in (8, 16, 32):
                if n // (32 * nw) > 64:
                    continue
                check(f"ln late wf{wf} w{nw}", "ln", lambda wf=wf, nw=nw: layernorm_late[(m,)](
                    y, x, w, bias, n, x.stride(0), 1e-5, BLOCK_N=n, WB_FIRST=wf, num_warps=nw))
                check(f"rms late wf{wf} w{nw}", "rms", lambda wf=wf, nw=nw: rmsnorm_late[(m,)](
                    y, x, w, n, x.stride(0), 1e-5, BLOCK_N=n, WB_FIRST=wf, num_warps=nw))
        for block in (4096, 8192, 16384, 32768):
            for nw in (4, 8, 16, 32):
                for st in (1, 2):
                    for rows, rs in ((1, 1), (2, 2), (4, 2)):
                        if (block < n and rows > 1) or block // (32 * nw) > 64 or block < 32 * nw:
                            continue
                        r = rows if block >= n else 1
                        kw = dict(BLOCK_N=block, SINGLE_PASS=block >= n, EVEN_N=n % block == 0, ROWS=r,
                                  ROW_STAGES=rs, num_warps=nw, num_stages=st)
                        check(f"ln tmpl B{block} w{nw} st{st} rows{rows}/{rs}", "ln",
                              lambda kw=kw, r=r: ln.layernorm_kernel[(triton.cdiv(m, r),)](
                                  y, x, w, bias, m, n, x.stride(0), y.stride(0), 1e-5, **kw))
                        check(f"rms tmpl B{block} w{nw} st{st} rows{rows}/{rs}", "rms",
                              lambda kw=kw, r=r: rms.rmsnorm_kernel[(triton.cdiv(m, r),)](
                                  y, x, w, m, n, x.stride(0), y.stride(0), 1e-5, **kw))
        results.sort()
        for prefix in ("ln", "rms"):
            for t, name in [r for r in results if r[1].startswith(prefix)][:6]:
                print(f"{name}: {t*1e3:.1f} us  {t_copy/t:.1%} of copy", flush=True)
        for t, name in results:
            if "late" in name:
                print(f"{name}: {t*1e3:.1f} us  {t_copy/t:.1%} of copy")


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"done in {time.time()-t0:.0f} s")
