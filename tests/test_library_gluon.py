"""The library GEMM's Gluon variant (persistent, warp-specialized, sm_90): it cross-compiles for sm_90
through kt's own path on a machine without a GPU, its constraints keep it to the points it can run, and
static mode, whose CPU interpreter cannot run a Gluon kernel, never lets it win unverified."""

import re

import pytest

from kt_cli.plugins import target as target_spec
from kt_cli.recipe.parse import DTYPES, load_recipe
from kt_cli.recipe.space import constraint_env
from kt_cli.search.plan import build_space
from tests.conftest import ROOT
from tests.helpers import kt
from tests.kernel_checks import check_static_gluon_point, compile_for, inspect_module, stop_workers
from tests.test_library_compute import BIG_GEMM, _first_broken_constraint


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    stop_workers()


H100_SHARED = 232448  # 227 KiB: what one program may take on an H100
GLUON = {"GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 1, "UNITS": 132, "TMA": 1, "GLUON": 1}


@pytest.mark.parametrize("shape,dtype,tiles", [
    (BIG_GEMM, "bfloat16", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 3,
                            "num_warps": 8}),  # 2 consumer WGs
    ({"M": 1000, "N": 1000, "K": 1000}, "bfloat16", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64,
                                                     "num_stages": 4, "num_warps": 4}),  # one consumer WG, ragged K
    # fp8 e4m3, B K-major: wgmma 32 deep in K, a bf16 C tile
    (BIG_GEMM, "float8_e4m3", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "num_stages": 3, "num_warps": 8}),
    ({"M": 1000, "N": 1008, "K": 1008}, "float8_e4m3", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128,
                                                        "num_stages": 4, "num_warps": 4}),
    # the C tile stored in 64-column slices: a 4th stage fits in the shared memory a whole C tile took
    (BIG_GEMM, "bfloat16", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 4, "num_warps": 8,
                            "EPILOGUE_N": 64}),
    (BIG_GEMM, "float8_e4m3", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "num_stages": 4, "num_warps": 8,
                               "EPILOGUE_N": 64}),
    ({"M": 1000, "N": 1000, "K": 1000}, "bfloat16", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64,
                                                     "num_stages": 3, "num_warps": 8, "EPILOGUE_N": 128}),
])
def test_gluon_gemm_cross_compiles_for_hopper_with_sane_resources(shape, dtype, tiles):
    out = compile_for("matmul", "nvidia:sm_90", shape, dtype, {**GLUON, **tiles})
    res = out["resources"]
    # the main launch is the warp-specialized kernel: the consumer warps plus the producer's warpgroup
    assert res["threads"] == (tiles["num_warps"] + 4) * 32
    ring = (tiles["BLOCK_M"] + tiles["BLOCK_N"]) * tiles["BLOCK_K"] * (1 if dtype == "float8_e4m3" else 2) * tiles["num_stages"]
    c_slice = tiles["BLOCK_M"] * tiles.get("EPILOGUE_N", tiles["BLOCK_N"]) * 2  # bf16 C for fp8 too
    # the ring, one C slice of the epilogue and the mbarriers: what the shared-memory constraint counts
    assert ring + c_slice < res["shared_bytes"] <= min(ring + c_slice + 1024, H100_SHARED)
    assert res["spill_bytes"] == 0 and 0 < res["registers"] <= 255
    assert (out["programs"], out["launches"]) == (min(132, -(-shape["M"] // tiles["BLOCK_M"])
                                                      * -(-shape["N"] // tiles["BLOCK_N"])), 1)
    assert out["estimate"]["seconds"] > 0


@pytest.mark.parametrize("shape,splits,programs", [
    ({"M": 1000, "N": 1000, "K": 1000}, 2, 128),  # 64 tiles x 2 splits, one item a program
    ({"M": 1024, "N": 1024, "K": 8192}, 8, 128),  # 512 items: 132 programs rounded down to a multiple of 8
    ({"M": 512, "N": 768, "K": 8192}, 3, 72),  # 24 tiles x 3
])
def test_gluon_gemm_reduces_its_k_splits_in_its_one_launch(shape, splits, programs):
    """SPLIT_K > 1 on sm_90's Gluon kernel: one launch (no reduction kernel), a grid that is a multiple of
    the splits (a tile's splits on neighbouring programs of one round, its last on the highest), and in
    the PTX the tile counter's release increment and acquire read."""
    from tests.test_library_compute import _sm90_ptx

    point = {**GLUON, "SPLIT_K": splits, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
    out = compile_for("matmul", "nvidia:sm_90", shape, "bfloat16", {**point, "num_stages": 4, "num_warps": 4})
    assert (out["programs"], out["launches"]) == (programs, 1) and programs % splits == 0
    assert out["resources"]["threads"] == 8 * 32  # the Gluon kernel: 4 consumer warps, the producer's warpgroup
    ptx = _sm90_ptx("matmul", shape, point, {"num_warps": 4, "num_stages": 4})
    # a split before the last counts itself in (release), the last reads the count (acquire)
    assert re.search(r"(red|atom)\.global\.gpu\.release\.add\.u32", ptx) and "ld.global.gpu.acquire.b32" in ptx


POINT = {**GLUON, "BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 3, "num_warps": 8,
         "EPILOGUE_N": 256}


@pytest.mark.parametrize("target,dtype,shape,change,rule", [
    ("nvidia:sm_90", "bfloat16", BIG_GEMM, {}, None),
    ("nvidia:sm_80", "bfloat16", BIG_GEMM, {"UNITS": 108, "TMA": 0}, "wgmma == 1"),  # no wgmma before Hopper
    ("nvidia:sm_100", "bfloat16", BIG_GEMM, {"UNITS": 148}, "wgmma == 1"),  # nor after it (tcgen05)
    # gfx90a has neither (gfx942 and gfx950 have the AMD variant: tests/test_library_gluon_amd.py)
    ("amd:gfx90a", "bfloat16", BIG_GEMM, {"UNITS": 110, "TMA": 0, "BLOCK_N": 64, "num_stages": 2}, "wgmma == 1"),
    ("nvidia:sm_90", "float8_e4m3", BIG_GEMM, {}, None),  # fp8: B K-major, a bf16 C
    ("nvidia:sm_90", "float32", BIG_GEMM, {}, "dtype_bytes <= 2"),
    # K splits, reduced in the kernel (few tiles, long K)
    ("nvidia:sm_90", "bfloat16", {"M": 256, "N": 256, "K": 16384}, {"SPLIT_K": 2, "BLOCK_M": 128}, None),
    ("nvidia:sm_90", "bfloat16", {"M": 4096, "N": 4100, "K": 4096}, {}, "N * dtype_bytes % 16"),  # 8200-byte rows
    ("nvidia:sm_90", "bfloat16", BIG_GEMM, {"BLOCK_M": 64}, "BLOCK_M % (16 * num_warps)"),  # 8 warps need 128 rows
    ("nvidia:sm_90", "bfloat16", BIG_GEMM, {"BLOCK_M": 256}, "// (32 * num_warps) <= 128"),  # accumulator registers
    ("nvidia:sm_90", "bfloat16", BIG_GEMM, {"num_stages": 4}, "<= smem_bytes"),  # 4 x 48 KiB ring + 64 KiB C tile
    # the C tile in slices: 4 x 48 KiB ring + a 16 KiB slice (fp8: 4 x 48 KiB + 16 KiB of bf16); 3 stages, 2 slices
    ("nvidia:sm_90", "bfloat16", BIG_GEMM, {"num_stages": 4, "EPILOGUE_N": 64}, None),
    ("nvidia:sm_90", "float8_e4m3", BIG_GEMM, {"BLOCK_K": 128, "num_stages": 4, "EPILOGUE_N": 64}, None),
    ("nvidia:sm_90", "bfloat16", {"M": 1000, "N": 1000, "K": 1000}, {"EPILOGUE_N": 128}, None),
])
def test_constraints_keep_the_gluon_variant_to_points_it_can_run(target, dtype, shape, change, rule):
    broken = _first_broken_constraint("matmul", dtype, shape, target, {**POINT, **change})
    if rule is None:
        assert broken is None
    else:
        assert broken is not None and "GLUON == 0" in broken and rule in broken, broken


@pytest.mark.parametrize("target,change", [
    ("nvidia:sm_90", {"GLUON": 0, "EPILOGUE_N": 64}),  # the TMA kernel stores its tile whole
    ("nvidia:sm_90", {"BLOCK_N": 128, "EPILOGUE_N": 256}),  # a slice wider than the tile
    ("nvidia:sm_90", {"EPILOGUE_N": 96}),  # slices that do not divide the tile
    ("amd:gfx942", {"UNITS": 304, "TMA": 0, "PROGRAMS_PER_UNIT": 0, "BLOCK_N": 128, "num_warps": 4,
                    "num_stages": 2, "EPILOGUE_N": 64}),  # the AMD Gluon kernel stores from registers
])
def test_epilogue_slices_are_the_hopper_gluon_kernels_alone(target, change):
    """EPILOGUE_N narrower than BLOCK_N only where sm_90's Gluon kernel stores its C tile in slices, and
    only slices that divide the tile: elsewhere the knob would change nothing but the trial's name."""
    point = {**POINT, **change}
    broken = _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, target, point)
    assert broken is not None and broken.startswith("EPILOGUE_N == BLOCK_N or"), broken
    assert _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, target,
                                    {**point, "EPILOGUE_N": point["BLOCK_N"]}) is None


@pytest.mark.parametrize("regs", [24, 40, 88])
def test_the_register_split_reaches_the_binary(regs):
    """PRODUCER_REGS is the producer warp's register budget (setmaxnreg), and the two consumer warpgroups
    get what is left of the SM's 64K registers: 240 a thread at 24, 232 at 40 (the default), 208 at 88."""
    import re

    from tests.test_library_compute import _sm90_ptx

    ptx = _sm90_ptx("matmul", BIG_GEMM, {**GLUON, "BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "PRODUCER_REGS": regs},
                    {"num_warps": 8, "num_stages": 3})
    budgets = {int(n) for n in re.findall(r"setmaxnreg\.(?:inc|dec)\.sync\.aligned\.u32\s+(\d+);", ptx)}
    consumers = (65536 - 128 * regs) // 256 // 8 * 8
    assert regs in budgets and consumers in budgets  # (each consumer warpgroup's, the producer's)
    assert not budgets - {24, regs, consumers, 240}  # nothing else: 24 and 240 are Gluon's idle and default warps


@pytest.mark.parametrize("target,change", [
    ("nvidia:sm_90", {"GLUON": 0, "PRODUCER_REGS": 24}),  # the TMA kernel has no producer warp
    ("amd:gfx942", {"UNITS": 304, "TMA": 0, "PROGRAMS_PER_UNIT": 0, "BLOCK_N": 128, "num_warps": 4,
                    "num_stages": 2, "EPILOGUE_N": 128, "PRODUCER_REGS": 88}),  # nor the AMD Gluon kernel
])
def test_the_register_split_is_the_hopper_gluon_kernels_alone(target, change):
    point = {**POINT, **change}
    broken = _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, target, point)
    assert broken is not None and broken.startswith("PRODUCER_REGS == 40 or"), broken
    assert _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, target, {**point, "PRODUCER_REGS": 40}) is None
    hopper_gluon = {**POINT, "PRODUCER_REGS": 88}
    assert _first_broken_constraint("matmul", "bfloat16", BIG_GEMM, "nvidia:sm_90", hopper_gluon) is None


@pytest.mark.parametrize("recipe,sliced", [("matmul", {64}), ("matmul_fp8", {64, 128})])
def test_seeds_keep_their_whole_c_tile_unless_they_name_slices(recipe, sliced, tmp_path):
    """A library recipe with EPILOGUE_N added to its nvidia table, widest first (the recipes leave it out:
    docs/library.md): a seed that leaves the knob out is completed with its whole tile, as it ran before
    the knob existed; the 4-stage seeds with 64-column slices fit where their ring does (BLOCK_K 128 only
    in fp8). Without the knob those seeds are not enqueued and the others complete as before."""
    text = (ROOT / "recipes" / f"{recipe}.toml").read_text()
    path = tmp_path / f"{recipe}.toml"
    path.write_text(text.replace("\nGLUON = [0, 1]", "\nGLUON = [0, 1]\nEPILOGUE_N = [256, 128, 64]", 1))
    for r, knob in ((load_recipe(path), True), (load_recipe(ROOT / "recipes" / f"{recipe}.toml"), False)):
        shape, spec = r.problem.shapes[0], target_spec("nvidia:sm_90")
        info = inspect_module("matmul", r.problem.dtype, [shape])
        space = build_space(r, info["space"], info["constraints"], spec, set(shape))
        env_of = lambda point: constraint_env(point, shape, spec.properties, DTYPES[r.problem.dtype])  # noqa: E731,B023
        completed = [(seed, space.completion(seed, env_of)) for seed in info["seeds"]]
        if knob:
            for seed, full in completed:
                assert full is None or full["EPILOGUE_N"] == seed.get("EPILOGUE_N", full["BLOCK_N"]), (seed, full)
            assert {seed["BLOCK_K"] for seed, full in completed if full is not None and "EPILOGUE_N" in seed} == sliced
        else:
            assert all(full is None for seed, full in completed if "EPILOGUE_N" in seed)
            assert any(full is not None and full.get("GLUON") == 1 for seed, full in completed)


STATIC_RECIPE = """
[kernel]
generator = "templates"
name = "matmul"

[problem]
dtype = "bfloat16"
shapes = [{M = 256, N = 256, K = 256}]

[search]
trials = 2
[search.space]
BLOCK_M = [128]
BLOCK_N = [128]
BLOCK_K = [64]
GROUP_M = [8]
SPLIT_K = [1]
PROGRAMS_PER_UNIT = [1]
UNITS = [132]
TMA = [1]
GLUON = [0, 1]
num_warps = [4]
num_stages = [4]
"""


def test_static_mode_cross_compiles_a_gluon_point_but_never_lets_it_win(write, tmp_path):
    """The CPU interpreter cannot run a Gluon kernel: the point is cross-compiled (its resources are
    recorded) and then recorded `interpreter`, never `ok`; the TMA point beside it wins, verified."""
    result = kt("tune", write("mm.toml", STATIC_RECIPE), "--target", "nvidia:sm_90", "--out", tmp_path / "art")
    assert result.exit_code == 0, result.output
    check_static_gluon_point(tmp_path / "art" / "matmul.kt", "matmul_gluon_kernel", 8 * 32)


def test_a_verification_launch_of_the_gluon_kernel_on_the_cpu_is_the_interpreters_failure():
    """128x128x64 takes the descriptors, so the launch calls the Gluon kernel: under the interpreter
    that is an `interpreter` failure naming the kernel, not a `crash` ("0 active drivers")."""
    from kt_cli.evaluate.failure import WorkerFailure
    from tests.kernel_checks import verify

    params = {**GLUON, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "num_stages": 2}
    with pytest.raises(WorkerFailure) as failure:
        verify("matmul", "bfloat16", params, [{"M": 128, "N": 128, "K": 64}])
    assert failure.value.kind == "interpreter" and "matmul_gluon_kernel" in failure.value.message
