"""The Gluon variant of the library's flash-attention forward (plugins/kt_templates/kernels/attention.py,
attention_gluon_kernel: FlashAttention-3 style, warp-specialized, sm_90) on the GPU here, against
torch.nn.functional.scaled_dot_product_attention and kt's Triton TMA kernel at its seed config.

For each shape (bf16; B4 H32 S4096 causal D128, full D128, causal D64, grouped-query H_KV8 causal D128,
and two small ragged ones, run first) it runs a small grid of Gluon configurations, checks each against
SDPA in fp32 by kt's element-wise rule (|out - ref| <= atol + rtol |ref| + rms RMS(ref's row), the kernel
module's TOLERANCE["bfloat16"]; the Triton kernel is judged the same way; max_rel_err, the largest error
relative to |ref| + RMS(ref), is kept for reference), times each,
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
# (BLOCK_M, BLOCK_N, num_warps, num_stages, OVERLAP: -1 the kernel's choice, 1 the softmax under the next
# Q K^T, 0 not, 2 two consumers taking turns at the tensor cores). BLOCK_M / (16 num_warps) consumer
# partitions of num_warps warps: (128, *, 8) is one partition of two warpgroups in lockstep, (128, *, 4) two
# independent warpgroups of 64 rows each. Two consumers at D 128 or over 128-key blocks compile with every
# wgmma serialised (ptxas C7512) unless they take turns (OVERLAP 2, the kernel's choice there); marked
# "serialised", they run anyway.
CONFIGS = [
    (128, 128, 8, 3, -1), (128, 128, 8, 2, -1), (128, 64, 8, 3, -1),  # one consumer partition (the old best)
    (128, 64, 4, 2, -1), (128, 64, 4, 3, -1), (128, 64, 4, 3, 0), (128, 32, 4, 4, -1),  # two consumers
    (128, 128, 4, 2, 0),  # two consumers, 128-key blocks (serialised wgmma)
    (128, 128, 4, 2, 2), (128, 64, 4, 2, 2), (128, 64, 4, 3, 2), (128, 64, 4, 4, 2),  # two consumers taking turns
]
# Each config runs persistent (a program per SM, as kt launches full attention) and with a program per query
# tile (as kt launches causal attention, and the kernel ran before it was persistent): both in one run. (One
# partition of two warpgroups with OVERLAP = 1 forced on 128 x 128 blocks at D = 128 spills and ran 1.9x
# slower: results/s40/call0.)
GRIDS = ("sm", "tile")
TRITON_SEED = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2, "TMA": 1}  # SEEDS[0]
SHARED_LIMIT = 232448  # an sm_90 program's shared memory
_state = {"results": [], "meta": {}, "json": None}


def load_kernel_module():
    sys.path.insert(0, str(ROOT))
    from kt_cli.kernel import import_module

    return import_module(str(KERNEL))


def fits(config, d) -> str | None:
    """Why the kernel cannot take this config at head dim d (None: it can). Two consumers whose wgmma
    ptxas serialises are marked by `serialised`, not skipped."""
    bm, bn, warps, stages, _ = config
    if (bm + 2 * bn * stages) * d * 2 + 1024 > SHARED_LIMIT:
        return "shared memory"
    if (d + bn) // 2 > 160:  # fp32 O and scores per consumer thread, 16 rows a warp
        return "registers"
    consumers = bm // (16 * warps)
    if bm % bn or bm % (16 * warps) or consumers not in (1, 2) or (consumers == 2 and warps != 4):
        return "tile"
    return None


def serialised(config, d) -> bool:
    """Two consumer warpgroups whose sm_90 compile serialises every wgmma (a tune searches them too: they
    beat one partition's lockstep warpgroups at D = 128); taking turns (OVERLAP 2), they compile cleanly."""
    bm, bn, warps, _, overlap = config
    return bm // (16 * warps) == 2 and (d > 64 or bn > 64) and overlap != 2


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


def run_gluon(mod, q, k, v, o, causal, config, grid) -> None:
    """The Gluon kernel at `config` on `grid` programs: "sm", persistent (a program per SM; what kt
    launches for full attention), or "tile", a program per query tile (what kt launches for causal)."""
    import triton

    bm, bn, warps, stages, overlap = config
    b, h, s, d = q.shape
    tiles = triton.cdiv(s, bm) * b * h
    mod.attention_gluon_kernel[(mod.gluon_programs(q, tiles, False) if grid == "sm" else tiles, )](
        *mod.gluon_descriptors(q, k, v, o, bm, bn), b, h, k.shape[1], s, mod.LOG2E / math.sqrt(d), CAUSAL=causal,
        num_stages=stages, PRODUCER_REGS=mod.PRODUCER_REGS, OVERLAP=overlap, num_warps=warps)


def run_triton(mod, inputs) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks" / "experiments"))
    from common import Bound  # the kernels' launches with kt's launch options

    options = {k: TRITON_SEED[k] for k in ("num_warps", "num_stages")}
    mod.launch(Bound(mod, options), inputs, {k: v for k, v in TRITON_SEED.items() if k not in options})


def errors(out, ref, tol: dict) -> dict:
    """kt's element-wise verdict (kt_cli.evaluate.verify.Tolerance): |out - ref| <= atol + rtol |ref| +
    rms RMS(ref's row) for every element, `worst_excess` the largest ratio of error to bound (1: the
    limit); and, for reference, the largest error relative to |ref| + RMS(ref) and to RMS(ref)."""
    import torch

    diff = (out.float() - ref).abs()
    rms = float(ref.pow(2).mean().sqrt())
    bound = tol["atol"] + tol["rtol"] * ref.abs() + tol["rms"] * ref.pow(2).mean(-1, keepdim=True).sqrt()
    excess = (diff / bound).nan_to_num(nan=float("inf"))
    nan = bool(torch.isnan(out).any())
    worst = float(excess.max())
    return {"ok": bool(worst <= 1.0 and not nan), "worst_excess": worst,
            "max_rel_err": float((diff / (ref.abs() + rms)).max()), "max_err_over_rms": float(diff.max()) / rms,
            "nan": nan}


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
    tol = mod.TOLERANCE["bfloat16"]
    result["sdpa_err"] = errors(sdpa(), ref, tol)
    inputs = {"q": q, "k": k, "v": v, "o": o, "causal": causal}
    row = result["triton"] = {"config": TRITON_SEED}
    try:
        watchdog.arm(f"{name} Triton TMA kernel", row)
        o.fill_(float("nan"))
        run_triton(mod, inputs)
        torch.cuda.synchronize()
        row.update(errors(o, ref, tol))
        row["ms"] = triton.testing.do_bench(lambda: run_triton(mod, inputs), return_mode="median")
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        row["error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
    watchdog.disarm()
    print(f"{name}: SDPA {result['sdpa_ms']:.4f} ms, Triton TMA {row}", flush=True)
    write_json()
    for config in CONFIGS:
        for grid in GRIDS:
            row = {"config": dict(zip(("BLOCK_M", "BLOCK_N", "num_warps", "num_stages", "OVERLAP"), config)),
                   "grid": grid}
            result["rows"].append(row)
            skip = fits(config, d)
            if skip is not None:
                row["skipped"] = skip
                continue
            row["consumers"] = config[0] // (16 * config[2])
            row["serialised"] = serialised(config, d)
            time_gluon(mod, name, watchdog, row, (q, k, v, o, ref, causal), config, tol)
    good = [r for r in result["rows"] if r.get("ok")]
    best = result["best"] = min(good, key=lambda r: r["ms"]) if good else None
    if best:
        result["vs_sdpa"] = result["sdpa_ms"] / best["ms"]
        if result["triton"].get("ms"):
            result["vs_triton"] = result["triton"]["ms"] / best["ms"]
    write_json()
    return result


def time_gluon(mod, name, watchdog, row, tensors, config, tol) -> None:
    """Run, check and time one Gluon config (`row` gets the verdict and the time, or the error)."""
    import torch
    import triton

    q, k, v, o, ref, causal = tensors
    b, h, s, d = q.shape
    try:
        watchdog.arm(f"{name} {row['config']} {row['grid']}", row)
        started = time.time()
        o.fill_(float("nan"))
        run_gluon(mod, q, k, v, o, causal, config, row["grid"])
        torch.cuda.synchronize()
        row["first_call_s"] = time.time() - started  # compile included
        row.update(errors(o, ref, tol))
        row["ms"] = triton.testing.do_bench(lambda: run_gluon(mod, q, k, v, o, causal, config, row["grid"]),
                                            return_mode="median")
        row["tflops"] = flops(b, h, s, d, causal) / row["ms"] / 1e9
    except Exception as exc:  # noqa: BLE001 - a config that fails is a row of the table, not the end
        row["error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
    watchdog.disarm()
    print(f"  {name}: {row}", flush=True)
    write_json()


def print_table(results: list) -> None:
    """The best passing configuration per shape, then the best with one consumer partition and with two
    (so the old and new structures compare in one run); `ok` columns are kt's verdicts (Gluon, Triton)."""
    print(f"{'shape':>28} {'which':>9} {'(BM,BN,warps,stages,OVERLAP)':>30} {'gluon ms':>9} {'sdpa ms':>9} "
          f"{'triton ms':>9} {'sdpa/gluon':>10} {'triton/gluon':>12} {'max rel err':>11} {'excess':>7} "
          f"{'TFLOP/s':>8} {'triton ok':>9}")
    for r in results:
        tri = r["triton"].get("ms")
        tri_s = f"{tri:>9.4f}" if tri else f"{'-':>9}"
        tri_ok = str(r["triton"].get("ok", "-"))
        good = [x for x in r["rows"] if x.get("ok") and x.get("ms")]
        persistent = [x for x in good if x["grid"] == "sm"]
        picks = [("best", good), ("1 cons", [x for x in persistent if x.get("consumers") == 1]),
                 ("2 cons", [x for x in persistent if x.get("consumers") == 2]),
                 ("per tile", [x for x in good if x["grid"] == "tile"])]
        for which, rows in picks:
            if not rows:
                print(f"{r['shape']:>28} {which:>9} {'no configuration passed':>30} {'':>9} {r['sdpa_ms']:>9.4f} "
                      f"{tri_s} {'':>10} {'':>12} {'':>11} {'':>7} {'':>8} {tri_ok:>9}")
                continue
            best = min(rows, key=lambda x: x["ms"])
            cfg = (",".join(str(v) for v in best["config"].values()) + (" ser" if best.get("serialised") else "")
                   + f" {best['grid']}")
            vs_tri = f"{tri / best['ms']:>12.3f}" if tri else f"{'-':>12}"
            print(f"{r['shape']:>28} {which:>9} {cfg:>30} {best['ms']:>9.4f} {r['sdpa_ms']:>9.4f} {tri_s} "
                  f"{r['sdpa_ms'] / best['ms']:>10.3f} {vs_tri} {best['max_rel_err']:>11.2e} "
                  f"{best['worst_excess']:>7.3f} {best['tflops']:>8.1f} {tri_ok:>9}")


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
                      "tolerance": {k: v for k, v in mod.TOLERANCE["bfloat16"].items() if k != "why"}}
    watchdog = _Watchdog(args.hang_s)
    results = [bench_shape(mod, name, watchdog) for name in args.shapes]
    print_table(results)
    write_json()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.exit(main())
