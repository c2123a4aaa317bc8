"""The compute-bound kernels of the library (matmul variants, attention, LSTM, GRU): interpreter
verification on ragged shapes, cross-compilation for nvidia and amd, constraints, recipes."""

import pytest

from kt_cli.evaluate.failure import WorkerFailure
from kt_cli.plugins import target as target_spec
from kt_cli.recipe.parse import DTYPES, load_recipe
from kt_cli.recipe.space import compile_constraint, constraint_env, feasible_points
from kt_cli.search.plan import build_space
from tests.conftest import ROOT
from tests.kernel_checks import compile_for, first_valid_params, inspect_module, stop_workers, verify


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    stop_workers()


SMALL_TILES = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 2}


@pytest.mark.parametrize("dtype,variant", [
    ("bfloat16", {}),
    ("float16", {"SPLIT_K": 3}),  # K = 80 splits 32 + 32 + 16: the last split is ragged
    ("float32", {"PROGRAMS_PER_UNIT": 2, "UNITS": 1}),  # two programs loop over every tile
    ("float8_e4m3", {"SPLIT_K": 2}),
    # TMA: M=128,N=96,K=64 takes the descriptors (K-major B for fp8); 67x45x80 (90-byte rows) cannot
    ("bfloat16", {"PROGRAMS_PER_UNIT": 1, "UNITS": 3, "TMA": 1}),
    ("float8_e4m3", {"PROGRAMS_PER_UNIT": 1, "UNITS": 2, "TMA": 1}),
    ("bfloat16", {"PROGRAMS_PER_UNIT": 1, "UNITS": 3, "TMA": 1, "SPLIT_K": 3}),  # TMA into the split-K workspace
])
def test_matmul_variants_are_right_on_ragged_shapes(dtype, variant):
    result = verify("matmul", dtype, {**SMALL_TILES, **variant})
    assert result["worst_excess"] <= 1
    assert {"M": 67, "N": 45, "K": 80} in result["shapes"]


@pytest.mark.parametrize("dtype,blocks,shapes", [
    ("bfloat16", {"BLOCK_M": 32, "BLOCK_N": 16}, None),  # causal GQA (4 heads on 2) and full attention, S ragged
    ("float16", {"BLOCK_M": 16, "BLOCK_N": 16}, [{"B": 1, "H": 2, "H_KV": 1, "S": 20, "D": 64, "CAUSAL": 1}]),
    ("bfloat16", {"BLOCK_M": 32, "BLOCK_N": 16, "TMA": 1}, None),  # descriptors: zero-filled keys past S
])
def test_attention_is_right_causal_and_grouped(dtype, blocks, shapes):
    result = verify("attention", dtype, blocks, shapes)
    assert result["worst_excess"] <= 1
    if shapes is None:
        assert {s.get("CAUSAL", 0) for s in result["shapes"]} == {0, 1}
        assert any(s["H"] != s["H_KV"] for s in result["shapes"])


@pytest.mark.parametrize("name", ["lstm", "gru"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_recurrent_cell_is_right_on_ragged_shapes(name, dtype):
    result = verify(name, dtype, {"BLOCK_B": 16, "BLOCK_H": 32, "BLOCK_K": 16})
    assert result["worst_excess"] <= 1
    assert {"B": 19, "H": 40, "I": 24} in result["shapes"]


BIG_GEMM = {"M": 4096, "N": 4096, "K": 4096}
GEMM_TILES = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8}


SKINNY_GEMM = {"M": 256, "N": 256, "K": 16384}


@pytest.mark.parametrize("target,dtype,shape,params,programs,launches", [
    ("nvidia:sm_90", "bfloat16", BIG_GEMM, {**GEMM_TILES, "num_stages": 3}, 1024, 1),
    ("nvidia:sm_90", "float8_e4m3", BIG_GEMM, {**GEMM_TILES, "num_stages": 3, "PROGRAMS_PER_UNIT": 2, "UNITS": 132},
     264, 1),
    ("amd:gfx942", "bfloat16", BIG_GEMM, {**GEMM_TILES, "num_stages": 2, "PROGRAMS_PER_UNIT": 1, "UNITS": 304}, 304, 1),
    ("nvidia:sm_90", "float16", SKINNY_GEMM, {**GEMM_TILES, "num_stages": 3, "SPLIT_K": 8}, 32, 2),
    ("amd:gfx942", "float32", SKINNY_GEMM, {**GEMM_TILES, "BLOCK_K": 32, "num_stages": 2, "SPLIT_K": 4}, 16, 2),
    ("nvidia:sm_90", "bfloat16", BIG_GEMM, {**GEMM_TILES, "num_stages": 4, "PROGRAMS_PER_UNIT": 1, "UNITS": 132,
                                            "TMA": 1}, 132, 1),
    ("nvidia:sm_90", "float8_e4m3", BIG_GEMM, {**GEMM_TILES, "num_stages": 4, "PROGRAMS_PER_UNIT": 1, "UNITS": 132,
                                               "TMA": 1}, 132, 1),
    ("nvidia:sm_90", "bfloat16", {"M": 1024, "N": 1024, "K": 1024}, {**GEMM_TILES, "num_stages": 4, "SPLIT_K": 2,
                                                                     "PROGRAMS_PER_UNIT": 1, "UNITS": 132,
                                                                     "TMA": 1}, 128, 2),
])
def test_matmul_variants_cross_compile(target, dtype, shape, params, programs, launches):
    out = compile_for("matmul", target, shape, dtype, params)
    # persistent grids stop at UNITS * PROGRAMS_PER_UNIT; split-K multiplies the tiles and adds a reduce kernel
    assert (out["programs"], out["launches"]) == (programs, launches)
    assert out["resources"]["registers"] > 0 and out["resources"]["programs_per_unit"] >= 1
    assert out["estimate"]["seconds"] > 0


@pytest.mark.parametrize("target", ["nvidia:sm_90", "amd:gfx942"])
@pytest.mark.parametrize("name,dtype,shape", [
    ("attention", "bfloat16", {"B": 4, "H": 32, "H_KV": 8, "S": 4096, "D": 128, "CAUSAL": 1}),
    ("lstm", "bfloat16", {"B": 64, "H": 1024, "I": 1024}),
    ("gru", "float16", {"B": 64, "H": 1024, "I": 1024}),
])
def test_first_valid_point_cross_compiles(name, dtype, shape, target):
    params = first_valid_params(name, dtype, shape, target)
    out = compile_for(name, target, shape, dtype, params)
    assert out["resources"]["registers"] > 0 and out["resources"]["programs_per_unit"] >= 1
    assert out["estimate"]["seconds"] > 0


def _sm90_ptx(name: str, shape: dict, params: dict, options: dict) -> str:
    from kt_cli.kernel import Kernel, record_launches
    from kt_cli.evaluate.cross_compile import cross_compile
    from tests.kernel_checks import template

    launch = record_launches(Kernel.load(template(name)), shape, "bfloat16", params, options)[0]
    return cross_compile(launch, "cuda", 90, 32).asm["ptx"]


@pytest.mark.parametrize("split_k", [1, 2])
def test_gemm_of_1000_columns_copies_a_and_b_tiles_asynchronously_like_aligned_ones(split_k):
    """Rows of 1000 bf16 values are only 16-byte aligned: each tile must still move in 16-byte
    asynchronous copies, as with 1024 (A copied 2 bytes at a time ran 3x slower on an H100)."""
    params = {**GEMM_TILES, "BLOCK_N": 64, "SPLIT_K": split_k, "PROGRAMS_PER_UNIT": 0, "TMA": 0, "UNITS": 132}
    options = {"num_warps": 4, "num_stages": 4}
    copies = [_sm90_ptx("matmul", {"M": 1000, "N": 1000, "K": k}, params, options).count("cp.async.cg.shared.global")
              for k in (1000, 1024)]
    assert copies[0] == copies[1] > 0


@pytest.mark.parametrize("target", ["nvidia:sm_90", "amd:gfx942"])
def test_attention_head_dim_64_full_attention_cross_compiles(target):
    shape = {"B": 4, "H": 32, "H_KV": 32, "S": 4096, "D": 64}
    out = compile_for("attention", target, shape, "float16", {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4,
                                                              "num_stages": 2})
    assert out["programs"] == 32 * 4 * 32


def test_attention_tma_variant_cross_compiles_to_tensor_copies_for_hopper():
    shape = {"B": 4, "H": 32, "H_KV": 8, "S": 4096, "D": 128, "CAUSAL": 1}
    out = compile_for("attention", "nvidia:sm_90", shape, "bfloat16", {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4,
                                                                       "num_stages": 2, "TMA": 1})
    assert out["programs"] == 32 * 4 * 32 and out["resources"]["spill_bytes"] == 0
    rule = "TMA == 0 or tma == 1"
    assert rule in inspect_module("attention", "bfloat16", [shape])["constraints"]
    point = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2, "TMA": 1, "GLUON": 0}
    assert _first_broken_constraint("attention", "bfloat16", shape, "nvidia:sm_80", point) == rule
    assert _first_broken_constraint("attention", "bfloat16", shape, "nvidia:sm_90", point) is None


def _first_broken_constraint(name, dtype, shape, target, point):
    """The first of the kernel's constraints that `point` breaks, or None. One naming a knob of the kernel's
    SPACE that the point leaves out is not checked, as a study whose space lacks that knob does not check
    it (kt_cli.search.plan.build_space)."""
    spec = target_spec(target)
    names = set(point) | set(shape) | set(spec.properties) | {"dtype_bytes"}
    env = constraint_env(point, shape, spec.properties, DTYPES[dtype])
    info = inspect_module(name, dtype, [shape])
    knobs = set(info["space"])
    for text in info["constraints"]:
        constraint = compile_constraint(text, name, names | knobs)
        if not constraint.uses & knobs - set(point) and not constraint.holds(env):
            return text
    return None


def test_fp8_candidate_is_invalid_on_sm80_only():
    point = {**GEMM_TILES, "num_stages": 3, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 0, "TMA": 0, "GLUON": 0}
    on = lambda target, units, dtype: _first_broken_constraint(  # noqa: E731
        "matmul", dtype, BIG_GEMM, target, {**point, "UNITS": units})
    assert on("nvidia:sm_80", 108, "float8_e4m3") == "fp8_e4m3 == 1 or dtype_bytes > 1"
    assert on("nvidia:sm_80", 108, "bfloat16") is None
    assert on("nvidia:sm_90", 132, "float8_e4m3") is None


def test_tma_candidates_are_only_for_hopper_and_later_and_persistent():
    point = {**GEMM_TILES, "num_stages": 3, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 1, "TMA": 1, "GLUON": 0}
    rule = "TMA == 0 or (tma == 1 and PROGRAMS_PER_UNIT > 0)"
    assert _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, "nvidia:sm_90", {**point, "UNITS": 132}) is None
    assert _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, "nvidia:sm_80", {**point, "UNITS": 108}) == rule
    assert _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, "amd:gfx942", {**point, "UNITS": 304}) == rule
    assert _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, "nvidia:sm_90",
                                    {**point, "UNITS": 132, "PROGRAMS_PER_UNIT": 0}) == rule


@pytest.mark.parametrize("dtype,tiles,fits", [
    ("bfloat16", {"BLOCK_N": 128, "BLOCK_K": 128, "num_stages": 3}, True),  # 3 x 64 KiB ring + 32 KiB C: 224 KiB
    ("bfloat16", {"BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 3}, True),
    ("bfloat16", {"BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 4}, False),  # 4 x 48 KiB + 64 KiB C: 256 KiB
    ("float8_e4m3", {"BLOCK_N": 256, "BLOCK_K": 128, "num_stages": 3}, True),  # a bf16 C tile for fp8 inputs
    ("float8_e4m3", {"BLOCK_N": 256, "BLOCK_K": 128, "num_stages": 4}, False),
    # without the TMA, a program a tile or persistent: the ring alone, num_stages of it
    ("bfloat16", {"BLOCK_N": 128, "BLOCK_K": 128, "num_stages": 3, "TMA": 0, "PROGRAMS_PER_UNIT": 0}, True),
    ("bfloat16", {"BLOCK_N": 128, "BLOCK_K": 128, "num_stages": 4, "TMA": 0, "PROGRAMS_PER_UNIT": 0}, False),
    ("bfloat16", {"BLOCK_N": 256, "BLOCK_K": 128, "num_stages": 3, "TMA": 0}, False),  # 3 x 96 KiB
])
def test_the_shared_memory_rules_refuse_on_sm90_what_the_compile_would(dtype, tiles, fits):
    """The kernels keep num_stages A and B tiles on sm_90 (the TMA variant a C tile besides), past what the
    recipes' ring-only rule (num_stages - 1 tiles) admitted: a tenth of a matmul tune's trials compiled only to
    be refused. The kernel's rules say what the compiled kernel takes: a point they admit compiles within the
    limit, one they refuse needs more than the limit."""
    point = {**GEMM_TILES, "BLOCK_M": 128, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 1, "UNITS": 132, "TMA": 1, "GLUON": 0,
             **tiles}
    broken = _first_broken_constraint("matmul", dtype, BIG_GEMM, "nvidia:sm_90", point)
    assert (broken is None) == fits, broken
    if fits:
        assert 0 < compile_for("matmul", "nvidia:sm_90", BIG_GEMM, dtype, point)["resources"]["shared_bytes"] <= 232448
    else:
        assert "num_stages + " in broken and "<= smem_bytes" in broken, broken
        with pytest.raises(WorkerFailure, match="needs .* B of shared memory"):
            compile_for("matmul", "nvidia:sm_90", BIG_GEMM, dtype, point)


def test_split_k_is_pruned_where_tiles_already_fill_the_gpu():
    point = {**GEMM_TILES, "num_stages": 3, "SPLIT_K": 4, "PROGRAMS_PER_UNIT": 0, "UNITS": 132, "TMA": 0, "GLUON": 0}
    broken = _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, "nvidia:sm_90", point)
    assert broken is not None and "SPLIT_K == 1 or" in broken
    skinny = {"M": 256, "N": 256, "K": 16384}
    assert _first_broken_constraint("matmul", "bfloat16", skinny, "nvidia:sm_90", point) is None


@pytest.mark.parametrize("recipe", ["matmul", "matmul_fp16", "matmul_fp32", "matmul_fp8", "attention",
                                    "attention_gqa", "lstm", "gru", "lstm_seq", "gru_seq", "lstm_heads", "gru_heads"])
def test_library_recipe_has_valid_points_for_every_target_and_shape(recipe):
    r = load_recipe(ROOT / "recipes" / f"{recipe}.toml")
    info = inspect_module(r.kernel["name"], r.problem.dtype, list(r.problem.shapes))
    assert all(f > 0 for f in info["flops"]) and all(b > 0 for b in info["bytes"])
    for name in r.targets:
        spec = target_spec(name)
        space = build_space(r, info["space"], info["constraints"], spec, set(r.problem.shapes[0]))
        if "UNITS" in {p.name for p in space.params}:  # the unit count is tied to the target, never free
            assert any("UNITS == units" == c.text for c in space.constraints)
        for shape in r.problem.shapes:
            assert len(feasible_points(space, shape, spec.properties, r.problem.dtype_bytes, recipe)) > 0


@pytest.mark.gpu
def test_split_k_gives_the_same_bits_on_every_run():
    import torch

    from kt_cli.kernel import Kernel, Tensors
    from tests.kernel_checks import template

    kernel = Kernel.load(template("matmul"))
    inputs = kernel.make_inputs(SKINNY_GEMM, "bfloat16", Tensors("cuda", 0))
    params = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 1, "SPLIT_K": 8}
    runs = []
    for _ in range(3):
        inputs["c"].fill_(float("nan"))
        kernel.launch(inputs, params, {"num_warps": 4, "num_stages": 3})
        runs.append(inputs["c"].clone())
    assert all(torch.equal(runs[0], r) for r in runs[1:])
    expected = inputs["a"].float() @ inputs["b"].float()
    assert float((runs[0].float() - expected).norm() / expected.norm()) < 1e-2
