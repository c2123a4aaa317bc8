"""The AMD plugin: every hook kt asks of a vendor, for ROCm/HIP targets."""

from __future__ import annotations

import re

from kt_cli.hookspecs import hookimpl
from kt_cli.types import Device, Resources, TargetSpec
from vendor_amd.occupancy import workgroups_per_cu
from vendor_amd.peaks import ARCHS, DEVICES, peaks_for_name

VENDOR = "amd"
LAUNCH_OPTIONS = ("num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim", "kpack")


def target_spec(arch: str) -> TargetSpec:
    props = dict(ARCHS[arch])
    part = props.pop("part")
    peaks = {k: v for k, v in DEVICES[part].items() if k != "arch"}
    props.update(warp_size=64, max_warps_per_unit=props["max_waves_per_simd"] * props["simds_per_unit"],
                 saturating_occupancy=0.25)
    return TargetSpec(VENDOR, arch, props, peaks, LAUNCH_OPTIONS)


@hookimpl
def kt_targets():
    return [target_spec(arch) for arch in ARCHS]


@hookimpl
def kt_detect_devices():
    try:
        import torch
    except ImportError:
        return []
    if getattr(torch.version, "hip", None) is None or not torch.cuda.is_available():
        return []
    found = []
    for index in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(index)
        arch = getattr(p, "gcnArchName", "unknown").split(":")[0]
        found.append(Device(VENDOR, index, p.name, f"{VENDOR}:{arch}", {
            "cu_count": p.multi_processor_count,
            "l2_bytes": getattr(p, "L2_cache_size", 0),
            "memory_bytes": p.total_memory,
            "rocm": torch.version.hip,
        }))
    return found


@hookimpl
def kt_device_peaks(device):
    if device.vendor != VENDOR:
        return None
    arch = device.target.split(":")[1]
    return peaks_for_name(device.name) or (target_spec(arch).peaks if arch in ARCHS else None)


@hookimpl
def kt_device_env(device):
    if device.vendor != VENDOR:
        return None
    return {"HIP_VISIBLE_DEVICES": str(device.index)}


@hookimpl
def kt_compile(fn, signature, constexprs, options, target):
    if target.vendor != VENDOR:
        return None
    from kt_cli.triton_compile import cross_compile

    return cross_compile(fn, signature, constexprs, options, "hip", target.arch, 64)


def read_amdgcn_usage(asm: str) -> dict:
    """The register, LDS and scratch figures LLVM writes as comments into the AMDGCN assembly."""
    fields = {"vgprs": r"; NumVgprs:\s*(\d+)", "agprs": r"; NumAgprs:\s*(\d+)",
              "sgprs": r"; TotalNumSgprs:\s*(\d+)", "scratch": r"; ScratchSize:\s*(\d+)",
              "lds": r"; LDSByteSize:\s*(\d+)", "occupancy": r"; Occupancy:\s*(\d+)"}
    out = {}
    for key, pattern in fields.items():
        m = re.search(pattern, asm)
        out[key] = int(m.group(1)) if m else 0
    return out


@hookimpl
def kt_resources(compiled, target):
    if target.vendor != VENDOR:
        return None
    md = compiled.metadata
    usage = read_amdgcn_usage(compiled.asm["amdgcn"])
    lds = max(int(md.shared), usage["lds"])
    waves = md.num_warps
    per_cu, limiter = workgroups_per_cu(usage["vgprs"], usage["agprs"], lds, waves, target.properties)
    occupancy = per_cu * waves / target.properties["max_warps_per_unit"]
    return Resources(registers=usage["vgprs"], shared_bytes=lds, spill_bytes=usage["scratch"],
                     threads=waves * 64, programs_per_unit=per_cu, occupancy=min(occupancy, 1.0), limiter=limiter,
                     extra={"agprs": usage["agprs"], "sgprs": usage["sgprs"],
                            "compiler_waves_per_simd": usage["occupancy"]})


@hookimpl
def kt_timer(device):
    if device.vendor != VENDOR:
        return None
    from kt_cli.measure import DeviceEventTimer

    props = ARCHS.get(device.target.split(":")[1], {})
    cache = (device.info.get("l2_bytes") or props.get("l2_bytes", 8 * 2**20)) + props.get("infinity_cache_bytes", 0)
    return DeviceEventTimer(flush_bytes=max(2 * cache, 64 * 2**20), name="hip-events")
