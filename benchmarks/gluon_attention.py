"""The Gluon variant of the library's flash-attention forward (plugins/kt_templates/kernels/attention.py,
attention_gluon_kernel: FlashAttention-3 style, warp-specialized, sm_90) on the GPU here, against
torch.nn.functional.scaled_dot_product_attention and kt's Triton TMA kernel at its seed config.

For each shape (bf16; B4 H32 S4096 causal D128, full D128, causal D64, grouped-query H_KV8 causal D128,
and two small ragged ones, run first) it runs a small grid of Gluon configurations, checks each against
SDPA in fp32 (the largest element-wise error relative to |ref| + RMS(ref), and to RMS(ref)), times each,
SDPA and the Triton TMA kernel with triton.testing.do_bench (median; do_bench clears the L2 between
calls) and prints the best configuration per shape with its ratio to both. Every row, errors and
exception texts included, goes to --json, rewritten after each configuration, so a crash or a hang
(a watchdog ends the run after --hang-s seconds in one configuration) leaves what ran.

    python benchmarks/gluon_attention.py [--json OUT] [--shapes NAME ...] [--dry-run]

--dry-run checks that the imports work (torch, Triton's Gluon, the kernel module) and exits 0; no GPU.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "plugins" / "kt_templates" / "kernels" / "attention.py"
# name: (B, H, H_KV, S, D, causal)
SHAPES = {
    "ragged_s37_d128_causal_gqa": (2, 8, 2, 37, 128, True),
    "ragged_s1000_d64_full": (2, 8, 8, 1000, 64, False),
    "s4096_d128_causal": (4, 32, 32, 4096, 128, True),
    "s4096_d128_full": (4, 32, 32, 4096, 128, False),
    "s4096_d64_causal": (4, 32, 32, 4096, 64, True),
    "s4096_d128_causal_gqa8": (4, 32, 8, 4096, 128, True),
}
# (BLOCK_M, BLOCK_N, num_warps = 4 x consumer warpgroups, num_stages, OVERLAP: -1 the kernel's choice,
# 1 the softmax under the next Q K^T, 0 not)
CONFIGS = [
    (128, 128, 8, 2, -1), (128, 128, 8, 2, 1), (128, 64, 8, 2, -1), (128, 64, 8, 3, -1), (128, 64, 8, 3, 0),
    (128, 32, 8, 4, -1), (64, 64, 4, 2, -1), (64, 64, 4, 4, -1), (128, 128, 8, 3, -1), (256, 64, 8, 2, -1),
]
TRITON_SEED = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2, "TMA": 1}  # SEEDS[0]
TOLERANCE = 2e-2  # bf16: P rounded before P V, the output rounded (2^-8 relative), online softmax order
SHARED_LIMIT = 232448  # an sm_90 program's shared memory
_state = {"results": [], "meta": {}, "json": None}


def load_kernel_module():
    sys.path.insert(0, str(ROOT))
    from kt_cli.kernel import import_module

    return import_module(str(KERNEL))


def fits(config, d) -> str | None:
    """Why the kernel's CONSTRAINTS refuse this config at head dim d (None: they take it)."""
    bm, bn, warps, stages, _ = config
    if (bm + 2 * bn * stages) * d * 2 + 1024 > SHARED_LIMIT:
        return "shared memory"
    if (bm * d + bm * bn) // (32 * warps) > 160:
        return "registers"
    if bm % bn or bm % (16 * warps):
        return "tile"
    return None


def write_json() -> None:
    if _state["json"]:
        Path(_state["json"]).write_text(json.dumps({**_state["meta"], "results": _state["results"]}, indent=1))


class _Watchdog:
    """Ends the process (after writing the JSON) when one step runs longer than `seconds`: a kernel
    waiting on an mbarrier that never completes hangs the GPU, and nothing in-process can stop it."""

    def __init__(self, seconds: float):
        self.seconds, self.timer = seconds, None

    def arm(self, what: str, row: dict) -> None:
        self.disarm()

        def fire():
            row["error"] = f"hung: {what} ran past {self.seconds:.0f} s; run stopped"
            write_json()
            print(f"HUNG: {what}", file=sys.stderr, flush=True)
            os._exit(3)

        self.timer = threading.Timer(self.seconds, fire)
        self.timer.daemon = True
        self.timer.start()

    def disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def run_gluon(mod, q, k, v, o, causal, config) -> None:
    import triton

    bm, bn, warps, stages, overlap = config
    b, h, s, d = q.shape
    mod.attention_gluon_kernel[(triton.cdiv(s, bm), b * h)](
        *mod.gluon_descriptors(q, k, v, o, bm, bn), h, k.shape[1], s, mod.LOG2E / math.sqrt(d), CAUSAL=causal,
        num_stages=stages, PRODUCER_REGS=mod.PRODUCER_REGS, OVERLAP=overlap, num_warps=warps)


class _WithOptions:
    """What kt hands a template's launch(): kernels whose launches carry num_warps and num_stages."""

    def __init__(self, mod, **options):
        self.mod, self.options = mod, options

    def __getattr__(self, name):
        fn, options = getattr(self.mod, name), self.options

        class _Grid:
            def __getitem__(self, grid):
                return lambda *args, **kwargs: fn[grid](*args, **kwargs, **options)

        return _Grid()


def run_triton(mod, inputs) -> None:
    params = {k: v for k, v in TRITON_SEED.items() if k not in ("num_warps", "num_stages")}
    mod.launch(_WithOptions(mod, num_warps=TRITON_SEED["num_warps"], num_stages=TRITON_SEED["num_stages"]), inputs,
               params)


def errors(out, ref) -> dict:
    import torch

    diff = (out.float() - ref).abs()
    rms = float(ref.pow(2).mean().sqrt())
    return {"max_rel_err": float((diff / (ref.abs() + rms)).max()), "max_err_over_rms": float(diff.max()) / rms,
            "nan": bool(torch.isnan(out).any())}


def flops(b, h, s, d, causal) -> float:
    full = 4.0 * b * h * s * s * d
    return full / 2 if causal else full


def bench_shape(mod, name: str, watchdog: _Watchdog) -> dict:
    import torch
    import torch.nn.functional as F
    import triton

    b, h, h_kv, s, d, causal = SHAPES[name]
    gen = torch.Generator(device="cuda").manual_seed(s * d + h_kv)
    q, k, v = (torch.randn(b, heads, s, d, device="cuda", dtype=torch.bfloat16, generator=gen)
               for heads in (h, h_kv, h_kv))
    o = torch.empty_like(q)
    gqa = h != h_kv
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal, enable_gqa=gqa)
    sdpa = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)  # noqa: E731
    result = {"shape": name, "B": b, "H": h, "H_KV": h_kv, "S": s, "D": d, "causal": causal, "rows": []}
    _state["results"].append(result)
    result["sdpa_ms"] = triton.testing.do_bench(sdpa, return_mode="median")
    result["sdpa_err"] = errors(sdpa(), ref)
    inputs = {"q": q, "k": k, "v": v, "o": o, "causal": causal}
    row = result["triton"] = {"config": TRITON_SEED}
    try:
        watchdog.arm(f"{name} Triton TMA kernel", row)
        o.fill_(float("nan"))
        run_triton(mod, inputs)
        torch.cuda.synchronize()
        row.update(errors(o, ref))
        row["ms"] = triton.testing.do_bench(lambda: run_triton(mod, inputs), return_mode="median")
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        row["error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
    watchdog.disarm()
    print(f"{name}: SDPA {result['sdpa_ms']:.4f} ms, Triton TMA {row}", flush=True)
    write_json()
    for config in CONFIGS:
        row = {"config": dict(zip(("BLOCK_M", "BLOCK_N", "num_warps", "num_stages", "OVERLAP"), config))}
        result["rows"].append(row)
        skip = fits(config, d)
        if skip is not None:
            row["skipped"] = skip
            continue
        try:
            watchdog.arm(f"{name} {row['config']}", row)
            started = time.time()
            o.fill_(float("nan"))
            run_gluon(mod, q, k, v, o, causal, config)
            torch.cuda.synchronize()
            row["first_call_s"] = time.time() - started  # compile included
            row.update(errors(o, ref))
            row["ok"] = bool(row["max_rel_err"] <= TOLERANCE and not row["nan"])
            row["ms"] = triton.testing.do_bench(lambda: run_gluon(mod, q, k, v, o, causal, config),
                                                return_mode="median")
            row["tflops"] = flops(b, h, s, d, causal) / row["ms"] / 1e9
        except Exception as exc:  # noqa: BLE001 - a config that fails is a row of the table, not the end
            row["error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
        watchdog.disarm()
        print(f"  {name}: {row}", flush=True)
        write_json()
    good = [r for r in result["rows"] if r.get("ok")]
    best = result["best"] = min(good, key=lambda r: r["ms"]) if good else None
    if best:
        result["vs_sdpa"] = result["sdpa_ms"] / best["ms"]
        if result["triton"].get("ms"):
            result["vs_triton"] = result["triton"]["ms"] / best["ms"]
    write_json()
    return result


def print_table(results: list) -> None:
    print(f"{'shape':>28} {'best (BM,BN,warps,stages,OVERLAP)':>34} {'gluon ms':>9} {'sdpa ms':>9} {'triton ms':>9} "
          f"{'sdpa/gluon':>10} {'triton/gluon':>12} {'max rel err':>11} {'TFLOP/s':>8}")
    for r in results:
        best, tri = r.get("best"), r["triton"].get("ms")
        tri_s = f"{tri:>9.4f}" if tri else f"{'-':>9}"
        if best is None:
            print(f"{r['shape']:>28} {'no configuration passed':>34} {'':>9} {r['sdpa_ms']:>9.4f} {tri_s}")
            continue
        cfg = ",".join(str(v) for v in best["config"].values())
        vs_tri = f"{r['vs_triton']:>12.3f}" if r.get("vs_triton") else f"{'-':>12}"
        print(f"{r['shape']:>28} {cfg:>34} {best['ms']:>9.4f} {r['sdpa_ms']:>9.4f} {tri_s} {r['vs_sdpa']:>10.3f} "
              f"{vs_tri} {best['max_rel_err']:>11.2e} {best['tflops']:>8.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", nargs="+", choices=list(SHAPES), default=list(SHAPES))
    parser.add_argument("--json", help="write every row here (rewritten after each configuration)")
    parser.add_argument("--hang-s", type=float, default=90.0, help="end the run when one configuration takes longer")
    parser.add_argument("--dry-run", action="store_true", help="check the imports and exit")
    args = parser.parse_args()
    import torch
    import triton

    mod = load_kernel_module()
    if args.dry_run:
        print(f"imports ok: torch {torch.__version__}, triton {triton.__version__}, "
              f"{mod.attention_gluon_kernel.__name__}, {mod.attention_tma_kernel.__name__}")
        return 0
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        print("needs an sm_90 GPU (Hopper)", file=sys.stderr)
        return 2
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}, torch {torch.__version__}, triton {triton.__version__}", flush=True)
    _state["json"] = args.json
    _state["meta"] = {"device": props.name, "torch": torch.__version__, "triton": triton.__version__,
                      "tolerance": TOLERANCE}
    watchdog = _Watchdog(args.hang_s)
    results = [bench_shape(mod, name, watchdog) for name in args.shapes]
    print_table(results)
    write_json()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.exit(main())
