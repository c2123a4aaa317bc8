"""AMD Instinct peak tables: dense matrix FLOP/s per dtype, HBM bytes/s. Figures from AMD's
datasheets (not measured by kt: no AMD GPU was available)."""

TB = 1e12
DEVICES = {
    "MI210": {"arch": "gfx90a", "bfloat16": 181 * TB, "float16": 181 * TB, "float32": 45.3 * TB,
              "dram_bytes_per_s": 1.6 * TB},
    "MI250X": {"arch": "gfx90a", "bfloat16": 191.5 * TB, "float16": 191.5 * TB, "float32": 47.9 * TB,
               "dram_bytes_per_s": 1.6 * TB},  # one GCD, as ROCm shows it
    "MI300X": {"arch": "gfx942", "bfloat16": 1307.4 * TB, "float16": 1307.4 * TB, "float8_e4m3": 2614.9 * TB,
               "tfloat32": 653.7 * TB, "float32": 163.4 * TB, "dram_bytes_per_s": 5.3 * TB},
    "MI325X": {"arch": "gfx942", "bfloat16": 1307.4 * TB, "float16": 1307.4 * TB, "float8_e4m3": 2614.9 * TB,
               "tfloat32": 653.7 * TB, "float32": 163.4 * TB, "dram_bytes_per_s": 6.0 * TB},
    "MI350X": {"arch": "gfx950", "bfloat16": 2300 * TB, "float16": 2300 * TB, "float8_e4m3": 4600 * TB,
               "float32": 144.2 * TB, "dram_bytes_per_s": 8.0 * TB},
    "MI355X": {"arch": "gfx950", "bfloat16": 2516.6 * TB, "float16": 2516.6 * TB, "float8_e4m3": 5033 * TB,
               "float32": 157.3 * TB, "dram_bytes_per_s": 8.0 * TB},
}

# Per-arch properties (CDNA2/3/4 ISA guides) and the arch's reference part for static mode.
ARCHS = {
    "gfx90a": {"part": "MI250X", "units": 110, "smem_bytes": 65536, "lds_per_unit": 65536,
               "vgprs_per_simd_lane": 512, "max_waves_per_simd": 8, "simds_per_unit": 4,
               "l2_bytes": 8 * 2**20, "infinity_cache_bytes": 0},
    "gfx942": {"part": "MI300X", "units": 304, "smem_bytes": 65536, "lds_per_unit": 65536,
               "vgprs_per_simd_lane": 512, "max_waves_per_simd": 8, "simds_per_unit": 4,
               "l2_bytes": 4 * 2**20, "infinity_cache_bytes": 256 * 2**20},
    "gfx950": {"part": "MI355X", "units": 256, "smem_bytes": 163840, "lds_per_unit": 163840,
               "vgprs_per_simd_lane": 512, "max_waves_per_simd": 8, "simds_per_unit": 4,
               "l2_bytes": 4 * 2**20, "infinity_cache_bytes": 256 * 2**20},
}


def peaks_for_name(device_name: str) -> dict | None:
    for key in sorted(DEVICES, key=len, reverse=True):
        if key.lower() in device_name.lower():
            return {k: v for k, v in DEVICES[key].items() if k != "arch"}
    return None
