"""The NVIDIA plugin: every hook kt asks of a vendor, for CUDA targets."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

from kt_cli.hookspecs import hookimpl
from kt_cli.types import Device, Resources, TargetSpec
from vendor_nvidia.occupancy import blocks_per_sm
from kt_cli.peaks import peaks_for_name, peaks_of
from vendor_nvidia.peaks import ARCHS, DEVICES

VENDOR = "nvidia"
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def target_spec(arch: str) -> TargetSpec:
    props = dict(ARCHS[arch])
    part = props.pop("part")
    peaks = peaks_of(DEVICES[part])
    props.update(warp_size=32, max_warps_per_unit=props["max_threads_per_unit"] // 32,
                 saturating_occupancy=0.25)
    return TargetSpec(VENDOR, arch, props, peaks, LAUNCH_OPTIONS)


@hookimpl
def kt_targets():
    return [target_spec(arch) for arch in ARCHS]


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and getattr(torch.version, "hip", None) is None


@hookimpl
def kt_detect_devices():
    if not _cuda_available():
        return []
    import torch

    found = []
    for index in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(index)
        arch = f"sm_{p.major}{p.minor}"
        found.append(Device(VENDOR, index, p.name, f"{VENDOR}:{arch}", {
            "sm_count": p.multi_processor_count,
            "l2_bytes": getattr(p, "L2_cache_size", 0),
            "memory_bytes": p.total_memory,
            "cuda": torch.version.cuda,
            "driver": _driver_version(),
        }))
    return found


def _driver_version() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


@hookimpl
def kt_device_peaks(device):
    if device.vendor != VENDOR:
        return None
    return peaks_for_name(DEVICES, device.name) or target_spec(device.target.split(":")[1]).peaks


@hookimpl
def kt_device_env(device):
    if device.vendor != VENDOR:
        return None
    return {"CUDA_VISIBLE_DEVICES": str(device.index)}


@hookimpl
def kt_compile(fn, signature, constexprs, options, target):
    if target.vendor != VENDOR:
        return None
    from kt_cli.triton_compile import cross_compile

    return cross_compile(fn, signature, constexprs, options, "cuda", int(target.arch.split("_")[1]), 32)


_RES = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def read_cubin_usage(cubin: bytes) -> dict:
    """Registers, stack, static shared and local (spill) bytes from `cuobjdump -res-usage`."""
    from kt_cli.triton_compile import triton_tool

    tool = triton_tool("cuobjdump")
    if tool is None:
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        path = f.name
    try:
        out = subprocess.run([tool, "-res-usage", path], capture_output=True, text=True, timeout=60).stdout
    finally:
        os.unlink(path)
    m = _RES.search(out)
    if not m:
        return {}
    reg, stack, shared, local = (int(g) for g in m.groups())
    return {"registers": reg, "stack": stack, "static_shared": shared, "local": local}


@hookimpl
def kt_resources(compiled, target):
    if target.vendor != VENDOR:
        return None
    md = compiled.metadata
    usage = read_cubin_usage(compiled.asm["cubin"])
    warps = md.num_warps * getattr(md, "num_ctas", 1)
    shared = max(int(md.shared), usage.get("static_shared", 0))
    regs = usage.get("registers") or getattr(compiled, "n_regs", None) or 0
    per_sm, limiter = blocks_per_sm(regs, shared, warps, target.properties)
    occupancy = per_sm * warps / target.properties["max_warps_per_unit"]
    return Resources(registers=regs, shared_bytes=shared, spill_bytes=usage.get("local", 0),
                     threads=warps * 32, programs_per_unit=per_sm, occupancy=min(occupancy, 1.0),
                     limiter=limiter, extra={"stack_bytes": usage.get("stack", 0)})


@hookimpl
def kt_timer(device):
    if device.vendor != VENDOR:
        return None
    from kt_cli.measure import DeviceEventTimer

    l2 = device.info.get("l2_bytes") or ARCHS.get(device.target.split(":")[1], {}).get("l2_bytes", 64 * 2**20)
    return DeviceEventTimer(flush_bytes=max(2 * l2, 64 * 2**20), name="cuda-events")


@hookimpl
def kt_profile(device, command, kernel_names):
    from vendor_nvidia import ncu

    if device is None or device.vendor != VENDOR or not ncu.ncu_available():
        return None
    return ncu.profile(command, kernel_names)
