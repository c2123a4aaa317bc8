"""The library GEMM's Gluon variant for AMD CDNA3/CDNA4 (gfx942, gfx950): it cross-compiles through kt's
own path on a machine without a GPU, into MFMA instructions fed from LDS, with sane resources; its
constraints keep it to the points that compile; the interpreter cannot run it. Nothing here ran on an
AMD GPU: what it computes on one is not checked anywhere (docs/amd.md)."""

import pytest

from tests.kernel_checks import compile_for, stop_workers
from tests.test_library_compute import BIG_GEMM, _first_broken_constraint


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    stop_workers()


LDS = {"amd:gfx942": 64 * 1024, "amd:gfx950": 160 * 1024}
UNITS = {"amd:gfx942": 304, "amd:gfx950": 256, "amd:gfx90a": 110}
GLUON = {"GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 0, "TMA": 0, "GLUON": 1}
RAGGED = {"M": 1000, "N": 1000, "K": 1000}


def _point(target, tiles):
    return {**GLUON, "UNITS": UNITS[target], **tiles}


@pytest.mark.parametrize("target", ["amd:gfx942", "amd:gfx950"])
@pytest.mark.parametrize("shape,tiles", [
    # a big square tile: 8 waves in a 2 x 4 grid of 128 x 64 wave tiles, 32 x 32 MFMAs, one LDS buffer
    (BIG_GEMM, {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 32, "num_warps": 8, "num_stages": 2,
                "matrix_instr_nonkdim": 32}),
    # ragged M, N and K (masked loads and stores), 16 x 16 MFMAs
    (RAGGED, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 2,
              "matrix_instr_nonkdim": 16}),
    # two LDS buffers used in turn (one barrier a K step)
    (BIG_GEMM, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3,
                "matrix_instr_nonkdim": 16}),
])
def test_amd_gluon_gemm_cross_compiles_with_sane_resources(target, shape, tiles):
    point = _point(target, tiles)
    assert _first_broken_constraint("matmul", "bfloat16", shape, target, point) is None
    out = compile_for("matmul", target, shape, "bfloat16", point)
    res = out["resources"]
    assert out["uninterpretable"] == ["matmul_amd_gluon_kernel"]  # the launch took the AMD Gluon kernel
    assert res["threads"] == tiles["num_warps"] * 64
    buffers = (tiles["BLOCK_M"] + tiles["BLOCK_N"]) * tiles["BLOCK_K"] * 2 * (tiles["num_stages"] - 1)
    assert buffers < res["shared_bytes"] <= LDS[target]  # the buffers and their row padding
    assert res["spill_bytes"] == 0
    assert 0 < res["registers"] <= 256 and res["registers"] + res["extra"]["agprs"] <= 512
    tiles_count = -(-shape["M"] // tiles["BLOCK_M"]) * -(-shape["N"] // tiles["BLOCK_N"])
    assert (out["programs"], out["launches"]) == (tiles_count, 1)  # a program per C tile
    mix = out["instructions"]  # counted in the AMDGCN (vendor_amd.plugin.gcn_mix)
    assert mix["mma"] > 0 and mix["shared_load"] > 0 and mix["shared_store"] > 0  # v_mfma fed by ds_read
    assert mix["global_load"] > 0 and mix["global_store"] > 0  # buffer_load / buffer_store
    assert out["estimate"]["seconds"] > 0


POINT = {**GLUON, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 2}


@pytest.mark.parametrize("target,dtype,shape,change,rule", [
    ("amd:gfx942", "bfloat16", BIG_GEMM, {}, None),
    ("amd:gfx950", "float16", RAGGED, {"num_stages": 3}, None),
    ("amd:gfx90a", "bfloat16", BIG_GEMM, {}, "mfma_gluon == 1"),  # CDNA2: no variant
    ("amd:gfx942", "float32", BIG_GEMM, {}, "dtype_bytes == 2"),
    ("amd:gfx950", "float8_e4m3", BIG_GEMM, {}, "dtype_bytes == 2"),
    ("amd:gfx942", "bfloat16", BIG_GEMM, {"PROGRAMS_PER_UNIT": 1}, "PROGRAMS_PER_UNIT == 0"),
    ("amd:gfx942", "bfloat16", {"M": 256, "N": 256, "K": 16384}, {"SPLIT_K": 2}, "SPLIT_K == 1"),
    ("amd:gfx950", "bfloat16", BIG_GEMM, {"num_stages": 4}, "num_stages == 3"),  # 1 or 2 LDS buffers
    # 8 waves need 8 blocks of 32 x 32
    ("amd:gfx942", "bfloat16", BIG_GEMM, {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 8}, "// 32) >= num_warps"),
    # two buffers of 128 x 64 A and B tiles: 72 KiB, over gfx942's 64 KiB of LDS (gfx950 has 160)
    ("amd:gfx942", "bfloat16", BIG_GEMM, {"num_stages": 3}, "<= smem_bytes"),
    ("amd:gfx950", "bfloat16", BIG_GEMM, {"num_stages": 3}, None),
    # 256 x 256 x 64 over 8 waves: 128 accumulator registers a lane and 128 more for A and B (spills)
    ("amd:gfx950", "bfloat16", BIG_GEMM, {"BLOCK_M": 256, "BLOCK_N": 256, "num_warps": 8}, "<= 224"),
])
def test_constraints_keep_the_amd_gluon_variant_to_points_that_compile(target, dtype, shape, change, rule):
    point = {**POINT, "UNITS": UNITS[target], **change}
    broken = _first_broken_constraint("matmul", dtype, shape, target, point)
    if rule is None:
        assert broken is None
    else:
        assert broken is not None and "GLUON == 0" in broken and rule in broken, broken


def test_the_amd_variant_leaves_gluon_0_points_and_nvidia_targets_alone():
    """A GLUON = 0 point is judged as before on AMD; the AMD point's knobs on sm_90 hit sm_90's rules."""
    plain = {**POINT, "GLUON": 0, "UNITS": 304, "BLOCK_K": 32, "num_stages": 4, "num_warps": 8}  # AMD Gluon: no
    assert _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, "amd:gfx942", plain) is None
    broken = _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, "nvidia:sm_90", {**POINT, "UNITS": 132})
    assert broken is not None and "wgmma == 1 and TMA == 1" in broken, broken


def test_a_verification_launch_of_the_amd_gluon_kernel_on_the_cpu_is_the_interpreters_failure():
    from kt_cli.evaluate.failure import WorkerFailure
    from tests.kernel_checks import verify

    params = {**POINT, "UNITS": 304, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}
    with pytest.raises(WorkerFailure) as failure:
        verify("matmul", "bfloat16", params, [{"M": 67, "N": 45, "K": 80}])
    assert failure.value.kind == "interpreter" and "matmul_amd_gluon_kernel" in failure.value.message


def test_tensors_the_amd_kernel_cannot_take_run_the_plain_kernel():
    import torch

    from kt_templates.kernels.matmul import _amd_gluon_ready

    a, b, c = torch.empty(64, 32, dtype=torch.bfloat16), torch.empty(32, 48, dtype=torch.bfloat16), \
        torch.empty(64, 48, dtype=torch.bfloat16)
    assert _amd_gluon_ready(a, b, c, 128, 64)
    assert not _amd_gluon_ready(a.float(), b.float(), c.float(), 128, 64)  # 16-bit only
    assert not _amd_gluon_ready(a, torch.empty(48, 32, dtype=torch.bfloat16).t(), c, 128, 64)  # B K-major
    assert not _amd_gluon_ready(a, b, c.half(), 128, 64)  # one dtype
