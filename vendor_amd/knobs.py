"""Triton's AMD-only launch options and which values each arch can take.

- waves_per_eu: an occupancy hint to LLVM (amdgpu-waves-per-eu); 0 leaves it to the compiler, N asks
  for registers to be limited so N waves fit per SIMD (1..8 on CDNA).
- matrix_instr_nonkdim: the M=N size of the MFMA instruction a dot uses (16 or 32); 0 lets Triton pick.
- kpack: how many K-elements one thread packs per MFMA operand load (1 or 2); gfx950 takes only 1
  (Triton overrides any other value there, so a kpack=2 point would silently duplicate kpack=1).
- num_stages: on HIP, 0 and 1 mean no software pipelining; 2 or more turn on the stream pipeliner
  with that many stages of global->LDS prefetch.
"""

from __future__ import annotations

LAUNCH_OPTIONS = ("num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim", "kpack")
MAX_WORKGROUP_THREADS = 1024  # HIP's limit on a workgroup's size on every CDNA GPU

# MFMA M=N sizes and kpack values Triton's AMD backend accepts per arch
MFMA_NONKDIMS = {"gfx90a": (16, 32), "gfx942": (16, 32), "gfx950": (16, 32)}
KPACKS = {"gfx90a": (1, 2), "gfx942": (1, 2), "gfx950": (1,)}


def why_unrunnable(params: dict, arch: str, props: dict) -> str | None:
    """Why this point cannot run on `arch`, or None."""
    nonkdim = params.get("matrix_instr_nonkdim")
    if nonkdim is not None and nonkdim != 0 and nonkdim not in MFMA_NONKDIMS[arch]:
        return (f"matrix_instr_nonkdim={nonkdim}: {arch} has MFMA instructions with M=N in "
                f"{', '.join(map(str, MFMA_NONKDIMS[arch]))} (0 lets Triton pick)")
    kpack = params.get("kpack")
    if kpack is not None and kpack not in KPACKS[arch]:
        return f"kpack={kpack}: {arch} takes kpack in {', '.join(map(str, KPACKS[arch]))}"
    waves = params.get("waves_per_eu")
    if waves is not None and not 0 <= waves <= props["max_waves_per_simd"]:
        return f"waves_per_eu={waves}: {arch} runs at most {props['max_waves_per_simd']} waves per SIMD (0: no hint)"
    stages = params.get("num_stages")
    if stages is not None and stages < 0:
        return f"num_stages={stages}: must be 0 or more"
    warps = params.get("num_warps")
    if warps is not None and warps * props["wavefront"] > MAX_WORKGROUP_THREADS:
        return (f"num_warps={warps}: a workgroup of {warps} waves of {props['wavefront']} is "
                f"{warps * props['wavefront']} threads; AMD GPUs allow {MAX_WORKGROUP_THREADS}")
    return None
