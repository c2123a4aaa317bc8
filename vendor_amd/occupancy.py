"""Resident waves and workgroups on a CDNA2/3/4 CU (gfx90a, gfx942, gfx950) from a kernel's registers
and LDS. Rules, as LLVM's AMDGPU backend (AMDGPUBaseInfo) and AMD's CDNA ISA guides state them:

- A SIMD holds 512 vector registers per lane in one unified file shared by architected VGPRs and
  accumulation AGPRs; a wave may use up to 256 of each. With AGPRs, they start at the first
  4-aligned offset after the VGPRs, so a wave takes align(VGPRs, 4) + AGPRs; without, its VGPRs.
- Vector registers are allocated in granules of 8; at most 8 waves per SIMD, 4 SIMDs per CU.
- 800 scalar registers per SIMD, allocated in granules of 16.
- A workgroup's LDS is carved out of the CU's LDS (64 KiB; 160 KiB on gfx950).
- A workgroup of more than one wave takes one of the CU's 16 hardware barriers.
"""

from __future__ import annotations

VGPR_GRANULE = 8
SGPR_GRANULE = 16


def _align(value: int, granule: int) -> int:
    return -(-max(value, 1) // granule) * granule


def unified_vgprs(vgprs: int, agprs: int) -> int:
    """Vector registers one wave takes from the unified file, granule included."""
    total = _align(vgprs, 4) + agprs if agprs else vgprs
    return _align(total, VGPR_GRANULE)


def waves_per_simd_by_registers(vgprs: int, agprs: int, sgprs: int, props: dict) -> int:
    by_vgprs = props["vgprs_per_simd_lane"] // unified_vgprs(vgprs, agprs)
    by_sgprs = props["sgprs_per_simd"] // _align(sgprs, SGPR_GRANULE)
    return min(props["max_waves_per_simd"], by_vgprs, by_sgprs)


def workgroups_per_cu(vgprs: int, agprs: int, sgprs: int, lds_bytes: int, waves_per_group: int,
                      props: dict) -> tuple[int, str]:
    """(resident workgroups per CU, the limiting resource; on a tie the first of waves, registers, lds,
    barriers). A workgroup's waves spread over the SIMDs."""
    simds = props["simds_per_unit"]
    limits = {
        "waves": props["max_waves_per_simd"] * simds // waves_per_group,
        "registers": waves_per_simd_by_registers(vgprs, agprs, sgprs, props) * simds // waves_per_group,
        "lds": props["lds_per_unit"] // lds_bytes if lds_bytes else 10**9,
        "barriers": props["max_barriers_per_unit"] if waves_per_group > 1 else 10**9,
    }
    limiter = min(limits, key=limits.get)
    return limits[limiter], limiter


def waves_per_simd(groups_per_cu: int, waves_per_group: int, props: dict) -> float:
    """Resident waves per SIMD when `groups_per_cu` workgroups are resident (the occupancy AMD quotes)."""
    return groups_per_cu * waves_per_group / props["simds_per_unit"]
