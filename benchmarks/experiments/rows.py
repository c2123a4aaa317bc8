"""Experiment: long-row softmax variants (4096 x 32768 bf16) vs the copy bandwidth (not part of kt)."""
import time

import torch
import triton
import triton.language as tl

from common import bench, template


@triton.jit
def softmax_db(y_ptr, x_ptr, n_rows, n_cols, stride, BLOCK_N: tl.constexpr):
    """Persistent; the next row's loads are issued into registers before this row is reduced."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < n_cols
    x_next = tl.load(x_ptr + pid.to(tl.int64) * stride + offs, mask=mask, other=-float("inf"))
    for row in range(pid, n_rows, nprog):
        x = x_next.to(tl.float32)
        nxt = tl.minimum(row + nprog, n_rows - 1).to(tl.int64)
        x_next = tl.load(x_ptr + nxt * stride + offs, mask=mask, other=-float("inf"))
        e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
        r = 1.0 / tl.sum(e, axis=0)
        tl.store(y_ptr + row.to(tl.int64) * stride + offs, (e * r).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_split(y_ptr, x_ptr, n_rows, n_cols, stride, BLOCK_N: tl.constexpr, PARTS: tl.constexpr):
    """One program per row; the row is held as PARTS register blocks loaded all at once (more loads in
    flight per thread before the first use)."""
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
    e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
    r = 1.0 / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride + offs, (e * r).to(y_ptr.dtype.element_ty), mask=offs < n_cols)


def main():
    tmpl = template("softmax")

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for m, n in ((4096, 32768), (32768, 4096)):
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16) * 3
        y = torch.empty_like(x)
        ref = torch.softmax(x.float(), -1)
        t_copy = bench(lambda: y.copy_(x))
        t_torch = bench(lambda: torch.softmax(x, -1))
        nbytes = 2 * x.numel() * 2
        print(f"\n== {m}x{n}: copy {t_copy*1e3:.1f} us ({nbytes/t_copy/1e9:.2f} TB/s), torch softmax "
              f"{t_torch*1e3:.1f} us ({t_copy/t_torch:.2%})", flush=True)
        results = []

        def check(name, fn):
            try:
                y.zero_()
                fn()
                err = (y.float() - ref).abs().max().item()
                if err > 1e-2:
                    print(name, "WRONG", err)
                    return
                t = bench(fn)
                results.append((t, name))
            except Exception as e:  # noqa: BLE001
                print(name, type(e).__name__, str(e)[:120])

        bn = triton.next_power_of_2(n)
        for w in (8, 16, 32):
            for per_sm in (1, 2):
                grid = min(m, sms * per_sm)
                check(f"db w{w} grid{grid}", lambda w=w, grid=grid: softmax_db[(grid,)](
                    y, x, m, n, x.stride(0), BLOCK_N=bn, num_warps=w))
        for w in (8, 16, 32):
            check(f"split w{w}", lambda w=w: softmax_split[(m,)](y, x, m, n, x.stride(0), BLOCK_N=bn, PARTS=1,
                                                                    num_warps=w))
        for block in (4096, 8192, 32768):
            for w in (4, 8, 16, 32):
                for st in (1, 2):
                    for rows, rs in ((1, 1), (2, 2), (4, 2), (8, 3)):
                        if block < n and rows > 1:
                            continue
                        if block // (32 * w) > 64 or block < 32 * w:
                            continue
                        params = {"BLOCK_N": block, "ROWS": rows, "ROW_STAGES": rs}

                        def go(params=params, w=w, st=st):
                            single = block >= n
                            r = params["ROWS"] if single else 1
                            tmpl.softmax_kernel[(triton.cdiv(m, r),)](
                                y, x, m, n, x.stride(0), y.stride(0), BLOCK_N=block, SINGLE_PASS=single, ROWS=r,
                                ROW_STAGES=params["ROW_STAGES"], num_warps=w, num_stages=st)
                        check(f"tmpl B{block} w{w} st{st} rows{rows}/{rs}", go)
        results.sort()
        for t, name in results[:12]:
            print(f"{name}: {t*1e3:.1f} us  {t_copy/t:.1%} of copy", flush=True)
        for t, name in results:
            if name.startswith(("db", "split")):
                print(f"{name}: {t*1e3:.1f} us  {t_copy/t:.1%} of copy")


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"done in {time.time()-t0:.0f} s")
