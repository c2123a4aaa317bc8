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
# Accelerator copies tiles between global and shared memory (Hopper and later).
ARCHS = {
    "sm_80": {"part": "A100", "units": 108, "smem_bytes": 166912, "smem_per_unit": 167936, "regs_per_unit": 65536,
              "max_threads_per_unit": 2048, "max_programs_per_unit": 32, "l2_bytes": 40 * 2**20, "fp8_e4m3": 0, "tma": 0},
    "sm_89": {"part": "L40S", "units": 142, "smem_bytes": 101376, "smem_per_unit": 102400, "regs_per_unit": 65536,
              "max_threads_per_unit": 1536, "max_programs_per_unit": 24, "l2_bytes": 96 * 2**20, "fp8_e4m3": 1, "tma": 0},
    "sm_90": {"part": "H100", "units": 132, "smem_bytes": 232448, "smem_per_unit": 233472, "regs_per_unit": 65536,
              "max_threads_per_unit": 2048, "max_programs_per_unit": 32, "l2_bytes": 50 * 2**20, "fp8_e4m3": 1, "tma": 1},
    "sm_100": {"part": "B200", "units": 148, "smem_bytes": 232448, "smem_per_unit": 233472, "regs_per_unit": 65536,
               "max_threads_per_unit": 2048, "max_programs_per_unit": 32, "l2_bytes": 126 * 2**20, "fp8_e4m3": 1, "tma": 1},
}
