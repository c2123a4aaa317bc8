"""NVIDIA peak tables: dense tensor-core FLOP/s per dtype, DRAM bytes/s. Figures from NVIDIA's
datasheets (not measured by kt); `kt devices --measure` measures copy bandwidth and a GEMM rate."""

TB = 1e12
# name fragment (as torch reports the device) -> peaks
DEVICES = {
    "A100": {"arch": "sm_80", "bfloat16": 312 * TB, "float16": 312 * TB, "tfloat32": 156 * TB,
             "float32": 19.5 * TB, "dram_bytes_per_s": 2.039 * TB},
    "H100 PCIe": {"arch": "sm_90", "bfloat16": 756.5 * TB, "float16": 756.5 * TB, "float8_e4m3": 1513 * TB,
                  "tfloat32": 378 * TB, "float32": 51.2 * TB, "dram_bytes_per_s": 2.0 * TB},
    "H100": {"arch": "sm_90", "bfloat16": 989.4 * TB, "float16": 989.4 * TB, "float8_e4m3": 1978.9 * TB,
             "tfloat32": 494.7 * TB, "float32": 66.9 * TB, "dram_bytes_per_s": 3.35 * TB},
    "H200": {"arch": "sm_90", "bfloat16": 989.4 * TB, "float16": 989.4 * TB, "float8_e4m3": 1978.9 * TB,
             "tfloat32": 494.7 * TB, "float32": 66.9 * TB, "dram_bytes_per_s": 4.8 * TB},
    "B200": {"arch": "sm_100", "bfloat16": 2250 * TB, "float16": 2250 * TB, "float8_e4m3": 4500 * TB,
             "tfloat32": 1100 * TB, "float32": 80 * TB, "dram_bytes_per_s": 8.0 * TB},
    "L40S": {"arch": "sm_89", "bfloat16": 362 * TB, "float16": 362 * TB, "float8_e4m3": 733 * TB,
             "tfloat32": 183 * TB, "float32": 91.6 * TB, "dram_bytes_per_s": 0.864 * TB},
    "RTX 4090": {"arch": "sm_89", "bfloat16": 165.2 * TB, "float16": 165.2 * TB, "float8_e4m3": 330.3 * TB,
                 "tfloat32": 82.6 * TB, "float32": 82.6 * TB, "dram_bytes_per_s": 1.008 * TB},
}

# Per-arch properties (CUDA programming guide, compute capability tables) and the arch's reference
# part for static mode: the peak table a target without a device is estimated against. fp8_e4m3 is 1
# where the tensor cores take float8 e4m3 operands (Ada and later); `tma` is 1 where the Tensor Memory
# Accelerator copies tiles between global and shared memory (Hopper and later); `wgmma` is 1 where the
# warpgroup MMA (wgmma.mma_async) exists: sm_90 only (Blackwell's tensor cores take tcgen05 instead);
# `mfma_gluon` (1 on AMD's gfx942 and gfx950, where kt's AMD Gluon kernels compile) is 0 on every NVIDIA arch.
# The cost model's constants (kt_cli/evaluate/estimate.py), per arch; `kt devices --calibrate` measures
# the latencies, L2 bandwidth and attainable fractions on a present GPU and lays them over these.
# - mma_fraction_warp: the share of the tensor peak that warp-level mma.sync reaches. On Hopper it is
#   about two thirds of what warpgroup wgmma reaches (Luo et al., "Benchmarking and Dissecting the
#   Nvidia Hopper GPU Architecture", IPDPS 2024: mma.sync tops out well below the wgmma rate); on
#   Ampere and Ada mma.sync is the tensor cores' native path (1.0). Blackwell's tcgen05 is issued
#   for the CTA; its mma.sync share is not measured here (0.5, a guess, said in docs/costmodel.md).
# - dram_latency_s / l2_latency_s: loaded latencies as Little's law sees them (bytes in flight per
#   unit / rate per unit). sm_90: what `kt devices --calibrate` measured on every H100 and H200 it ran on
#   (benchmarks/results/calibrate_*.json, five H100 and three H200 runs, 2026-11-25 to -28): L2 1.70-1.74 us,
#   DRAM 2.0-2.2 us, about 11x and 7x the unloaded latencies (Hopper microbenchmarks report ~260 and ~480
#   cycles at ~1.7 GHz): the queues of a loaded GPU. Other archs, never calibrated here: ~300 ns L2 and
#   ~800 ns DRAM (the unloaded latencies, roughly doubled), which the Hopper runs say are too short.
# - clock_hz: the SM clock under load (H100 SXM boosts to 1.98 GHz and holds ~1.75 GHz in long GEMMs;
#   A100 1.41, L40S 2.52, B200 ~1.97 GHz boost), for the instruction-issue terms.
# - dram_attainable / math_attainable: the fraction of the datasheet's DRAM bandwidth a streaming
#   copy and of the bf16 peak cuBLAS reach (copy ~90%; large GEMMs ~70-80% on H100 SXM at its
#   sustained clock). sm_90's measured: DRAM 0.84 (every calibration), bf16 GEMM 0.69-0.80 (median 0.73).
# - l2_bytes_per_s: sm_90's, measured by the same calibrations, 7.41-7.48 TB/s on H100s (8.05-8.06 on
#   H200s; the table holds the H100's, the arch's reference part); other archs: 3x DRAM.
# - l2_lockstep_lookups: L2 lookups per byte of the re-reads programs make of the same tiles at the same
#   step (a kernel's declared `lockstep_reads`): the L2 serves requests for a sector that arrive together
#   from one lookup. Nsight Compute on an H200 (2026-11-28, benchmarks/results/s33/call1), the library's
#   bf16 GEMMs whose L2 was at least 80% busy: (sectors looked up - the unique bytes' sectors) / (bytes the
#   SMs received - unique bytes), median 0.79 (0.62-0.92 over 22 tiles and shapes). Not measured elsewhere:
#   other archs read every byte as a lookup (1.0).
# - dram_knee: how sharply DRAM's rate turns from latency-bound to bandwidth-bound
#   (kt_cli.evaluate.estimate.memory_time), fitted by `kt devices --calibrate` to its streaming-read sweep.
#   sm_90's is the H100's, the arch's reference part: 3.8 on four of the five H100 calibrations (2.5 on
#   the first, whose sweep re-read its region from L2); the H200s fit 3.2-3.3 (benchmarks/results/
#   calibrate_*.json). Other archs: none (a sharp corner).
# - shared_bytes_per_clock: what an SM's shared memory serves a clock, 32 banks of 4 bytes (CUDA C++
#   Programming Guide, "Shared Memory" of compute capabilities 5.x and later), on every arch here.
_UNCALIBRATED = {"dram_latency_s": 800e-9, "l2_latency_s": 300e-9, "shared_bytes_per_clock": 128}
MODEL = {
    "sm_80": {**_UNCALIBRATED, "clock_hz": 1.41e9, "mma_fraction_warp": 1.0, "dram_attainable": 0.9,
              "math_attainable": 0.8},
    "sm_89": {**_UNCALIBRATED, "clock_hz": 2.52e9, "mma_fraction_warp": 1.0, "dram_attainable": 0.9,
              "math_attainable": 0.8},
    "sm_90": {"dram_latency_s": 2.1e-6, "l2_latency_s": 1.72e-6, "l2_bytes_per_s": 7.45e12, "clock_hz": 1.755e9,
              "mma_fraction_warp": 0.65, "mma_fraction_warpgroup": 1.0, "dram_attainable": 0.84,
              "math_attainable": 0.73, "l2_lockstep_lookups": 0.79, "dram_knee": 3.8,
              "shared_bytes_per_clock": 128},
    "sm_100": {**_UNCALIBRATED, "clock_hz": 1.965e9, "mma_fraction_warp": 0.5, "mma_fraction_warpgroup": 1.0,
               "dram_attainable": 0.9, "math_attainable": 0.75},
}


ARCHS = {
    "sm_80": {"part": "A100", "units": 108, "smem_bytes": 166912, "smem_per_unit": 167936, "regs_per_unit": 65536,
              "max_threads_per_unit": 2048, "max_programs_per_unit": 32,
              "l2_bytes": 40 * 2**20, "fp8_e4m3": 0, "tma": 0, "wgmma": 0, "mfma_gluon": 0},
    "sm_89": {"part": "L40S", "units": 142, "smem_bytes": 101376, "smem_per_unit": 102400, "regs_per_unit": 65536,
              "max_threads_per_unit": 1536, "max_programs_per_unit": 24,
              "l2_bytes": 96 * 2**20, "fp8_e4m3": 1, "tma": 0, "wgmma": 0, "mfma_gluon": 0},
    "sm_90": {"part": "H100", "units": 132, "smem_bytes": 232448, "smem_per_unit": 233472, "regs_per_unit": 65536,
              "max_threads_per_unit": 2048, "max_programs_per_unit": 32,
              "l2_bytes": 50 * 2**20, "fp8_e4m3": 1, "tma": 1, "wgmma": 1, "mfma_gluon": 0},
    "sm_100": {"part": "B200", "units": 148, "smem_bytes": 232448, "smem_per_unit": 233472, "regs_per_unit": 65536,
               "max_threads_per_unit": 2048, "max_programs_per_unit": 32,
               "l2_bytes": 126 * 2**20, "fp8_e4m3": 1, "tma": 1, "wgmma": 0, "mfma_gluon": 0},
}
