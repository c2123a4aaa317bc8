"""Recorded artifacts for compare/check/load tests: manifests written by hand, modelled on what
`kt tune` writes on an H100 (measured), an MI300X (measured) and without a GPU (estimated), around
the library's real softmax source. They are fixtures, not the code under test."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

SOFTMAX = Path(__file__).resolve().parent.parent / "plugins" / "kt_templates" / "kernels" / "softmax.py"
H100 = {"bfloat16": 989.4e12, "float32": 66.9e12, "dram_bytes_per_s": 3.35e12}
MI300X = {"bfloat16": 1307.4e12, "float32": 163.4e12, "dram_bytes_per_s": 5.3e12}
B200 = {"bfloat16": 2250e12, "float32": 80e12, "dram_bytes_per_s": 8.0e12}
OPTIONS = {"nvidia": ["num_warps", "num_stages", "num_ctas", "maxnreg"],
           "amd": ["num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim", "kpack"]}


def entry(target: str, shape: dict, params: dict, seconds: float, peaks: dict, device: str | None,
          speedup: float | None = None, dtype_bytes: int = 2) -> dict:
    """One results[] entry; measured when `device` is given (with stats.speedup), else estimated."""
    moved, flops = 2.0 * shape["M"] * shape["N"] * dtype_bytes, 5.0 * shape["M"] * shape["N"]
    stats = {"bytes_per_s": moved / seconds, "flops_per_s": flops / seconds,
             "fraction_of_peak": moved / seconds / peaks["dram_bytes_per_s"]}
    if device:
        stats.update(median=seconds, p10=seconds * 0.98, p90=seconds * 1.03, ci_low=seconds * 0.995,
                     ci_high=seconds * 1.005, calls=200, method="events", timer="cuda-events",
                     speedup=speedup, baseline={"median": seconds * speedup, "calls": 200, "method": "events"})
    else:
        stats["estimate"] = {"seconds": seconds, "bound": "memory"}
    return {
        "target": target, "shape": shape, "shape_key": ",".join(f"{k}={v}" for k, v in shape.items()),
        "mode": "measured" if device else "estimated",
        "device": {"name": device, "index": 0} if device else None, "peaks": peaks, "params": params,
        "seconds": seconds, "stats": stats,
        "verification": {"max_rel_error": 0.004, "tolerance": 0.01, "trials": 3,
                         "shapes": [shape, {"M": 37, "N": 300}]},
        "resources": {}, "trials": 12, "failures": {"ok": 12},
    }


def write_artifact(directory: Path, name: str, results: list[dict], dtype: str = "bfloat16",
                   created: str = "2026-11-20T10:00:00+00:00") -> Path:
    path = directory / f"{name}.kt"
    path.mkdir(parents=True)
    shutil.copyfile(SOFTMAX, path / "softmax.py")
    vendors = {r["target"] for r in results}
    manifest = {
        "schema": 1, "name": name, "created": created, "dtype": dtype,
        "kernel": {"generator": "templates", "name": "softmax", "source_file": "softmax.py",
                   "source_sha256": hashlib.sha256(SOFTMAX.read_bytes()).hexdigest(), "functions": {}, "meta": {}},
        "recipe": {"path": "recipes/softmax.toml", "sha256": "0" * 64},
        "launch_options": {t: OPTIONS[t.split(":")[0]] for t in vendors},
        "storage": "sqlite:///softmax.study.db",
        "provenance": {"kt": "0.1.0", "torch": "2.13.0", "triton": "3.6.0", "python": "3.11.7"},
        "results": results,
    }
    (path / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    (path / "trials.jsonl").write_text("")
    return path


BIG, WIDE = {"M": 32768, "N": 4096}, {"M": 4096, "N": 32768}


def nvidia_artifact(directory: Path) -> Path:
    """Tuned on an H100: both problems measured; sm_100 estimated (no B200 there)."""
    return write_artifact(directory / "h100", "softmax", [
        entry("nvidia:sm_90", BIG, {"BLOCK_N": 4096, "num_warps": 8, "num_stages": 2}, 180e-6, H100, "NVIDIA H100 80GB HBM3", 1.5),
        entry("nvidia:sm_90", WIDE, {"BLOCK_N": 2048, "num_warps": 16, "num_stages": 1}, 190e-6, H100, "NVIDIA H100 80GB HBM3", 1.2),
        entry("nvidia:sm_100", BIG, {"BLOCK_N": 4096, "num_warps": 8, "num_stages": 3}, 80e-6, B200, None),
    ])


def amd_artifact(directory: Path) -> Path:
    """Tuned on an MI300X: both problems measured."""
    return write_artifact(directory / "mi300x", "softmax", [
        entry("amd:gfx942", BIG, {"BLOCK_N": 4096, "num_warps": 4, "num_stages": 2, "waves_per_eu": 2}, 140e-6, MI300X, "AMD Instinct MI300X", 1.1),
        entry("amd:gfx942", WIDE, {"BLOCK_N": 1024, "num_warps": 16, "num_stages": 2, "waves_per_eu": 1}, 150e-6, MI300X, "AMD Instinct MI300X", 0.9),
    ], created="2026-11-21T10:00:00+00:00")


def paired_samples(kernel_s: float, reference_s: float, n: int = 100, noise: float = 0.02,
                   seed: int = 1) -> tuple[list[float], list[float]]:
    """Pairs as a GPU gives them: a drift shared by both members of a pair (clocks, other tenants)
    and independent jitter on each."""
    rng = random.Random(seed)
    kernel, reference = [], []
    for _ in range(n):
        drift = rng.lognormvariate(0, 0.05)
        kernel.append(kernel_s * drift * rng.lognormvariate(0, noise))
        reference.append(reference_s * drift * rng.lognormvariate(0, noise))
    return kernel, reference


def recording(path: Path, artifact: Path, entries: dict) -> Path:
    """A `kt check --record` file for `artifact`: {"target|shape_key": samples dict}."""
    sha = json.loads((artifact / "manifest.json").read_text())["kernel"]["source_sha256"]
    path.write_text(json.dumps({"kt_check_samples": 1, "artifacts": {sha: {"name": "softmax", "entries": entries}}}))
    return path


def kt_cli_runner():
    """Invoke the `kt` group with plugin commands added, as `kt` itself does at start-up."""
    from click.testing import CliRunner

    from kt_cli.cli import cli
    from kt_cli.plugins import load_plugins

    load_plugins().hook.kt_register_commands(cli=cli)
    runner = CliRunner()
    return lambda *args: runner.invoke(cli, [str(a) for a in args])


def tamper(artifact: Path) -> None:
    """Edit the kernel source after the manifest recorded its sha256."""
    source = artifact / "softmax.py"
    text = source.read_text()
    edited = text.replace("tl.exp2((x - tl.max(x, axis=0))", "tl.exp2((x")
    assert edited != text, "the softmax source changed: tamper() must edit it"
    source.write_text(edited)
