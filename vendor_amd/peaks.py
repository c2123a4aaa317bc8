"""AMD Instinct peak tables and per-arch properties.

Every figure is a datasheet figure, not a kt measurement (no AMD GPU was available to kt's authors):
FLOP/s are AMD's dense (no sparsity) matrix-core peaks per dtype, bandwidth is peak HBM bytes/s.
Sources: AMD Instinct MI210, MI250X, MI300X, MI325X, MI350X and MI355X datasheets; CU counts,
LDS, L2 and Infinity Cache sizes from ROCm's "AMD GPU specifications" table. A MI250X is listed
per GCD, as ROCm shows it (one device per GCD): half the board's figures.
"""

TB = 1e12
MiB = 2**20
DEVICES = {
    "MI210": {"arch": "gfx90a", "bfloat16": 181.0 * TB, "float16": 181.0 * TB, "float32": 45.3 * TB,
              "dram_bytes_per_s": 1.6384 * TB},
    "MI250X": {"arch": "gfx90a", "bfloat16": 191.5 * TB, "float16": 191.5 * TB, "float32": 47.9 * TB,
               "dram_bytes_per_s": 1.6384 * TB},
    "MI300X": {"arch": "gfx942", "bfloat16": 1307.4 * TB, "float16": 1307.4 * TB, "float8_e4m3": 2614.9 * TB,
               "tfloat32": 653.7 * TB, "float32": 163.4 * TB, "dram_bytes_per_s": 5.3 * TB},
    "MI325X": {"arch": "gfx942", "bfloat16": 1307.4 * TB, "float16": 1307.4 * TB, "float8_e4m3": 2614.9 * TB,
               "tfloat32": 653.7 * TB, "float32": 163.4 * TB, "dram_bytes_per_s": 6.0 * TB},
    "MI350X": {"arch": "gfx950", "bfloat16": 2306.9 * TB, "float16": 2306.9 * TB, "float8_e4m3": 4613.7 * TB,
               "float32": 144.2 * TB, "dram_bytes_per_s": 8.0 * TB},
    "MI355X": {"arch": "gfx950", "bfloat16": 2516.6 * TB, "float16": 2516.6 * TB, "float8_e4m3": 5033.2 * TB,
               "float32": 157.3 * TB, "dram_bytes_per_s": 8.0 * TB},
}

# Per-arch properties and the reference part a target without a device is estimated against.
# Register-file figures are per SIMD lane (CDNA2/3/4 ISA guides). `fp8_e4m3` is 1 where Triton's AMD
# backend lowers an OCP fp8 e4m3 (torch.float8_e4m3fn) dot to fp8 matrix instructions: gfx950 only.
# gfx942's matrix cores take the FNUZ fp8 variant, so Triton upcasts OCP e4m3 to fp16 there (runs, at
# fp16 rate); gfx90a has no fp8 matrix instructions. Its float8_e4m3 peak is the datasheet's FNUZ figure.
# `tma` (NVIDIA's Tensor Memory Accelerator) and `wgmma` (Hopper's warpgroup MMA) are 0: kernels with a
# TMA or warpgroup-MMA variant use their plain ones here. `mfma_gluon` is 1 where kt's Gluon kernels
# written for AMD (MFMA layouts, buffer loads, padded LDS) compile: CDNA3 and CDNA4 (gfx942, gfx950).
# The cost model's constants (kt_cli/evaluate/estimate.py). Unvalidated on AMD (no AMD GPU here):
# clocks are the datasheets' peak engine clocks; a CU's 4 SIMDs each issue for one wave a cycle
# (`schedulers_per_unit`); MFMA is the only matrix path, issued per wave (`mma_fraction_warp` 1);
# latencies are the generic defaults until `kt devices --calibrate` measures them on a ROCm GPU.
# MI300-class L2 is per XCD (4 MiB each); what re-reads hit is the 256 MiB Infinity Cache, so the
# model's `l2_bytes` stays the L2 sum and re-reads past it are counted as DRAM traffic (conservative).
_CDNA_MODEL = {"schedulers_per_unit": 4, "mma_fraction_warp": 1.0, "dram_latency_s": 800e-9,
               "l2_latency_s": 300e-9, "dram_attainable": 0.85, "math_attainable": 0.7}
_CDNA = {**_CDNA_MODEL, "vgprs_per_simd_lane": 512, "max_waves_per_simd": 8, "simds_per_unit": 4, "sgprs_per_simd": 800,
         "max_barriers_per_unit": 16, "wavefront": 64}
ARCHS = {
    "gfx90a": {**_CDNA, "part": "MI250X", "clock_hz": 1.7e9,
               "units": 110, "smem_bytes": 64 * 1024, "lds_per_unit": 64 * 1024,
               "l2_bytes": 8 * MiB, "infinity_cache_bytes": 0, "fp8_e4m3": 0, "tma": 0, "wgmma": 0,
               "mfma_gluon": 0},
    "gfx942": {**_CDNA, "part": "MI300X", "clock_hz": 2.1e9,
               "units": 304, "smem_bytes": 64 * 1024, "lds_per_unit": 64 * 1024,
               "l2_bytes": 32 * MiB, "infinity_cache_bytes": 256 * MiB, "fp8_e4m3": 0, "tma": 0, "wgmma": 0,
               "mfma_gluon": 1},
    "gfx950": {**_CDNA, "part": "MI355X", "clock_hz": 2.4e9,
               "units": 256, "smem_bytes": 160 * 1024, "lds_per_unit": 160 * 1024,
               "l2_bytes": 32 * MiB, "infinity_cache_bytes": 256 * MiB, "fp8_e4m3": 1, "tma": 0, "wgmma": 0,
               "mfma_gluon": 1},
}
