"""The Gluon variant of the library's GEMM (plugins/kt_templates/kernels/matmul.py, matmul_gluon_kernel:
persistent, warp-specialized, sm_90) on the GPU here, in bf16 against torch.matmul or in fp8 e4m3 (B
K-major, C bf16) against torch._scaled_mm, with and without its fast accumulation.

For M = N = K in the given sizes it runs a small grid of configurations, checks each against an fp32
reference (the largest element-wise error relative to |ref| + RMS(ref), and to RMS(ref)), times each and
the anchors with triton.testing.do_bench (median; do_bench clears the L2 between calls) and prints the
best configuration per shape with its ratio to each anchor.

    python benchmarks/gluon_gemm.py [--dtype bfloat16|float8_e4m3] [--sizes 4096 8192 1000] [--json OUT]
                                    [--configs N] [--producer-regs 40 24 56 88] [--dry-run]

--configs N keeps the first N configurations of the grid (the best-known first). --producer-regs times
each configuration at each of these register budgets of the producer warp (setmaxnreg; the consumer
warpgroups get what is left: the library's PRODUCER_REGS knob), one after another and then again in
the reverse order, so that a clock drifting during the run weighs on each value alike; a row's `ms` is
the mean of its two medians.

--dry-run checks that the imports work (torch, Triton's Gluon, the kernel module) and exits 0; no GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "plugins" / "kt_templates" / "kernels" / "matmul.py"
# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps = 4 x consumer warpgroups, GROUP_M) per input dtype
CONFIGS = {
    "bfloat16": [
        (128, 256, 64, 3, 8, 8), (128, 256, 64, 3, 8, 1), (256, 128, 64, 3, 8, 8), (128, 128, 64, 4, 4, 8),
        (128, 128, 64, 5, 8, 8), (128, 128, 128, 3, 8, 8), (128, 256, 32, 5, 8, 8), (128, 64, 64, 6, 4, 8),
        (64, 128, 64, 6, 4, 8), (64, 256, 64, 4, 4, 8),
    ],
    "float8_e4m3": [  # 128 fp8 elements are one 128-byte swizzled row, as 64 are in bf16
        (128, 256, 128, 3, 8, 8), (128, 256, 128, 3, 8, 1), (256, 128, 128, 3, 8, 8), (128, 256, 64, 5, 8, 8),
        (128, 128, 128, 4, 4, 8), (128, 128, 128, 6, 4, 8), (128, 128, 128, 5, 8, 8), (128, 128, 256, 3, 4, 8),
        (64, 256, 128, 4, 4, 8), (128, 64, 128, 6, 4, 8),
    ],
}
# bf16 output rounding (2^-8 relative) plus fp32 accumulation order over K; fp8's wgmma adds its products
# in fewer bits (Triton's default on sm_90, as torch._scaled_mm's use_fast_accum)
TOLERANCE = {"bfloat16": 2e-2, "float8_e4m3": 6e-2}
SHARED_LIMIT = 232448  # an sm_90 program's shared memory


def load_kernel_module():
    sys.path.insert(0, str(ROOT))
    from kt_cli.kernel import import_module

    return import_module(str(KERNEL))


def shared_bytes(bm, bn, bk, stages, dtype_bytes) -> int:
    return (bm + bn) * bk * dtype_bytes * stages + bm * bn * 2 + 1024


def run_config(mod, a, b, c, config, units: int, producer_regs: int) -> None:
    import triton

    bm, bn, bk, stages, warps, group_m = config
    (m, k), n = a.shape, b.shape[1]
    grid = (min(triton.cdiv(m, bm) * triton.cdiv(n, bn), units),)
    # one K split: k_per_split = K, and no workspace or tile counters (the kernel reads neither)
    mod.matmul_gluon_kernel[grid](*mod.gluon_descriptors(a, b, c, bm, bn, bk, bn), m, n, k, k, c, c, GROUP_M=group_m,
                                  num_stages=stages, PRODUCER_REGS=producer_regs, num_warps=warps,
                                  B_KMAJOR=b.stride(0) == 1)


def errors(out, ref) -> dict:
    diff = (out.float() - ref).abs()
    rms = float(ref.pow(2).mean().sqrt())
    return {"max_rel_err": float((diff / (ref.abs() + rms)).max()), "max_err_over_rms": float(diff.max()) / rms}


def inputs(size: int, dtype: str):
    """A, B (fp8: B K-major, as torch._scaled_mm wants it), an empty C, and the anchors by name."""
    import torch

    gen = torch.Generator(device="cuda").manual_seed(size)
    if dtype == "bfloat16":
        a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16, generator=gen)
        b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16, generator=gen)
        return a, b, {"torch.matmul": lambda: torch.matmul(a, b)}
    a = torch.randn(size, size, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    b = torch.randn(size, size, device="cuda", generator=gen).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")

    def scaled(fast: bool):
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=fast)
    return a, b, {"_scaled_mm": scaled(False), "_scaled_mm fast_accum": scaled(True)}


def bench_shape(mod, size: int, units: int, dtype: str, configs: list, budgets: list) -> dict:
    import torch
    import triton

    a, b, anchors = inputs(size, dtype)
    ref = a.float() @ b.float()
    c = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)
    anchor_ms = {name: triton.testing.do_bench(fn, return_mode="median") for name, fn in anchors.items()}
    rows = []
    for config in configs:
        named = dict(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages", "num_warps", "GROUP_M"), config))
        if shared_bytes(*config[:4], a.element_size()) > SHARED_LIMIT:
            rows.append({"config": named, "error": "shared memory"})
            continue
        group = [{"config": {**named, "PRODUCER_REGS": regs}, "medians": []} for regs in budgets]
        for order in (group, group[::-1]):
            for row in order:
                if "error" in row:
                    continue
                regs = row["config"]["PRODUCER_REGS"]
                try:
                    if not row["medians"]:
                        c.fill_(float("nan"))
                        run_config(mod, a, b, c, config, units, regs)
                        torch.cuda.synchronize()
                        row.update(errors(c, ref))
                        row["ok"] = bool(row["max_rel_err"] <= TOLERANCE[dtype] and not torch.isnan(c).any())
                    row["medians"].append(triton.testing.do_bench(
                        lambda: run_config(mod, a, b, c, config, units, regs), return_mode="median"))
                except Exception as exc:  # noqa: BLE001 - a config that fails is a row of the table, not the end
                    row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        for row in group:
            if row["medians"] and "error" not in row:
                row["ms"] = sum(row["medians"]) / len(row["medians"])
                row["tflops"] = 2 * size**3 / row["ms"] / 1e9
            rows.append(row)
            print(f"  {size}: {row}", flush=True)
    # the anchors again after the configs: a clock that drifted during the run shows as a difference
    anchor_after = {name: triton.testing.do_bench(fn, return_mode="median") for name, fn in anchors.items()}
    good = [r for r in rows if r.get("ok")]
    best = min(good, key=lambda r: r["ms"]) if good else None
    return {"size": size, "dtype": dtype, "anchor_ms": anchor_ms, "anchor_ms_after": anchor_after,
            "anchor_err": {name: errors(fn(), ref) for name, fn in anchors.items()}, "rows": rows, "best": best,
            "ratio": {name: ms / best["ms"] for name, ms in anchor_ms.items()} if best else None}


def print_table(results: list) -> None:
    print(f"{'M=N=K':>6} {'best config (BM,BN,BK,stages,warps,GROUP_M,regs)':>44} {'gluon ms':>9} {'TFLOP/s':>8} "
          f"{'max rel err':>11}  anchors: ms (after the configs), anchor / gluon")
    for r in results:
        best = r["best"]
        anchors = "; ".join(f"{name} {ms:.4f} ({r['anchor_ms_after'][name]:.4f})"
                            + (f", {r['ratio'][name]:.3f}" if best else "") for name, ms in r["anchor_ms"].items())
        if best is None:
            print(f"{r['size']:>6} {'no configuration passed':>44} {'':>9} {'':>8} {'':>11}  {anchors}")
            continue
        cfg = ",".join(str(v) for v in best["config"].values())
        print(f"{r['size']:>6} {cfg:>44} {best['ms']:>9.4f} {best['tflops']:>8.1f} {best['max_rel_err']:>11.2e}  {anchors}")


def print_budgets(results: list, default: int) -> None:
    """Each configuration's time at each producer register budget over its time at `default`."""
    for r in results:
        by_config: dict = {}
        for row in r["rows"]:
            if "ms" in row:
                config = {k: v for k, v in row["config"].items() if k != "PRODUCER_REGS"}
                by_config.setdefault(tuple(config.values()), {})[row["config"]["PRODUCER_REGS"]] = row["ms"]
        for config, times in by_config.items():
            if default in times and len(times) > 1:
                shown = ", ".join(f"{regs}: {ms:.4f} ms ({ms / times[default]:.3f}x)" for regs, ms in times.items())
                print(f"{r['size']:>6} {','.join(map(str, config))}: {shown}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", choices=sorted(CONFIGS), default="bfloat16")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192, 1000])
    parser.add_argument("--json", help="write every row here")
    parser.add_argument("--configs", type=int, help="only the first N configurations of the grid")
    parser.add_argument("--producer-regs", type=int, nargs="+",
                        help="time each configuration at each of these producer register budgets")
    parser.add_argument("--dry-run", action="store_true", help="check the imports and exit")
    args = parser.parse_args()
    import torch
    import triton

    mod = load_kernel_module()
    if args.dry_run:
        print(f"imports ok: torch {torch.__version__}, triton {triton.__version__}, {mod.matmul_gluon_kernel.__name__}")
        return 0
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        print("needs an sm_90 GPU (Hopper)", file=sys.stderr)
        return 2
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}, torch {torch.__version__}, triton {triton.__version__}", flush=True)
    configs = CONFIGS[args.dtype][:args.configs]
    budgets = args.producer_regs or [mod.PRODUCER_REGS]
    results = [bench_shape(mod, size, props.multi_processor_count, args.dtype, configs, budgets) for size in args.sizes]
    print_table(results)
    print_budgets(results, mod.PRODUCER_REGS)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": props.name, "torch": torch.__version__,
                                               "triton": triton.__version__, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.exit(main())
