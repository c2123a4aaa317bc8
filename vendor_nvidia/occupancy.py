"""Resident blocks per SM from registers, shared memory, threads and the block limit."""

from __future__ import annotations

REG_ALLOC_UNIT = 256  # registers are allocated per warp in units of 256
SMEM_RESERVED_PER_BLOCK = 1024  # the driver reserves 1 KiB of shared memory per block (sm_80+)


def blocks_per_sm(regs_per_thread: int, smem_bytes: int, warps: int, props: dict) -> tuple[int, str]:
    """(resident blocks per SM, the limiting resource)."""
    regs_per_warp = -(-max(regs_per_thread, 1) * 32 // REG_ALLOC_UNIT) * REG_ALLOC_UNIT
    warps_by_regs = props["regs_per_unit"] // regs_per_warp
    limits = {
        "registers": warps_by_regs // warps,
        "threads": props["max_threads_per_unit"] // (warps * 32),
        "blocks": props["max_programs_per_unit"],
        "shared memory": props["smem_per_unit"] // (smem_bytes + SMEM_RESERVED_PER_BLOCK) if smem_bytes else 10**9,
    }
    limiter = min(limits, key=limits.get)
    return limits[limiter], limiter
