"""A second AMD timer: run a command under `rocprofv3 --kernel-trace` and read each dispatch's duration
from the CSV it writes. Durations come from the GPU's own dispatch timestamps (nanoseconds), so they
cross-check HIP-event timings without the event overhead."""

from __future__ import annotations

import csv
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kt_cli.errors import BadInput, EnvironmentProblem, JobFailed


@dataclass(frozen=True)
class Dispatch:
    kernel: str
    agent: str
    seconds: float
    grid: tuple[int, int, int]
    workgroup: tuple[int, int, int]
    vgprs: int
    agprs: int
    sgprs: int
    lds_bytes: int
    scratch_bytes: int


def available() -> bool:
    return shutil.which("rocprofv3") is not None


def parse_kernel_trace(path: Path) -> list[Dispatch]:
    """The dispatches of a rocprofv3 `*_kernel_trace.csv` (one header row, one row per dispatch)."""
    dispatches = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = {"Kernel_Name", "Start_Timestamp", "End_Timestamp"} - set(reader.fieldnames or ())
        if missing:
            raise BadInput(f"{path}: not a rocprofv3 kernel trace: no column {sorted(missing)[0]}")
        for row in reader:
            dispatches.append(Dispatch(
                kernel=row["Kernel_Name"], agent=row.get("Agent_Id", ""),
                seconds=(int(row["End_Timestamp"]) - int(row["Start_Timestamp"])) * 1e-9,
                grid=tuple(int(row.get(f"Grid_Size_{a}", 0) or 0) for a in "XYZ"),
                workgroup=tuple(int(row.get(f"Workgroup_Size_{a}", 0) or 0) for a in "XYZ"),
                vgprs=int(row.get("VGPR_Count", 0) or 0), agprs=int(row.get("Accum_VGPR_Count", 0) or 0),
                sgprs=int(row.get("SGPR_Count", 0) or 0), lds_bytes=int(row.get("LDS_Block_Size", 0) or 0),
                scratch_bytes=int(row.get("Scratch_Size", 0) or 0)))
    return dispatches


def trace_command(command: list[str], timeout: float = 600.0) -> list[Dispatch]:
    """Run `command` under rocprofv3's kernel trace; return every kernel dispatch it made."""
    if not available():
        raise EnvironmentProblem("rocprofv3 is not on PATH; install ROCm's rocprofiler-sdk or add /opt/rocm/bin to PATH")
    with tempfile.TemporaryDirectory(prefix="kt-rocprof-") as out:
        run = subprocess.run(["rocprofv3", "--kernel-trace", "--output-format", "csv", "-d", out, "-o", "kt",
                              "--", *command], capture_output=True, text=True, timeout=timeout)
        traces = sorted(Path(out).rglob("*kernel_trace.csv"))
        if run.returncode != 0 or not traces:
            tail = " | ".join((run.stderr or run.stdout).strip().splitlines()[-3:])
            raise JobFailed(f"rocprofv3 on {' '.join(command)!r} exited {run.returncode} "
                            f"{'with no kernel trace' if not traces else ''}: {tail}")
        return [d for path in traces for d in parse_kernel_trace(path)]


def durations(dispatches: list[Dispatch], name_contains: str = "", skip_first: int = 1) -> dict[str, list[float]]:
    """Seconds of each dispatch per kernel name (filtered by a substring); the first `skip_first`
    dispatches of each kernel are warm-up (code-object load, cold caches) and are dropped."""
    by_name: dict[str, list[float]] = {}
    for d in dispatches:
        if name_contains in d.kernel:
            by_name.setdefault(d.kernel, []).append(d.seconds)
    return {name: times[skip_first:] for name, times in by_name.items() if len(times) > skip_first}
