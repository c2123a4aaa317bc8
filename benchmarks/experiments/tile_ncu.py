"""Experiment (issue 19): Nsight Compute counters of kt's tile kernels where they miss their targets,
beside the anchor's own kernel on the same GPU in the same call (not part of kt).

Each case launches one kernel three times in a process of its own (`--case NAME`); the driver runs
`ncu` on that process once per case through kt's own reader (vendor_nvidia/ncu.py: duration, SM, tensor
pipe, DRAM and L2 throughput, achieved occupancy, the three largest stall reasons per issued
instruction) and adds registers, shared memory and the grid from `launch__*`. The kernels are the
configs kt's tunes picked (GEMM: results/s27/call2's manifests; attention: the best Gluon configs of
results/s40/call5, on the grid kt launches) and the anchors as kt's baselines call them: torch.matmul (cuBLAS),
torch._scaled_mm (exact accumulation), SDPA.

    python tile_ncu.py --json OUT.json
    python tile_ncu.py --case gemm8192_kt          (what ncu profiles)
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

CUBLAS = [".*(gemm|xmma|cutlass|sm90_).*"]
SDPA = [".*(flash|fmha|attention|cudnn|sm90_).*"]
# name: (what it launches, the kernel names ncu reads)
CASES = {
    "gemm8192_kt": ("gemm", 8192, "bfloat16", (128, 256, 64, 3, 8, 8), ["matmul_gluon_kernel"]),
    "gemm8192_cublas": ("gemm", 8192, "bfloat16", None, CUBLAS),
    "gemm1000_kt": ("gemm", 1000, "bfloat16", (128, 128, 64, 4, 4, 8), ["matmul_gluon_kernel"]),
    "gemm1000_cublas": ("gemm", 1000, "bfloat16", None, CUBLAS),
    "fp8_8192_kt": ("gemm", 8192, "float8_e4m3", (128, 256, 128, 3, 8, 8), ["matmul_gluon_kernel"]),
    "fp8_8192_scaled_mm": ("gemm", 8192, "float8_e4m3", None, CUBLAS),
    # attention: (BLOCK_M, BLOCK_N, num_warps, num_stages, OVERLAP, grid), the best Gluon configs of the
    # thirtieth session (results/s40/call5: two consumers taking turns, the kernel's choice, OVERLAP -1) on
    # the grid kt launches (full: persistent, "sm"; causal: "tile")
    "attn_full_d128_kt": ("attention", (4, 32, 32, 4096, 128, False), None, (128, 128, 4, 2, -1, "sm"),
                          ["attention_gluon_kernel"]),
    "attn_full_d128_1p_kt": ("attention", (4, 32, 32, 4096, 128, False), None, (128, 128, 8, 2, -1, "sm"),
                             ["attention_gluon_kernel"]),
    "attn_full_d128_sdpa": ("attention", (4, 32, 32, 4096, 128, False), None, None, SDPA),
    "attn_causal_d64_kt": ("attention", (4, 32, 32, 4096, 64, True), None, (128, 128, 4, 2, -1, "tile"),
                           ["attention_gluon_kernel"]),
    "attn_causal_d64_sdpa": ("attention", (4, 32, 32, 4096, 64, True), None, None, SDPA),
    "attn_causal_d128_kt": ("attention", (4, 32, 32, 4096, 128, True), None, (128, 128, 4, 2, -1, "tile"),
                            ["attention_gluon_kernel"]),
    "attn_causal_d128_sdpa": ("attention", (4, 32, 32, 4096, 128, True), None, None, SDPA),
    "attn_gqa8_d128_kt": ("attention", (4, 32, 8, 4096, 128, True), None, (128, 128, 4, 2, -1, "tile"),
                          ["attention_gluon_kernel"]),
    "attn_gqa8_d128_sdpa": ("attention", (4, 32, 8, 4096, 128, True), None, None, SDPA),
}
LAUNCH = ["launch__registers_per_thread", "launch__shared_mem_per_block_static",
          "launch__shared_mem_per_block_dynamic", "launch__grid_size", "launch__block_size",
          "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active",
          "sm__cycles_active.avg", "smsp__cycles_active.avg.pct_of_peak_sustained_elapsed"]


def launch(case: str) -> None:
    import torch

    kind, shape, dtype, config, _ = CASES[case]
    if kind == "gemm":
        import gluon_gemm

        a, b, anchors = gluon_gemm.inputs(shape, dtype)
        if config is None:
            fn = anchors["torch.matmul" if dtype == "bfloat16" else "_scaled_mm"]
        else:
            mod = gluon_gemm.load_kernel_module()
            c = torch.empty(shape, shape, device="cuda", dtype=torch.bfloat16)
            units = torch.cuda.get_device_properties(0).multi_processor_count
            fn = lambda: gluon_gemm.run_config(mod, a, b, c, config, units)  # noqa: E731
    else:
        import gluon_attention

        bsz, h, h_kv, s, d, causal = shape
        q = torch.randn(bsz, h, s, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(bsz, h_kv, s, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(bsz, h_kv, s, d, device="cuda", dtype=torch.bfloat16)
        o = torch.empty_like(q)
        if config is None:
            sdpa = torch.nn.functional.scaled_dot_product_attention
            fn = lambda: sdpa(q, k, v, is_causal=causal, enable_gqa=h != h_kv)  # noqa: E731
        else:
            mod = gluon_attention.load_kernel_module()
            fn = lambda: gluon_attention.run_gluon(mod, q, k, v, o, causal, config[:5], config[5])  # noqa: E731
    for _ in range(3):
        fn()
    torch.cuda.synchronize()


def profile(case: str) -> dict:
    """One ncu run of the case: kt's counters (vendor_nvidia/ncu.py's METRICS and stall reasons, read by
    its own parser) and the launch's resources, for the last launch of the case's kernel."""
    import csv
    import io

    from vendor_nvidia import ncu

    names = CASES[case][-1]
    stalls = [f"{ncu.STALL_PREFIX}{s}_per_issue_active.ratio" for s in ncu.STALLS]
    done = subprocess.run(["ncu", "--csv", "--clock-control", "none", "--kernel-name",
                           "regex:^(" + "|".join(names) + ")$", "--metrics",
                           ",".join(list(ncu.METRICS.values()) + stalls + LAUNCH),
                           sys.executable, __file__, "--case", case], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"ncu failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    row = ncu.parse_csv(done.stdout)
    for r in csv.DictReader(io.StringIO(done.stdout[done.stdout.find('"ID"'):])):
        if r["Metric Name"] in LAUNCH:
            row[r["Metric Name"]] = r["Metric Value"]
        row["kernel"] = r.get("Kernel Name", "")[:100]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES))
    parser.add_argument("--only", nargs="*", default=list(CASES))
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.case:
        launch(args.case)
        return
    out = {}
    for case in args.only:
        try:
            out[case] = profile(case)
        except Exception as exc:  # noqa: BLE001 - a case that fails is a row, not the end
            out[case] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        print(case, json.dumps(out[case]), flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
