"""Waves per SIMD from the register-granule rules of CDNA (gfx90a/gfx942/gfx950).

On these chips a wave's architected VGPRs and AGPRs come from one unified 512-entry file per lane;
each block of registers is allocated in granules of 8, and AGPRs start at a 4-aligned offset.
"""

from __future__ import annotations

VGPR_GRANULE = 8


def unified_vgprs(vgprs: int, agprs: int) -> int:
    """Registers a wave takes from the unified file: VGPRs rounded up to 4, plus AGPRs, in granules of 8."""
    total = (-(-vgprs // 4) * 4 + agprs) if agprs else vgprs
    return -(-max(total, 1) // VGPR_GRANULE) * VGPR_GRANULE


def waves_per_simd(vgprs: int, agprs: int, props: dict) -> int:
    return min(props["max_waves_per_simd"], props["vgprs_per_simd_lane"] // unified_vgprs(vgprs, agprs))


def workgroups_per_cu(vgprs: int, agprs: int, lds_bytes: int, waves_per_group: int, props: dict) -> tuple[int, str]:
    """(resident workgroups per CU, the limiting resource); a workgroup's waves spread over the SIMDs."""
    by_regs = waves_per_simd(vgprs, agprs, props) * props["simds_per_unit"] // waves_per_group
    limits = {
        "registers": by_regs,
        "lds": props["lds_per_unit"] // lds_bytes if lds_bytes else 10**9,
        "waves": props["max_waves_per_simd"] * props["simds_per_unit"] // waves_per_group,
    }
    limiter = min(limits, key=limits.get)
    return limits[limiter], limiter
