"""Static-mode ranking: a roofline of the target's peak table, scaled by occupancy and wave
quantization over the target's SMs/CUs. Every number it returns is an estimate."""

from __future__ import annotations

import math

LAUNCH_OVERHEAD_S = 3e-6


def wave_efficiency(programs: int, units: int, per_unit: int) -> float:
    """Fraction of the machine's program slots that do work, averaged over all waves."""
    slots = max(1, units * max(1, per_unit))
    waves = math.ceil(programs / slots)
    return programs / (waves * slots)


def estimate_seconds(flops: float, traffic_bytes: float, dtype: str, peaks: dict, properties: dict,
                     resources, programs: int, launches: int = 1) -> dict:
    """Estimated time of one call and the terms behind it.

    Memory: DRAM bandwidth reached only with enough resident warps/waves to hide latency
    (`saturating_occupancy` of the target), and only on the units that have work.
    Compute: the dtype's peak, scaled by the same wave efficiency and by occupancy.
    """
    units = int(properties.get("units", 1))
    waves = wave_efficiency(programs, units, resources.programs_per_unit)
    busy_units = min(1.0, programs / max(1, units))
    latency_hiding = min(1.0, resources.occupancy / properties.get("saturating_occupancy", 0.25))
    bandwidth = peaks.get("dram_bytes_per_s", 1e12) * latency_hiding * busy_units
    spill_traffic = 2.0 * resources.spill_bytes * resources.threads * programs
    memory_s = (traffic_bytes + spill_traffic) / max(bandwidth, 1.0)
    flop_rate = peaks.get(dtype, peaks.get("float32", 1e13)) * waves * max(latency_hiding, 0.5)
    compute_s = flops / max(flop_rate, 1.0)
    total = max(memory_s, compute_s) + launches * LAUNCH_OVERHEAD_S
    return {
        "seconds": total,
        "memory_s": memory_s,
        "compute_s": compute_s,
        "wave_efficiency": waves,
        "latency_hiding": latency_hiding,
        "bound": "memory" if memory_s >= compute_s else "compute",
    }
