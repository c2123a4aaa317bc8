"""The Gluon variant of the library's bf16 GEMM (plugins/kt_templates/kernels/matmul.py,
matmul_gluon_kernel: persistent, warp-specialized, sm_90) on the GPU here, against torch.matmul.

For M = N = K in 4096, 8192 and 1000 it runs a small grid of configurations, checks each against an
fp32 reference (the largest element-wise error relative to |ref| + RMS(ref), and to RMS(ref)), times
each and torch.matmul with triton.testing.do_bench (median; do_bench clears the L2 between calls) and
prints the best configuration per shape with its ratio to torch.matmul.

    python benchmarks/gluon_gemm.py [--sizes 4096 8192 1000] [--json OUT] [--dry-run]

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
# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps = 4 x consumer warpgroups, GROUP_M)
CONFIGS = [
    (128, 256, 64, 3, 8, 8), (128, 256, 64, 3, 8, 1), (256, 128, 64, 3, 8, 8), (128, 128, 64, 4, 4, 8),
    (128, 128, 64, 5, 8, 8), (128, 128, 128, 3, 8, 8), (128, 256, 32, 5, 8, 8), (128, 64, 64, 6, 4, 8),
    (64, 128, 64, 6, 4, 8), (64, 256, 64, 4, 4, 8),
]
TOLERANCE = 2e-2  # bf16 output rounding (2^-8 relative) plus fp32 accumulation order over K
SHARED_LIMIT = 232448  # an sm_90 program's shared memory


def load_kernel_module():
    sys.path.insert(0, str(ROOT))
    from kt_cli.kernel import import_module

    return import_module(str(KERNEL))


def shared_bytes(bm, bn, bk, stages) -> int:
    return (bm + bn) * bk * 2 * stages + bm * bn * 2 + 1024


def run_config(mod, a, b, c, config, units: int) -> None:
    import triton

    bm, bn, bk, stages, warps, group_m = config
    (m, k), n = a.shape, b.shape[1]
    grid = (min(triton.cdiv(m, bm) * triton.cdiv(n, bn), units),)
    mod.matmul_gluon_kernel[grid](*mod.gluon_descriptors(a, b, c, bm, bn, bk), m, n, k, GROUP_M=group_m,
                                  num_stages=stages, PRODUCER_REGS=mod.PRODUCER_REGS, num_warps=warps)


def errors(out, ref) -> dict:
    diff = (out.float() - ref).abs()
    rms = float(ref.pow(2).mean().sqrt())
    return {"max_rel_err": float((diff / (ref.abs() + rms)).max()), "max_err_over_rms": float(diff.max()) / rms}


def bench_shape(mod, size: int, units: int) -> dict:
    import torch
    import triton

    gen = torch.Generator(device="cuda").manual_seed(size)
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16, generator=gen)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16, generator=gen)
    ref = a.float() @ b.float()
    c = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)
    torch_ms = triton.testing.do_bench(lambda: torch.matmul(a, b), return_mode="median")
    rows = []
    for config in CONFIGS:
        row = {"config": dict(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages", "num_warps", "GROUP_M"), config))}
        if shared_bytes(*config[:4]) > SHARED_LIMIT:
            rows.append({**row, "error": "shared memory"})
            continue
        try:
            c.fill_(float("nan"))
            run_config(mod, a, b, c, config, units)
            torch.cuda.synchronize()
            row.update(errors(c, ref))
            row["ok"] = bool(row["max_rel_err"] <= TOLERANCE and not torch.isnan(c).any())
            row["ms"] = triton.testing.do_bench(lambda: run_config(mod, a, b, c, config, units), return_mode="median")
            row["tflops"] = 2 * size**3 / row["ms"] / 1e9
        except Exception as exc:  # noqa: BLE001 - a config that fails is a row of the table, not the end
            row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        rows.append(row)
        print(f"  {size}: {row}", flush=True)
    good = [r for r in rows if r.get("ok")]
    best = min(good, key=lambda r: r["ms"]) if good else None
    return {"size": size, "torch_ms": torch_ms, "torch_err": errors(torch.matmul(a, b), ref), "rows": rows,
            "best": best, "ratio": torch_ms / best["ms"] if best else None}


def print_table(results: list) -> None:
    print(f"{'M=N=K':>6} {'best config (BM,BN,BK,stages,warps,GROUP_M)':>44} {'gluon ms':>9} {'torch ms':>9} "
          f"{'torch/gluon':>11} {'max rel err':>11} {'TFLOP/s':>8}")
    for r in results:
        best = r["best"]
        if best is None:
            print(f"{r['size']:>6} {'no configuration passed':>44} {'':>9} {r['torch_ms']:>9.4f}")
            continue
        cfg = ",".join(str(v) for v in best["config"].values())
        print(f"{r['size']:>6} {cfg:>44} {best['ms']:>9.4f} {r['torch_ms']:>9.4f} {r['ratio']:>11.3f} "
              f"{best['max_rel_err']:>11.2e} {best['tflops']:>8.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192, 1000])
    parser.add_argument("--json", help="write every row here")
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
    results = [bench_shape(mod, size, props.multi_processor_count) for size in args.sizes]
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": props.name, "torch": torch.__version__,
                                               "triton": triton.__version__, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.exit(main())
