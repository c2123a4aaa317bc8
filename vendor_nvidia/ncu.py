"""Nsight Compute counters for `kt tune --profile`: one `ncu --csv` run over a process that launches
the candidate, the last launch of each kernel read (the first ones warm caches and compile)."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess

METRICS = {
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "dram_throughput_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l2_throughput_pct": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm_throughput_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "tensor_pipe_pct": "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "duration_ns": "gpu__time_duration.sum",
}
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALLS = ("long_scoreboard", "short_scoreboard", "barrier", "mio_throttle", "lg_throttle", "math_pipe_throttle",
          "wait", "not_selected", "dispatch_stall", "membar", "no_instruction", "imc_miss", "branch_resolving")


def ncu_available() -> bool:
    return shutil.which("ncu") is not None


def profile(command: list[str], kernel_names: list[str], timeout: float = 600) -> dict:
    """{counter: value} of the last launch of the first kernel named, plus the top three stall reasons."""
    stall_metrics = [f"{STALL_PREFIX}{s}_per_issue_active.ratio" for s in STALLS]
    regex = "regex:^(" + "|".join(kernel_names) + ")$"
    ncu = ["ncu", "--csv", "--clock-control", "none", "--kernel-name", regex,
           "--metrics", ",".join(list(METRICS.values()) + stall_metrics)]
    done = subprocess.run(ncu + command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"ncu failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return parse_csv(done.stdout)


def parse_csv(text: str) -> dict:
    """ncu --csv prints one row per (launch, metric); keep each metric's value for the last launch."""
    start = text.find('"ID"')
    if start < 0:
        raise RuntimeError("ncu printed no metrics (did the kernel run?)")
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    values: dict = {}
    for row in rows:
        try:
            values[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
    out = {name: values[metric] for name, metric in METRICS.items() if metric in values}
    stalls = {s: values.get(f"{STALL_PREFIX}{s}_per_issue_active.ratio") for s in STALLS}
    ranked = sorted(((v, s) for s, v in stalls.items() if v), reverse=True)[:3]
    out["top_stalls"] = [f"{s} ({v:.2f})" for v, s in ranked]
    return out
