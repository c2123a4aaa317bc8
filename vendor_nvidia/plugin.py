"""The NVIDIA vendor: CUDA targets, devices, Triton's CUDA backend, cubin resources, Nsight Compute."""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import shutil
import subprocess
import tempfile

from kt_cli import binary_features
from kt_cli.hookspecs import hookimpl
from kt_cli.peaks import peaks_for_name, peaks_of
from kt_cli.types import Device, Resources, TargetSpec
from kt_cli.vendor import LoadPhases, Vendor, innermost_mma_loop
from vendor_nvidia.runtime import TORCH_DEVICE_CONTROL
from vendor_nvidia.occupancy import blocks_per_sm
from vendor_nvidia.peaks import ARCHS, DEVICES, MODEL

VENDOR = "nvidia"
# Targets whose cost model was held against measured tuning runs (benchmarks/results/rank_dataset.jsonl:
# H100 and H200); measured tuning prunes with it there only.
VALIDATED_ARCHS = ("sm_90",)
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_RES = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def target_spec(arch: str) -> TargetSpec:
    props = {**ARCHS[arch], **MODEL[arch]}
    part = props.pop("part")
    peaks = peaks_of(DEVICES[part])
    props.update(warp_size=32, max_warps_per_unit=props["max_threads_per_unit"] // 32,
                 saturating_occupancy=0.25)
    return TargetSpec(VENDOR, arch, props, peaks, LAUNCH_OPTIONS)


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and getattr(torch.version, "hip", None) is None


def _driver_version() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def triton_tool(name: str) -> str | None:
    """A CUDA binary tool (cuobjdump...) shipped inside Triton's wheel, else on PATH."""
    import triton

    bundled = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
    return bundled if os.access(bundled, os.X_OK) else shutil.which(name)


# SASS opcode (without modifiers) -> instruction class of Vendor.instruction_mix
SASS_CLASSES = {"HMMA": "mma", "HGMMA": "mma", "IMMA": "mma", "QGMMA": "mma", "IGMMA": "mma", "UTCHMMA": "mma",
                "UTCQMMA": "mma", "LDG": "global_load", "LDGSTS": "async_copy", "UTMALDG": "tma",
                "UBLKCP": "tma", "UTMASTG": "tma", "LDS": "shared_load", "LDSM": "shared_load",
                "STS": "shared_store", "STG": "global_store", "BAR": "barrier", "SYNCS": "barrier",
                "MUFU": "special"}
# MMAs issued by a warpgroup (sm_90 wgmma) or a single thread for the CTA (sm_100 tcgen05), not per warp
WARPGROUP_MMA = {"HGMMA", "QGMMA", "IGMMA", "UTCHMMA", "UTCQMMA"}
GLOBAL_LOADS = {"LDG", "LDGSTS"}
_LOAD_WIDTH = re.compile(r"\.(128|64|U16|S16|U8|S8)\b")
_WIDTH_BYTES = {"128": 16, "64": 8, "U16": 2, "S16": 2, "U8": 1, "S8": 1}
_SASS_OP = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?P<guard>@!?U?P\w+\s+)?([A-Z][A-Z0-9_]+)((?:\.[A-Z0-9_]+)*)([^;]*)")
_MMA_SHAPE = re.compile(r"\.(\d+)x(\d+)x(\d+)")  # a warpgroup MMA's m x n x k: HGMMA.64x256x16.F32.BF16
_BRANCH_TARGET = re.compile(r"0x([0-9a-f]+)")
# the code sass_mix's result depends on (binary_features caches what it read under their fingerprint)
SASS_READER = (__file__, inspect.getfile(LoadPhases), os.path.join(os.path.dirname(__file__), "sass_fields.py"),
               os.path.join(os.path.dirname(__file__), "sass_sm90.py"))


def _cuobjdump(cubin: bytes, flag: str) -> str:
    tool = triton_tool("cuobjdump")
    if tool is None:
        return ""
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        path = f.name
    try:
        return subprocess.run([tool, flag, path], capture_output=True, text=True, timeout=60).stdout
    finally:
        os.unlink(path)


def wgmma_shared_bytes(op: str, shape, operands: str) -> int:
    """The bytes of shared memory one sm_90 warpgroup MMA (HGMMA/QGMMA/IGMMA m x n x k) reads its operands
    from: B (k x n) always, A (m x k) unless it comes from registers (`HGMMA.64x128x16.F32.BF16 R24, R120,
    gdesc[UR8], R24`: A in R120..; `R24, gdesc[UR8], R24`: both through the one descriptor pair). Every
    dense wgmma's K slice is 32 bytes deep (k16 of a 16-bit type, k32 of an 8-bit one, k8 of tf32: PTX ISA,
    wgmma.mma_async shapes), so A is 32 m bytes and B 32 n. 0 for Blackwell's tcgen05 MMAs (UTC*), whose
    operands and accumulator the model does not follow."""
    if op.startswith("UTC"):
        return 0
    m, n = int(shape.group(1)), int(shape.group(2))
    sources = [s.strip() for s in operands.split(",")]
    a_in_registers = len(sources) > 1 and re.match(r"R\d", sources[1]) is not None
    return 32 * n + (0 if a_in_registers else 32 * m)


def barrier_warps(modifiers: str, operands: str) -> int | None:
    """The warps a BAR instruction waits for: with a thread count (`BAR.SYNC.DEFER_BLOCKING 0x0, 0x80`: 128
    threads, a Gluon partition of one warpgroup syncing itself) count / 32; without one (`BAR.SYNC 0x0`, or a
    count in a register) every warp of the CTA: 0. None for an arrival (BAR.ARV), which waits for nothing."""
    if ".ARV" in modifiers:
        return None
    count = [o.strip() for o in operands.split(",")][1:2]
    return int(count[0], 16) // 32 if count and count[0].startswith("0x") else 0


def sass_mix(cubin: bytes) -> dict:
    """Instruction classes counted in the SASS (static counts), the MMAs issued per warpgroup
    (`mma_warpgroup`), and `global_load_bytes`: the bytes per thread the static global loads ask for
    (LDG/LDGSTS width modifiers; 4 bytes without one), and the most of them between two reductions across
    warps (kt_cli.vendor.LoadPhases: a BAR after SHFLs); and the innermost loop holding warpgroup MMAs
    (kt_cli.vendor.innermost_mma_loop: one pass's instructions, the FLOPs of its MMAs, 2 m n k each from the
    opcode's shape, and the warps its barriers wait for). The instructions are decoded from the cubin's bytes
    where its architecture's table knows every one of them (vendor_nvidia.sass_fields), else read from what
    `cuobjdump -sass` prints."""
    return mix_of(sass_instructions(cubin))


def sass_instructions(cubin: bytes) -> list:
    """A cubin's instructions (sass_fields.Instruction) in program order: decoded from its bytes where its
    architecture's table knows every one of them (vendor_nvidia.sass_fields), else read from what `cuobjdump
    -sass` prints."""
    from vendor_nvidia import sass_fields

    found = sass_fields.instructions(cubin)
    return found if found is not None else printed_instructions(_cuobjdump(cubin, "-sass"))


def printed_instructions(sass: str) -> list:
    """The instructions `cuobjdump -sass` printed, as sass_fields.Instruction."""
    from vendor_nvidia.sass_fields import Instruction

    out = []
    for m in _SASS_OP.finditer(sass):
        address, op, modifiers, operands = int(m.group(1), 16), m.group(3), m.group(4), m.group(5)
        load_bytes = flops = shared = 0
        if op in WARPGROUP_MMA:
            shape = _MMA_SHAPE.search(modifiers + operands)  # (the shape ends the modifiers: ".64" then "x256x16")
            flops = 2 * int(shape.group(1)) * int(shape.group(2)) * int(shape.group(3)) if shape else 0
            shared = wgmma_shared_bytes(op, shape, operands) if shape else 0
        elif op in GLOBAL_LOADS:
            width = _LOAD_WIDTH.search(modifiers)
            load_bytes = _WIDTH_BYTES[width.group(1)] if width else 4
        # a loop's back edge is conditional; an unconditional branch back is a cold path's return (an mbarrier
        # wait's retry, placed after the kernel's exit, jumping back into the code it left)
        target = _BRANCH_TARGET.search(operands) if op == "BRA" and m.group("guard") else None
        out.append(Instruction(address, op, load_bytes, flops, shared,
                               barrier_warps(modifiers, operands) if op == "BAR" else None,
                               int(target.group(1), 16) if target else None))
    return out


def mix_of(instructions: list) -> dict:
    """sass_mix's figures from a function's instructions (sass_fields.Instruction) in program order."""
    mix = {"total": 0}
    phases = LoadPhases(mix)
    code = []
    for inst in instructions:
        mix["total"] += 1
        kind = SASS_CLASSES.get(inst.op)
        if kind:
            mix[kind] = mix.get(kind, 0) + 1
        if inst.op in WARPGROUP_MMA:
            mix["mma_warpgroup"] = mix.get("mma_warpgroup", 0) + 1
        if inst.op == "SHFL":
            phases.cross_lane()
        elif inst.op == "BAR":
            phases.barrier()
        elif inst.op in GLOBAL_LOADS:
            phases.load(inst.load_bytes)
        code.append((inst.address, inst.flops, inst.target, inst.shared, inst.barrier_warps))
    phases.close()
    mix.update(innermost_mma_loop(code))
    if "loop_mma_flops" in mix:
        mix["mma_group_warps"] = 4  # a warpgroup issues each HGMMA/QGMMA
    return mix if mix["total"] else {}


def read_cubin_usage(cubin: bytes) -> dict:
    """Registers, stack, static shared and local bytes per thread from `cuobjdump -res-usage`. ptxas
    puts spilled registers in the stack frame (its `-v` prints "N bytes stack frame, M bytes spill
    stores"); Triton's kernels make no calls and hold no local arrays, so stack + local is what spills,
    the local memory per thread that CUDA reports and Triton's `n_spills` counts."""
    m = _RES.search(_cuobjdump(cubin, "-res-usage"))
    if not m:
        return {}
    reg, stack, shared, local = (int(g) for g in m.groups())
    return {"registers": reg, "stack": stack, "static_shared": shared, "local": local}


class NvidiaVendor(Vendor):
    name = VENDOR

    def targets(self) -> list[TargetSpec]:
        return [target_spec(arch) for arch in ARCHS]

    def compile(self, launch, target):
        from kt_cli.evaluate.cross_compile import cross_compile

        return cross_compile(launch, "cuda", int(target.arch.split("_")[1]), 32)

    def resources(self, compiled, target) -> Resources:
        md = compiled.metadata
        usage = read_cubin_usage(compiled.asm["cubin"])
        warps = md.num_warps * getattr(md, "num_ctas", 1)
        shared = max(int(md.shared), usage.get("static_shared", 0))
        regs = usage.get("registers") or getattr(compiled, "n_regs", None) or 0
        per_sm, limiter = blocks_per_sm(regs, shared, warps, target.properties)
        occupancy = per_sm * warps / target.properties["max_warps_per_unit"]
        stack, local = usage.get("stack", 0), usage.get("local", 0)
        return Resources(registers=regs, shared_bytes=shared, spill_bytes=stack + local,
                         threads=warps * 32, programs_per_unit=per_sm, occupancy=min(occupancy, 1.0),
                         limiter=limiter, extra={"stack_bytes": stack, "local_bytes": local})

    def instruction_mix(self, compiled, target) -> dict:
        # the disassembler's start-up (~0.3 s of CPU) costs more than loading a cached binary
        return binary_features.cached("sass_mix", compiled.asm["cubin"], sass_mix, SASS_READER)

    def model_prunes(self, target) -> bool:
        return target.arch in VALIDATED_ARCHS

    def is_compile_error(self, exc: BaseException) -> bool:
        return "PTXAS" in str(exc).upper()  # ptxas refusing Triton's PTX surfaces as a RuntimeError

    def detect_devices(self) -> list[Device]:
        if not _cuda_available():
            return []
        import torch

        found = []
        for index in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(index)
            found.append(Device(VENDOR, index, p.name, f"{VENDOR}:sm_{p.major}{p.minor}", {
                "sm_count": p.multi_processor_count,
                "l2_bytes": getattr(p, "L2_cache_size", 0),
                "memory_bytes": p.total_memory,
                "cuda": torch.version.cuda,
                "driver": _driver_version(),
            }))
        return found

    def device_peaks(self, device: Device) -> dict:
        return peaks_for_name(DEVICES, device.name) or target_spec(device.target.split(":")[1]).peaks

    def pin_env(self, device: Device) -> dict:
        return {"CUDA_VISIBLE_DEVICES": str(device.index)}

    def pinned_view(self, device: Device) -> Device:
        return dataclasses.replace(device, index=0)  # the only device CUDA_VISIBLE_DEVICES leaves is the first

    def watched_names(self) -> tuple:
        return TORCH_DEVICE_CONTROL

    def runtime(self):
        from vendor_nvidia.runtime import TorchCudaRuntime

        return TorchCudaRuntime()

    def timer(self, device: Device):
        from kt_cli.evaluate.timing import EventTimer

        l2 = device.info.get("l2_bytes") or ARCHS.get(device.target.split(":")[1], {}).get("l2_bytes", 64 * 2**20)
        return EventTimer(self.runtime(), flush_bytes=max(2 * l2, 64 * 2**20), name="cuda-events")

    def device_state(self, device: Device) -> dict:
        from vendor_nvidia.nvml import device_state

        return device_state(self.runtime().current_index())

    def profile(self, device: Device, command: list, kernel_names: list) -> dict | None:
        from vendor_nvidia import ncu

        return ncu.profile(command, kernel_names) if ncu.ncu_available() else None


@hookimpl
def kt_register_vendors(register):
    register(NvidiaVendor())
