"""The AMD vendor: ROCm/HIP targets (CDNA: gfx90a, gfx942, gfx950), devices, Triton's HIP backend,
resources from the AMDGCN assembly, and `kt rocprof-time`."""

from __future__ import annotations

import dataclasses
import re

from kt_cli.hookspecs import hookimpl
from kt_cli.peaks import peaks_for_name, peaks_of
from kt_cli.types import Device, Resources, TargetSpec
from kt_cli.vendor import LoadPhases, Vendor, innermost_mma_loop
from vendor_nvidia.runtime import TORCH_DEVICE_CONTROL  # ROCm torch serves HIP through torch.cuda
from vendor_amd import knobs
from vendor_amd.knobs import LAUNCH_OPTIONS
from vendor_amd.occupancy import workgroups_per_cu, waves_per_simd
from vendor_amd.peaks import ARCHS, DEVICES

VENDOR = "amd"
# Enough resident waves to hide HBM latency; as for NVIDIA, a quarter of the CU's slots
SATURATING_OCCUPANCY = 0.25


def target_spec(arch: str) -> TargetSpec:
    props = dict(ARCHS[arch])
    part = props.pop("part")
    peaks = peaks_of(DEVICES[part])
    props.update(warp_size=props["wavefront"], max_warps_per_unit=props["max_waves_per_simd"] * props["simds_per_unit"],
                 saturating_occupancy=SATURATING_OCCUPANCY)
    return TargetSpec(VENDOR, arch, props, peaks, LAUNCH_OPTIONS)


def _rocm_torch():
    """torch when it is a ROCm build with a GPU visible, else None."""
    try:
        import torch
    except ImportError:
        return None
    if getattr(torch.version, "hip", None) is None or not torch.cuda.is_available():
        return None
    return torch


def _detect_devices() -> list[Device]:
    torch = _rocm_torch()
    if torch is None:
        return []
    found = []
    for index in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(index)
        # gcnArchName carries feature flags: "gfx942:sramecc+:xnack-"
        arch = getattr(p, "gcnArchName", "unknown").split(":")[0]
        found.append(Device(VENDOR, index, p.name, f"{VENDOR}:{arch}", {
            "arch": arch,
            "cu_count": p.multi_processor_count,
            "memory_bytes": p.total_memory,
            "l2_bytes": getattr(p, "L2_cache_size", 0),
            "rocm": torch.version.hip,
        }))
    return found


_USAGE = {"vgprs": r"; NumVgprs:\s*(\d+)", "agprs": r"; NumAgprs:\s*(\d+)", "sgprs": r"; TotalNumSgprs:\s*(\d+)",
          "scratch": r"; ScratchSize:\s*(\d+)", "lds": r"; LDSByteSize:\s*(\d+)", "occupancy": r"; Occupancy:\s*(\d+)"}


def read_amdgcn_usage(asm: str) -> dict:
    """Registers, LDS, scratch (bytes per lane) and LLVM's own occupancy, from the comments LLVM writes
    after each kernel in the AMDGCN assembly. A field LLVM did not write reads 0."""
    out = {}
    for key, pattern in _USAGE.items():
        m = re.search(pattern, asm)
        out[key] = int(m.group(1)) if m else 0
    return out


# AMDGCN mnemonic prefix -> instruction class of Vendor.instruction_mix
GCN_CLASSES = (("v_mfma", "mma"), ("v_smfmac", "mma"), ("buffer_load", "global_load"), ("global_load", "global_load"),
               ("ds_read", "shared_load"), ("ds_load", "shared_load"), ("ds_write", "shared_store"),
               ("ds_store", "shared_store"), ("buffer_store", "global_store"), ("global_store", "global_store"),
               ("s_barrier", "barrier"), ("v_exp", "special"), ("v_log", "special"), ("v_rcp", "special"),
               ("v_rsq", "special"), ("v_sqrt", "special"))
# Cross-lane exchanges a reduction across the lanes of a wave is made of (besides DPP-modified ALU ops)
_GCN_CROSS_LANE = ("ds_swizzle", "ds_bpermute", "ds_permute", "v_permlane", "v_readlane")
_GCN_LINE = re.compile(r"^(?:([.\w]+):|\s+([sv]_\w+|buffer_\w+|global_\w+|ds_\w+|flat_\w+)[ \t]*([^\n;]*))", re.M)
_MFMA_SHAPE = re.compile(r"_(\d+)x(\d+)x(\d+)")  # a wave's m x n x k: v_mfma_f32_32x32x8_bf16
SIMDS_PER_UNIT = 4  # a CU's four SIMDs, each with its matrix core, kept busy by one wave each


_GCN_LOAD_WIDTH = (("dwordx4", 16), ("b128", 16), ("dwordx3", 12), ("b96", 12), ("dwordx2", 8), ("b64", 8),
                   ("dword", 4), ("b32", 4), ("short", 2), ("b16", 2), ("byte", 1), ("b8", 1))


def gcn_mix(asm: str) -> dict:
    """Instruction classes counted in the AMDGCN assembly Triton produced (static counts), and
    `global_load_bytes`: the bytes per lane its static global/buffer loads ask for, and the most of
    them between two reductions across waves (kt_cli.vendor.LoadPhases: an s_barrier after
    cross-lane DPP, swizzle or permute instructions); and the innermost loop holding MFMAs
    (kt_cli.vendor.innermost_mma_loop: one pass's instructions, its MFMAs' FLOPs, 2 m n k each from
    the mnemonic's shape, and its s_barriers; a label's position is its next instruction's)."""
    mix = {"total": 0}
    phases = LoadPhases(mix)
    labels, code = {}, []  # label -> position; (position, MFMA FLOPs, branch label, barrier)
    for m in _GCN_LINE.finditer(asm):
        if m.group(1):
            labels[m.group(1)] = mix["total"]
            continue
        op, operands = m.group(2), m.group(3)
        mix["total"] += 1
        kind = next((k for prefix, k in GCN_CLASSES if op.startswith(prefix)), None)
        if kind:
            mix[kind] = mix.get(kind, 0) + 1
        if op.endswith("_dpp") or op.startswith(_GCN_CROSS_LANE):
            phases.cross_lane()
        elif kind == "barrier":
            phases.barrier()
        elif kind == "global_load":
            phases.load(next((n for suffix, n in _GCN_LOAD_WIDTH if op.endswith(suffix)), 4))
        shape = _MFMA_SHAPE.search(op) if kind == "mma" else None
        flops = 2 * int(shape.group(1)) * int(shape.group(2)) * int(shape.group(3)) if shape else 0
        branch = operands.split()[0] if op.startswith(("s_cbranch", "s_branch")) and operands.split() else None
        code.append((mix["total"] - 1, flops, branch, 0 if kind == "barrier" else None))  # s_barrier: the workgroup
    phases.close()
    code = [(position, flops, labels.get(branch) if branch else None, 0, barrier)
            for position, flops, branch, barrier in code]
    mix.update(innermost_mma_loop(code))
    if "loop_mma_flops" in mix:  # a group is a wave on each SIMD: a lone wave a SIMD idles its matrix core
        mix["mma_group_warps"] = SIMDS_PER_UNIT  # between passes; the group's pass does the FLOPs of all four
        mix["loop_mma_flops"] *= SIMDS_PER_UNIT
    return mix if mix["total"] else {}


def flush_bytes(device) -> int:
    """Twice the L2 plus Infinity Cache: a flush write evicts everything the last call left cached.
    torch reports one XCD's L2 on MI300-class parts, so the table's whole-chip figure wins when larger."""
    props = ARCHS.get(device.target.split(":")[1], {})
    l2 = max(device.info.get("l2_bytes") or 0, props.get("l2_bytes", 8 * 2**20))
    infinity_cache = props.get("infinity_cache_bytes", 256 * 2**20)  # an arch kt lacks: assume MI300-class
    return 2 * (l2 + infinity_cache)


class AmdVendor(Vendor):
    name = VENDOR

    def targets(self) -> list[TargetSpec]:
        return [target_spec(arch) for arch in ARCHS]

    def why_unrunnable(self, params, target):
        return knobs.why_unrunnable(params, target.arch, target.properties)

    def compile(self, launch, target):
        from kt_cli.evaluate.cross_compile import cross_compile

        return cross_compile(launch, "hip", target.arch, target.properties["wavefront"])

    def resources(self, compiled, target) -> Resources:
        props = target.properties
        md = compiled.metadata
        usage = read_amdgcn_usage(compiled.asm["amdgcn"])
        lds = max(int(md.shared), usage["lds"])  # Triton's LDS is dynamic: LLVM's figure is static LDS only
        waves = md.num_warps
        per_cu, limiter = workgroups_per_cu(usage["vgprs"], usage["agprs"], usage["sgprs"], lds, waves, props)
        per_simd = waves_per_simd(per_cu, waves, props)
        return Resources(registers=usage["vgprs"], shared_bytes=lds, spill_bytes=usage["scratch"],
                         threads=waves * props["wavefront"], programs_per_unit=per_cu,
                         occupancy=min(per_simd / props["max_waves_per_simd"], 1.0), limiter=limiter,
                         extra={"agprs": usage["agprs"], "sgprs": usage["sgprs"], "waves_per_simd": per_simd,
                                "llvm_waves_per_simd": usage["occupancy"]})

    def instruction_mix(self, compiled, target) -> dict:
        return gcn_mix(compiled.asm["amdgcn"])

    def detect_devices(self) -> list[Device]:
        return _detect_devices()

    def device_peaks(self, device: Device) -> dict:
        arch = device.target.split(":")[1]
        return peaks_for_name(DEVICES, device.name) or (target_spec(arch).peaks if arch in ARCHS else {})

    def pin_env(self, device: Device) -> dict:
        return {"HIP_VISIBLE_DEVICES": str(device.index)}

    def pinned_view(self, device: Device) -> Device:
        return dataclasses.replace(device, index=0)  # the only device HIP_VISIBLE_DEVICES leaves is the first

    def watched_names(self) -> tuple:
        return TORCH_DEVICE_CONTROL

    def runtime(self):
        from vendor_nvidia.runtime import TorchCudaRuntime  # ROCm torch serves HIP through torch.cuda

        return TorchCudaRuntime()

    def timer(self, device: Device):
        from kt_cli.evaluate.timing import EventTimer

        return EventTimer(self.runtime(), flush_bytes=flush_bytes(device), name="hip-events")


@hookimpl
def kt_register_vendors(register):
    register(AmdVendor())


@hookimpl
def kt_register_commands(cli):
    from vendor_amd.commands import rocprof_time

    cli.add_command(rocprof_time)
