"""The library attention's Gluon variant for AMD CDNA3/CDNA4 (gfx942, gfx950): it cross-compiles through
kt's own path on a machine without a GPU, into MFMA instructions fed from LDS, with sane resources; its
constraints keep it to the points that compile without spilling; NVIDIA's points and GLUON = 0 points are
judged as before; the interpreter cannot run it; tensors it cannot take run the pointer kernel. Nothing
here ran on an AMD GPU: what it computes on one is not checked anywhere (docs/amd.md)."""

import pytest

from tests.kernel_checks import compile_for, stop_workers
from tests.test_library_compute import _first_broken_constraint


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    stop_workers()


LDS = {"amd:gfx942": 64 * 1024, "amd:gfx950": 160 * 1024}
GLUON = {"TMA": 0, "GLUON": 1}
CAUSAL_128 = {"B": 4, "H": 32, "H_KV": 32, "S": 4096, "D": 128, "CAUSAL": 1}
FULL_64 = {"B": 4, "H": 32, "H_KV": 32, "S": 4096, "D": 64}
RAGGED_GQA = {"B": 2, "H": 32, "H_KV": 8, "S": 1000, "D": 128}  # 1000 = 15 x 64 + 40


@pytest.mark.parametrize("target", ["amd:gfx942", "amd:gfx950"])
@pytest.mark.parametrize("shape,tiles", [
    # the library's FlashAttention-2 tile: 4 waves of 32 query rows, 64-key blocks prefetched, 32 x 32 MFMAs
    (CAUSAL_128, {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2, "matrix_instr_nonkdim": 32}),
    # full attention at D = 64, 8 waves of 16 rows (16 x 16 MFMAs), 128-key blocks, no prefetch
    (FULL_64, {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 1, "matrix_instr_nonkdim": 16}),
    # grouped-query, S ragged (a masked last key block, rows past S masked on load and store), 16 x 16
    (RAGGED_GQA, {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2, "matrix_instr_nonkdim": 16}),
])
def test_amd_gluon_attention_cross_compiles_with_sane_resources(target, shape, tiles):
    point = {**GLUON, **tiles}
    assert _first_broken_constraint("attention", "bfloat16", shape, target, point) is None
    out = compile_for("attention", target, shape, "bfloat16", point)
    res = out["resources"]
    assert out["uninterpretable"] == ["attention_amd_gluon_kernel"]  # the launch took the AMD Gluon kernel
    assert res["threads"] == tiles["num_warps"] * 64
    kv_tiles = 2 * tiles["BLOCK_N"] * shape["D"] * 2
    assert kv_tiles < res["shared_bytes"] <= LDS[target]  # the K and V tiles and their row padding
    assert res["spill_bytes"] == 0
    assert 0 < res["registers"] <= 256 and res["registers"] + res["extra"]["agprs"] <= 512
    blocks = -(-shape["S"] // tiles["BLOCK_M"])
    assert (out["programs"], out["launches"]) == (blocks * shape["B"] * shape["H"], 1)
    mix = out["instructions"]  # counted in the AMDGCN (vendor_amd.plugin.gcn_mix)
    assert mix["mma"] > 0 and mix["shared_load"] > 0 and mix["shared_store"] > 0  # v_mfma fed by ds_read
    assert mix["global_load"] > 0 and mix["global_store"] > 0  # buffer_load / buffer_store
    assert out["estimate"]["seconds"] > 0


POINT = {**GLUON, "BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2}


@pytest.mark.parametrize("target,dtype,shape,change,rule", [
    ("amd:gfx942", "bfloat16", CAUSAL_128, {}, None),
    ("amd:gfx950", "float16", RAGGED_GQA, {"num_stages": 1, "BLOCK_N": 128}, None),
    ("amd:gfx90a", "bfloat16", CAUSAL_128, {}, "mfma_gluon == 1"),  # CDNA2: no variant
    ("amd:gfx942", "float32", {**CAUSAL_128, "D": 64}, {}, "dtype_bytes == 2"),  # the launch takes 16-bit only
    ("amd:gfx942", "bfloat16", {**CAUSAL_128, "D": 8}, {"BLOCK_N": 32}, "D % 16 == 0"),
    ("amd:gfx950", "bfloat16", CAUSAL_128, {"num_stages": 3}, "num_stages <= 2"),  # one block prefetched at most
    ("amd:gfx942", "bfloat16", CAUSAL_128, {"TMA": 1}, "TMA == 0 or tma == 1"),  # no TMA on AMD (a rule of all)
    # 16 query rows a wave: 8 waves take 128
    ("amd:gfx942", "bfloat16", CAUSAL_128, {"BLOCK_M": 64, "num_warps": 8}, "BLOCK_M % (16 * num_warps)"),
    ("amd:gfx942", "bfloat16", CAUSAL_128, {"num_warps": 8}, None),
    # 128 x 128 blocks at D = 128: 69600 bytes of LDS, over gfx942's 64 KiB (gfx950 has 160); the rule of all
    # points (Q and two K/V tiles, unpadded) bounds the AMD kernel's LDS (the Q tile, then the padded K and V)
    ("amd:gfx942", "bfloat16", CAUSAL_128, {"BLOCK_N": 128}, "<= smem_bytes"),
    ("amd:gfx950", "bfloat16", CAUSAL_128, {"BLOCK_N": 128}, None),
    # registers: 128 x 128 at D = 128 on 8 waves spills (256 registers a lane), 256 x 64 at D = 128 on 4
    # waves with Triton 3.6 (512 a lane, AGPRs included); on 4 waves 128 x 128 at D = 128 does not
    ("amd:gfx950", "bfloat16", CAUSAL_128, {"BLOCK_N": 128, "num_warps": 8}, "<= 768"),
    ("amd:gfx950", "bfloat16", CAUSAL_128, {"BLOCK_M": 256}, "<= 768"),
    ("amd:gfx950", "bfloat16", {**CAUSAL_128, "D": 64}, {"BLOCK_M": 256, "BLOCK_N": 128}, "<= 768"),
    ("amd:gfx950", "bfloat16", {**CAUSAL_128, "D": 64}, {"BLOCK_M": 256}, None),
])
def test_constraints_keep_the_amd_gluon_attention_to_points_that_compile(target, dtype, shape, change, rule):
    broken = _first_broken_constraint("attention", dtype, shape, target, {**POINT, **change})
    if rule is None:
        assert broken is None
    else:
        assert broken is not None and rule in broken, broken


def test_the_amd_variant_leaves_gluon_0_points_and_nvidia_targets_alone():
    """GLUON = 0 points are judged as before on AMD; sm_90's Gluon point still takes sm_90's kernel; the
    AMD point's knobs (TMA = 0) on sm_90 hit sm_90's rules, and GLUON = 1 on CDNA2 or sm_80 is rejected."""
    for target in ("amd:gfx942", "amd:gfx950", "amd:gfx90a"):
        plain = {**POINT, "GLUON": 0, "num_stages": 3, "BLOCK_N": 32}  # num_stages 3: no AMD Gluon point
        assert _first_broken_constraint("attention", "bfloat16", CAUSAL_128, target, plain) is None
    sm90 = {"TMA": 1, "GLUON": 1, "BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 2}
    assert _first_broken_constraint("attention", "bfloat16", CAUSAL_128, "nvidia:sm_90", sm90) is None
    out = compile_for("attention", "nvidia:sm_90", CAUSAL_128, "bfloat16", sm90)
    assert out["uninterpretable"] == ["attention_gluon_kernel"]
    broken = _first_broken_constraint("attention", "bfloat16", CAUSAL_128, "nvidia:sm_90", POINT)
    assert broken is not None and "wgmma == 0 or (TMA == 1" in broken, broken
    for target in ("amd:gfx90a", "nvidia:sm_80"):
        broken = _first_broken_constraint("attention", "bfloat16", CAUSAL_128, target, POINT)
        assert broken == "GLUON == 0 or wgmma == 1 or mfma_gluon == 1", (target, broken)


def test_a_verification_launch_of_the_amd_gluon_kernel_on_the_cpu_is_the_interpreters_failure():
    """16-bit tensors with a contiguous head dim of 16 or 32 (the verification shapes'): the launch calls
    the AMD Gluon kernel, under the interpreter an `interpreter` failure naming it, not a `crash`."""
    from kt_cli.evaluate.failure import WorkerFailure
    from tests.kernel_checks import verify

    params = {**GLUON, "BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2}
    with pytest.raises(WorkerFailure) as failure:
        verify("attention", "bfloat16", params, [{"B": 1, "H": 4, "H_KV": 2, "S": 37, "D": 16, "CAUSAL": 1}])
    assert failure.value.kind == "interpreter" and "attention_amd_gluon_kernel" in failure.value.message


def test_tensors_the_amd_kernel_cannot_take_run_the_pointer_kernel():
    import torch

    from kt_templates.kernels.attention import _amd_gluon_ready

    q = torch.empty(2, 8, 100, 64, dtype=torch.bfloat16)
    k, v = torch.empty(2, 2, 100, 64, dtype=torch.bfloat16), torch.empty(2, 2, 100, 64, dtype=torch.bfloat16)
    assert _amd_gluon_ready(q, k, v, torch.empty_like(q))
    assert not _amd_gluon_ready(q.float(), k.float(), v.float(), torch.empty_like(q).float())  # 16-bit only
    assert not _amd_gluon_ready(q, k, v, torch.empty_like(q).half())  # one dtype
    odd = torch.empty(2, 8, 100, 40, dtype=torch.bfloat16)  # D not a multiple of 16
    assert not _amd_gluon_ready(odd, odd[:, :2], odd[:, :2], odd)
    strided = torch.empty(2, 2, 100, 128, dtype=torch.bfloat16)[..., ::2]  # head dim not contiguous
    assert not _amd_gluon_ready(q, strided, v, torch.empty_like(q))


def test_a_gluon_point_on_tensors_the_amd_kernel_cannot_take_compiles_the_pointer_kernel():
    """fp32 (or D = 8) with GLUON = 1 on gfx942: the launch falls back to the plain pointer kernel (nothing
    uninterpretable: the interpreter verifies it)."""
    out = compile_for("attention", "amd:gfx942", {**CAUSAL_128, "D": 64}, "float32",
                      {**POINT, "BLOCK_M": 64, "BLOCK_N": 32})
    assert out["uninterpretable"] == [] and out["launches"] == 1 and out["resources"]["spill_bytes"] == 0
