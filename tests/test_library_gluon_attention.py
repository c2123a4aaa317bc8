"""The library attention's Gluon variant (FlashAttention-3 style, warp-specialized, sm_90): it cross-compiles
for sm_90 through kt's own path on a machine without a GPU, with Triton 3.6 to 3.9, its constraints keep
it to the points it can run, and static mode, whose CPU interpreter cannot run a Gluon kernel, never
lets it win unverified."""

import re

import pytest

from tests.helpers import kt
from tests.kernel_checks import check_static_gluon_point, compile_for, stop_workers
from tests.test_library_compute import _first_broken_constraint


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    stop_workers()


H100_SHARED = 232448  # 227 KiB: what one program may take on an H100
GLUON = {"TMA": 1, "GLUON": 1}
CAUSAL_128 = {"B": 4, "H": 32, "H_KV": 32, "S": 4096, "D": 128, "CAUSAL": 1}


@pytest.mark.parametrize("shape,tiles", [
    # two consumer warpgroups, 128 x 128 blocks (no softmax overlap: too many registers)
    (CAUSAL_128, {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 2}),
    # full attention at D = 64, 64-key blocks that overlap the softmax with the next Q K^T, 3 stages
    ({"B": 4, "H": 32, "H_KV": 32, "S": 4096, "D": 64}, {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8,
                                                          "num_stages": 3}),
    # two independent consumer warpgroups of 64 rows (D = 64 over 64-key blocks: serial steps), 3 stages
    ({"B": 4, "H": 32, "H_KV": 32, "S": 4096, "D": 64, "CAUSAL": 1}, {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4,
                                                                       "num_stages": 3}),
    # two consumers at D = 128 taking turns at the tensor cores, full attention
    ({"B": 4, "H": 32, "H_KV": 32, "S": 4096, "D": 128}, {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4,
                                                          "num_stages": 3}),
    # two consumers, full attention, S ragged, 32-key blocks in a ring of 4
    ({"B": 2, "H": 8, "H_KV": 2, "S": 1000, "D": 64}, {"BLOCK_M": 128, "BLOCK_N": 32, "num_warps": 4,
                                                       "num_stages": 4}),
    # one consumer warpgroup, grouped-query, S ragged (1000 = 15 x 64 + 40)
    ({"B": 2, "H": 8, "H_KV": 2, "S": 1000, "D": 128, "CAUSAL": 1}, {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4,
                                                                      "num_stages": 2}),
    # S shorter than one tile, D = 16 (the verification shapes' head dims)
    ({"B": 1, "H": 4, "H_KV": 2, "S": 37, "D": 16, "CAUSAL": 1}, {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4,
                                                                   "num_stages": 2}),
])
def test_gluon_attention_cross_compiles_for_hopper_with_sane_resources(shape, tiles):
    out = compile_for("attention", "nvidia:sm_90", shape, "bfloat16", {**GLUON, **tiles})
    res = out["resources"]
    # the consumer warps (16 query rows each, in one or two partitions) plus the producer's warpgroup (one
    # warp working, its warpgroup allocated)
    assert res["threads"] == (tiles["BLOCK_M"] // 16 + 4) * 32
    tile_bytes = (tiles["BLOCK_M"] + 2 * tiles["BLOCK_N"] * tiles["num_stages"]) * shape["D"] * 2
    assert tile_bytes < res["shared_bytes"] <= min(H100_SHARED, tile_bytes + 1024)  # Q, the ring, the barriers
    assert res["spill_bytes"] == 0 and 0 < res["registers"] <= 255
    blocks = -(-shape["S"] // tiles["BLOCK_M"])
    assert (out["programs"], out["launches"]) == (blocks * shape["B"] * shape["H"], 1)
    assert out["estimate"]["seconds"] > 0


POINT = {**GLUON, "BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 2}


@pytest.mark.parametrize("target,dtype,shape,change,rule", [
    ("nvidia:sm_90", "bfloat16", CAUSAL_128, {}, None),
    ("nvidia:sm_90", "float16", {**CAUSAL_128, "H_KV": 8}, {"BLOCK_N": 64, "num_stages": 3}, None),
    ("nvidia:sm_80", "bfloat16", CAUSAL_128, {"TMA": 0}, "wgmma == 1"),  # no wgmma before Hopper
    ("nvidia:sm_100", "bfloat16", CAUSAL_128, {}, "wgmma == 1"),  # nor after it (tcgen05)
    ("amd:gfx90a", "bfloat16", CAUSAL_128, {"TMA": 0, "BLOCK_N": 64}, "wgmma == 1"),  # (gfx942: AMD's own)
    ("nvidia:sm_90", "float32", {**CAUSAL_128, "D": 64}, {"BLOCK_N": 64}, "dtype_bytes == 2"),
    ("nvidia:sm_90", "bfloat16", CAUSAL_128, {"TMA": 0}, "TMA == 1"),
    # 8 warps (two warpgroups, 16 rows a warp) take 128 rows
    ("nvidia:sm_90", "bfloat16", CAUSAL_128, {"BLOCK_M": 64, "BLOCK_N": 64}, "BLOCK_M % (16 * num_warps)"),
    ("nvidia:sm_90", "bfloat16", CAUSAL_128, {"num_stages": 1}, "num_stages >= 2"),
    # two consumer partitions only of one warpgroup each; at D = 128 or with 128-key blocks their wgmma are
    # serialised, and they are still searched (the fastest measured at D = 128 on an H200)
    ("nvidia:sm_90", "bfloat16", CAUSAL_128, {"BLOCK_M": 256}, "BLOCK_M == 16 * num_warps"),
    ("nvidia:sm_90", "bfloat16", CAUSAL_128, {"num_warps": 4}, None),
    ("nvidia:sm_90", "bfloat16", {**CAUSAL_128, "D": 64}, {"num_warps": 4}, None),
    ("nvidia:sm_90", "bfloat16", {**CAUSAL_128, "D": 64}, {"num_warps": 4, "BLOCK_N": 64, "num_stages": 3}, None),
    ("nvidia:sm_90", "bfloat16", {**CAUSAL_128, "D": 256}, {}, "// (32 * num_warps) <= 160"),  # registers
    ("nvidia:sm_90", "bfloat16", CAUSAL_128, {"num_stages": 4}, "<= smem_bytes"),  # Q + 4 x 64 KiB of K and V
])
def test_constraints_keep_the_gluon_attention_to_points_it_can_run(target, dtype, shape, change, rule):
    broken = _first_broken_constraint("attention", dtype, shape, target, {**POINT, **change})
    if rule is None:
        assert broken is None
    else:
        assert broken is not None and "GLUON == 0" in broken and rule in broken, broken


def test_two_consumer_warpgroups_are_partitions_of_their_own_sharing_the_ring():
    """BLOCK_M = 128 on 4 warps: two consumer partitions (the default one and a worker) with the same
    registers, the producer's warpgroup with fewer; every K and V stage's `empty` barrier waits for both
    consumers, the `ready` ones for the TMA alone, and Q's `ready` and `empty`, O's and each consumer's
    turn at the tensor cores for one arrival."""
    from tests.test_library_compute import _sm90_ptx

    stages = 3
    ptx = _sm90_ptx("attention", {"B": 1, "H": 2, "H_KV": 1, "S": 300, "D": 64, "CAUSAL": 1},
                    {**GLUON, "BLOCK_M": 128, "BLOCK_N": 64}, {"num_warps": 4, "num_stages": stages})
    inits = re.findall(r"mbarrier\.init\.shared::cta\.b64 \[%r\d+\], (\d+);", ptx)
    assert sorted(inits) == sorted(["1"] * (5 + 2 * stages) + ["2"] * (2 * stages))
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+192;", ptx)  # consumer 0
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+192;", ptx)  # consumer 1
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+120;", ptx)  # the producer


def test_the_tma_and_pointer_points_keep_their_constraints():
    """GLUON = 0 points are judged as before: the Gluon rules hold for them whatever their tiles."""
    for target, tma in (("nvidia:sm_90", 1), ("nvidia:sm_80", 0), ("amd:gfx942", 0)):
        point = {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 1, "TMA": tma, "GLUON": 0}
        assert _first_broken_constraint("attention", "bfloat16", CAUSAL_128, target, point) is None


STATIC_RECIPE = """
[kernel]
generator = "templates"
name = "attention"

[problem]
dtype = "bfloat16"
shapes = [{B = 1, H = 2, H_KV = 1, S = 80, D = 64, CAUSAL = 1}]

[search]
trials = 2
[search.space]
BLOCK_M = [64]
BLOCK_N = [32]
num_warps = [4]
num_stages = [2]
TMA = [1]
GLUON = [0, 1]
"""


def test_static_mode_cross_compiles_a_gluon_attention_point_but_never_lets_it_win(write, tmp_path):
    """The CPU interpreter cannot run a Gluon kernel: the point is cross-compiled (its resources are
    recorded) and then recorded `interpreter`, never `ok`; the TMA point beside it wins, verified."""
    result = kt("tune", write("att.toml", STATIC_RECIPE), "--target", "nvidia:sm_90", "--out", tmp_path / "art")
    assert result.exit_code == 0, result.output
    check_static_gluon_point(tmp_path / "art" / "attention.kt", "attention_gluon_kernel", 8 * 32)


def test_a_verification_launch_of_the_gluon_attention_on_the_cpu_is_the_interpreters_failure():
    """16-bit tensors the TMA takes: the launch calls the Gluon kernel, under the interpreter an
    `interpreter` failure naming it, not a `crash`."""
    from kt_cli.evaluate.failure import WorkerFailure
    from tests.kernel_checks import verify

    params = {**GLUON, "BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2}
    with pytest.raises(WorkerFailure) as failure:
        verify("attention", "bfloat16", params, [{"B": 1, "H": 2, "H_KV": 1, "S": 40, "D": 32, "CAUSAL": 1}])
    assert failure.value.kind == "interpreter" and "attention_gluon_kernel" in failure.value.message
