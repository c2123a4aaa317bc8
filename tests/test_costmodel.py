"""The static cost model: the features it reads from compiled code, what separates configs a roofline
ties, and the calibration laid over a target's table. Its ranking quality on real measurements is
tests/test_costmodel_rank.py."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math

import pytest

from kt_cli import calibration, plugins
from kt_cli.evaluate.estimate import Work, bytes_in_flight, estimate_seconds
from kt_cli.types import Resources
from kt_cli.vendor import LoadPhases, innermost_mma_loop
from tests.helpers import SCALED_ADD, dsl_recipe, kt
from tests.test_library_mem import compile_for

H100 = plugins.target("nvidia:sm_90")
STREAM = Work(flops=0.0, unique_bytes=2 * 2**30, requested_bytes=2 * 2**30)


def resources(threads=128, per_unit=8, shared=0):
    return Resources(registers=32, shared_bytes=shared, threads=threads, programs_per_unit=per_unit,
                     occupancy=per_unit * threads / 2048)


def seconds(work=STREAM, res=None, programs=132 * 64, mix=None, dtype="bfloat16"):
    return estimate_seconds(work, dtype, H100.peaks, H100.properties, res or resources(), programs, 1,
                            mix or {"global_load_bytes": 16})["seconds"]


def test_a_memory_bound_kernel_speeds_up_with_bytes_in_flight_until_dram_is_saturated():
    # 16 bytes a thread, two programs a unit: latency-bound; four times as many bytes a thread, or four
    # times as many programs a unit, moves the same bytes more than twice as fast
    two = resources(per_unit=2)
    narrow = seconds(res=two, mix={"global_load_bytes": 16})
    assert seconds(res=two, mix={"global_load_bytes": 64}) < narrow / 2
    assert seconds(res=resources(per_unit=8), mix={"global_load_bytes": 16}) < narrow / 2
    # far past what DRAM needs, more in flight changes nothing (the knee's bend is gone this far past the
    # corner): the roofline's DRAM time
    saturated = [seconds(mix={"global_load_bytes": b}) for b in (1024, 4096)]
    assert saturated[0] == pytest.approx(saturated[1], rel=1e-4)
    assert saturated[0] == pytest.approx(STREAM.unique_bytes / (H100.peaks["dram_bytes_per_s"]
                                                                 * H100.properties.get("dram_attainable", 0.9)),
                                         rel=0.05)


def test_a_wave_tail_costs_a_whole_program_time():
    one_wave = seconds(programs=132, res=resources(per_unit=1), mix={"global_load_bytes": 4096})
    tail = seconds(programs=133, res=resources(per_unit=1), mix={"global_load_bytes": 4096})
    assert tail > 1.8 * one_wave


def test_a_last_round_of_a_program_a_unit_streams_alone_at_its_own_loads_in_flight():
    # gemv 9728 x 24576 on an H200 (results/s43/holdout_n): 1216 programs of 8 x 512 tiles on 2 warps, 9 at once a
    # unit, measured 166.6 us against 120-123 us for configs whose grids fill their rounds (the model had 150):
    # a unit's tenth program runs after the nine, alone, at what its own loads in flight sustain, not at a
    # ninth of a round's time
    nine = resources(threads=64, per_unit=9)
    row_block = 8 * 24576 * 2.0

    def rounds_of(programs):
        work = Work(flops=0.0, unique_bytes=row_block * programs, requested_bytes=row_block * programs)
        return seconds(work, nine, programs=programs, mix={"global_load_bytes": 144})

    full, one_more = rounds_of(132 * 9), rounds_of(132 * 10)
    assert one_more > 1.3 * full  # a share of the round would be 10/9
    assert rounds_of(132 * 18) == pytest.approx(2 * full, rel=0.02)  # rounds of nine cost a round each


def test_a_persistent_grid_pays_the_tiles_its_busiest_unit_walks_past_the_average():
    # 3072^3 bf16 on 132 persistent programs: 288 tiles of 128x256 leave one unit 3 where the average is
    # 2.18; 576 tiles of 128x128 leave 5 against 4.36. Math-bound, the GPU runs the even split faster
    # (an H200, results/s33/call4); a grid of a program per tile pays the same through its waves
    n, mix = 3072, {"async_copy": 8, "mma": 4, "mma_warpgroup": 4}
    res = resources(threads=256, per_unit=1, shared=96 * 1024)

    def persistent(tiles):
        work = Work(2 * n**3, 3 * n * n * 2, 3 * n * n * 2, items=tiles)
        return estimate_seconds(work, "bfloat16", H100.peaks, H100.properties, res, 132, 1, mix)["math_s"]

    assert persistent(288) / persistent(576) == pytest.approx((3 / 2.18) / (5 / 4.36), rel=0.01)
    per_tile = estimate_seconds(Work(2 * n**3, 3 * n * n * 2, 3 * n * n * 2), "bfloat16", H100.peaks,
                                H100.properties, res, 288, 1, mix)["math_s"]
    assert persistent(288) == pytest.approx(per_tile)


def test_a_warp_specialized_kernels_loads_wait_on_its_producer_warp_only():
    # sm_90's Gluon attention: 12 warps (two consumer warpgroups and a producer) and ~2900 instructions. Its
    # TMA loads are issued by one producer warp, so the consumers' instructions do not hold them back; read
    # as if every warp loaded, its L2 term was 3-4x the Triton kernels' (H200, results/s34/call3)
    res = resources(threads=384, per_unit=1, shared=64 * 1024)
    mix = {"tma": 4, "mma": 48, "mma_warpgroup": 48, "total": 2900}
    work = Work(flops=2 * 8 * 12 * 4096**2 * 64 * 2, unique_bytes=4 * 8 * 12 * 4096 * 64 * 2,
                requested_bytes=8 * 12 * 4096 * 64 * 2 * (4096 // 128) * 2, stages=3)
    everyone = estimate_seconds(work, "bfloat16", H100.peaks, H100.properties, res, 8 * 12 * 32, 1, mix)
    producer = estimate_seconds(dataclasses.replace(work, load_warps=1), "bfloat16", H100.peaks, H100.properties,
                                res, 8 * 12 * 32, 1, mix)
    assert producer["l2_s"] < everyone["l2_s"] / 2
    assert producer["math_s"] == everyone["math_s"]


def test_the_library_declares_its_producer_warp_for_the_warp_specialized_variant_only():
    for name in ("matmul", "attention"):
        module = importlib.import_module(f"kt_templates.kernels.{name}")
        assert module.load_warps({}, None, {"GLUON": 1, "TMA": 1}) == 1.0
        assert module.load_warps({}, None, {"GLUON": 1, "TMA": 0}) == 0.0  # AMD's Gluon kernels
        assert module.load_warps({}, None, {"GLUON": 0, "TMA": 1}) == 0.0


def test_warpgroup_mma_beats_warp_mma_and_both_beat_the_vector_units():
    gemm = Work(flops=2 * 8192**3, unique_bytes=3 * 8192**2 * 2, requested_bytes=3 * 8192**2 * 2)
    res = resources(threads=256, per_unit=1, shared=160 * 1024)
    times = {kind: seconds(gemm, res, programs=4096, mix={"async_copy": 8, **mix})
             for kind, mix in (("warpgroup", {"mma": 4, "mma_warpgroup": 4}), ("warp", {"mma": 64}), ("none", {}))}
    assert times["warpgroup"] < times["warp"] < times["none"]


def test_a_lone_warpgroup_between_its_mma_passes_leaves_the_tensor_cores_idle():
    # one pass of the main loop: 4 MMAs of 64x256x16 (2 MFLOP), 50 other instructions; on one warpgroup
    # a unit the pass's other instructions run between its MMAs, on two another group's MMAs fill them
    gemm = Work(flops=2 * 4096**3, unique_bytes=3 * 4096**2 * 2, requested_bytes=3 * 4096**2 * 2)
    loop = {"mma": 4, "mma_warpgroup": 4, "tma": 4, "loop_instructions": 54, "loop_mmas": 4,
            "loop_mma_flops": 4 * 2 * 64 * 256 * 16, "mma_group_warps": 4}
    one = seconds(gemm, resources(threads=128, per_unit=1, shared=200 * 1024), programs=132, mix=loop)
    two = seconds(gemm, resources(threads=256, per_unit=1, shared=200 * 1024), programs=132, mix=loop)
    unread = estimate_seconds(gemm, "bfloat16", H100.peaks, H100.properties,
                              resources(threads=128, per_unit=1, shared=200 * 1024), 132, 1,
                              {k: v for k, v in loop.items() if not k.startswith(("loop_", "mma_group"))})
    two_terms = estimate_seconds(gemm, "bfloat16", H100.peaks, H100.properties,
                                 resources(threads=256, per_unit=1, shared=200 * 1024), 132, 1, loop)
    assert one > 1.2 * two
    # no loop read from the code: the math term as it was (and no tile fill, which needs the MMA loop)
    assert two_terms["math_s"] - two_terms["tile_fill_s"] == pytest.approx(unread["math_s"])
    assert unread["tile_fill_s"] == 0
    # a pass with ten times the MMAs hides the same instructions behind them
    long = {**loop, "loop_mma_flops": 10 * loop["loop_mma_flops"], "loop_mmas": 40, "loop_instructions": 90}
    assert seconds(gemm, resources(threads=128, per_unit=1, shared=200 * 1024), programs=132, mix=long) < one


def test_warpgroups_held_in_lockstep_by_a_barrier_issue_their_loops_other_instructions_beside_no_mma():
    # two warpgroups a unit, one pass: 4 MMAs of 64x256x16 and 92 other instructions (Triton's pointer GEMM
    # on an H200: addresses, LDGSTS, the stage's waits). Free to interleave, one group's MMAs hide the other's
    # instructions; synced each pass by a BAR.SYNC, the schedulers issue all 8 warps' other instructions while
    # no MMA runs (the held-out H200 runs: the pointer kernel 6-7% slower than the TMA kernel of its tile, 80
    # instructions a pass, in all six such pairs; the model had tied them)
    gemm = Work(flops=2 * 4096**3, unique_bytes=3 * 4096**2 * 2, requested_bytes=3 * 4096**2 * 2)
    res = resources(threads=256, per_unit=1, shared=200 * 1024)

    def pass_of(other: int, barriers: int, warps: int = 0) -> dict:
        loop = {"mma": 4, "mma_warpgroup": 4, "loop_instructions": other + 4, "loop_mmas": 4,
                "loop_mma_flops": 4 * 2 * 64 * 256 * 16, "mma_group_warps": 4}
        synced = {"loop_barriers": barriers, "loop_barrier_warps": warps} if barriers else {}
        return estimate_seconds(gemm, "bfloat16", H100.peaks, H100.properties, res, 132, 1, {**loop, **synced})

    free, synced = pass_of(92, 0), pass_of(92, 1)
    assert free["mma_issue_factor"] == 1.0
    clock, units = H100.properties["clock_hz"], H100.properties["units"]
    mma_s = 2 * 4 * 2 * 64 * 256 * 16 / (H100.peaks["bfloat16"] * H100.properties["math_attainable"] / units)
    assert synced["mma_issue_factor"] == pytest.approx(1 + 92 * 8 / 4 / clock / mma_s)
    assert synced["math_s"] > free["math_s"]
    assert pass_of(76, 1)["seconds"] < synced["seconds"]  # TMA's pass: fewer instructions, faster
    # (position, FLOPs, branch target, shared bytes, warps a barrier waits for: 0 the whole workgroup)
    loop = innermost_mma_loop([(0, 0, None, 0, 0), (1, 8, None), (2, 0, None, 0, None), (3, 0, 0, 0, None)])
    assert (loop["loop_barriers"], loop["loop_barrier_warps"]) == (1, 0)
    assert "loop_barriers" not in innermost_mma_loop([(0, 0, None, 0, 0), (1, 8, None), (2, 0, 1)])
    # two partitions of one warpgroup each, each syncing itself (BAR.SYNC 0x0, 0x80): they take turns at the
    # tensor cores, one issuing its other instructions while the other's MMAs run
    turns = pass_of(92, 1, warps=4)
    assert turns["mma_issue_factor"] == pytest.approx(max(1, (1 + 92 * 8 / 4 / clock / mma_s) / 2))
    assert turns["seconds"] < synced["seconds"]


def test_a_barrier_says_how_many_warps_it_waits_for_and_a_branch_back_is_a_loop_only_when_conditional():
    from vendor_nvidia.plugin import barrier_warps

    assert barrier_warps(".SYNC.DEFER_BLOCKING", " 0x0, 0x80") == 4  # a Gluon partition of one warpgroup
    assert barrier_warps(".SYNC.DEFER_BLOCKING", " 0x0") == 0  # the whole CTA
    assert barrier_warps(".SYNC", " 0x1, R3") == 0  # a count in a register: taken as the whole CTA
    assert barrier_warps(".ARV", " 0x1, 0x100") is None  # an arrival waits for nothing
    # an mbarrier wait's retry, placed after the kernel's exit, jumps back into the code it left without a
    # condition: with it read as a loop, the Gluon attention's "main loop" was a span holding 8 of a pass's 12
    # MMAs (sm_90, D = 64, 128 x 128 tiles on two consumer warpgroups)
    mix = compile_for("attention", "nvidia:sm_90", {"B": 4, "H": 28, "H_KV": 28, "S": 2560, "D": 64}, "bfloat16",
                      {"BLOCK_M": 128, "BLOCK_N": 128, "GLUON": 1, "TMA": 1, "num_warps": 4, "num_stages": 2})
    mix = mix["instructions"]
    # a pass: Q K^T (64 x 128 x 64, 4 wgmma) and P V (64 x 64 x 128, 8 wgmma) of one consumer
    assert mix["loop_mmas"] == 12 and mix["loop_mma_flops"] == 2 * (2 * 64 * 128 * 64)
    assert mix["loop_barrier_warps"] == 4  # each consumer syncs itself: the two take turns


def test_a_tile_waits_for_its_first_loads_unless_producer_warps_or_another_program_fill_the_gap():
    # 4096^2 x 4096 bf16 on 128x128 tiles, one persistent program a unit walking 1024 tiles (8 on the busiest):
    # with its warps both loading and computing, each tile's first loads are a loaded L2 round trip the MMAs
    # wait for (measured 1.58-1.60 us a tile outside the K loop on an H200, 0.44 us for the warp-specialized
    # kernel: results/s39/tile_fill)
    gemm = Work(flops=2 * 4096**3, unique_bytes=3 * 4096**2 * 2, requested_bytes=3 * 4096**2 * 2, items=1024)
    loop = {"mma": 4, "mma_warpgroup": 4, "tma": 4, "loop_instructions": 54, "loop_mmas": 4,
            "loop_mma_flops": 4 * 2 * 64 * 128 * 16, "mma_group_warps": 4}

    def fill(work, per_unit, mix=loop):
        res = resources(threads=256, per_unit=per_unit, shared=160 * 1024)
        return estimate_seconds(work, "bfloat16", H100.peaks, H100.properties, res, 132 * per_unit, 1, mix)["tile_fill_s"]

    assert fill(gemm, 1) == pytest.approx(8 * H100.properties["l2_latency_s"])
    assert fill(dataclasses.replace(gemm, load_warps=1), 1) == 0  # a producer warp loads the next tile meanwhile
    assert fill(gemm, 2) == 0  # two programs a unit: the other's MMAs run while one waits
    assert fill(gemm, 1, {k: v for k, v in loop.items() if not k.startswith("loop_")}) == 0  # no MMA loop read


def test_a_skinny_gemms_tile_rereads_hit_l2_because_its_wave_shares_each_pass():
    # 768x8192x8192 bf16 on 128x256 tiles, one program of two warpgroups a unit: whole tiles of one wave
    # would hold 109 MB, past the H100's 50 MB L2, but programs sharing A's rows and B's columns read them
    # at about the same K step: Nsight Compute counted 159 MB read from DRAM for its 147 MB of operands
    # (H200, results/s33/call1). With its main loop read from the code the re-reads cost no DRAM time; without
    # it, the model charges them as misses.
    m, n, k = 768, 8192, 8192
    unique = 2 * (m * k + k * n + m * n)
    gemm = Work(flops=2 * m * n * k, unique_bytes=unique, requested_bytes=2 * (m * k * n / 256 + k * n * m / 128)
                + 2 * m * n, items=(m // 128) * (n // 256), written_bytes=2 * m * n)
    res = resources(threads=256, per_unit=1, shared=200 * 1024)
    mix = {"mma": 8, "mma_warpgroup": 8, "async_copy": 8, "loop_instructions": 120, "loop_mmas": 8,
           "loop_mma_flops": 8 * 2 * 64 * 256 * 16, "mma_group_warps": 4}
    terms = estimate_seconds(gemm, "bfloat16", H100.peaks, H100.properties, res, 192, 1, mix)
    blind = estimate_seconds(gemm, "bfloat16", H100.peaks, H100.properties, res, 192, 1,
                             {k: v for k, v in mix.items() if not k.startswith(("loop_", "mma_group"))})
    assert terms["bound"] != "dram" and blind["bound"] == "dram"
    assert blind["dram_s"] > 3 * terms["dram_s"] and blind["seconds"] > 1.3 * terms["seconds"]


def test_a_program_walking_its_rows_one_after_another_has_one_rows_loads_in_flight():
    # 32768 rows of 4096 bf16 (a row kernel, read once, written once), 8 rows a program on 16 warps: its
    # static loads span 48 KB (a masked 8192-wide block, weights read after the reduction), but a row ends
    # in a reduction across its warps and stores before the next row's loads: 8 KB in flight a program
    rows = Work(flops=0.0, unique_bytes=2 * 32768 * 4096 * 2, requested_bytes=2 * 32768 * 4096 * 2,
                written_bytes=32768 * 4096 * 2)
    walked = Work(**{**rows.__dict__, "items": 32768.0})  # work_items: the rows
    mix = {"global_load_bytes": 96}  # bytes a thread, 512 threads
    calibrated = {**H100.properties, "dram_latency_s": 2.2e-6}  # the loaded latency an H100 calibrated (s27)

    def estimate(work, resident):
        return estimate_seconds(work, "bfloat16", H100.peaks, calibrated, resources(threads=512, per_unit=resident),
                                4096, 1, mix)

    for resident in (1, 2, 4):
        static, one_row = estimate(rows, resident), estimate(walked, resident)
        assert one_row["bytes_in_flight_per_unit"] == static["bytes_in_flight_per_unit"]  # the binary's, as read
        assert one_row["dram_s"] >= static["dram_s"]
    # one row in flight a program: fewer resident programs are slower, where the static width tied them
    by_resident = [estimate(walked, r)["seconds"] for r in (1, 2, 4)]
    assert by_resident[0] > 1.5 * by_resident[1] > 1.5 * by_resident[2]
    tied = [estimate(rows, r)["seconds"] for r in (1, 2, 4)]
    assert tied[0] == pytest.approx(tied[2], rel=0.01)
    assert by_resident[2] == pytest.approx(tied[2], rel=0.01)  # enough rows in flight: DRAM's bandwidth
    fill = Work(flops=0.0, unique_bytes=rows.written_bytes, requested_bytes=rows.written_bytes,
                written_bytes=rows.written_bytes, items=32768.0)  # only writes: no load to wait on
    assert estimate(fill, 1)["seconds"] > 0


def test_the_loop_of_the_mmas_is_the_smallest_backward_branch_holding_one():
    # (position, MMA FLOPs, branch target): an outer loop 0..9 around an MMA loop 2..6, and a later loop
    # with no MMA (a polling wait) that is smaller still
    code = [(0, 0, None), (1, 0, None), (2, 5, None), (3, 5, None), (4, 0, None), (5, 0, None), (6, 0, 2),
            (7, 0, None), (8, 0, None), (9, 0, 0), (10, 0, None), (11, 0, 10)]
    assert innermost_mma_loop(code) == {"loop_instructions": 5, "loop_mmas": 2, "loop_mma_flops": 10.0}
    assert innermost_mma_loop([(0, 5, None), (1, 0, None), (2, 0, 1)]) == {}  # no loop holds the MMA


def test_the_loop_of_the_mmas_carries_the_shared_memory_its_mmas_read():
    # (position, FLOPs, branch target, shared bytes): two 64x128x16 wgmma reading A and B from shared memory
    code = [(0, 0, None, 0), (1, 2 * 64 * 128 * 16, None, 6144), (2, 2 * 64 * 128 * 16, None, 6144), (3, 0, 0, 0)]
    assert innermost_mma_loop(code)["loop_mma_shared_bytes"] == 2 * 6144
    assert "loop_mma_shared_bytes" not in innermost_mma_loop([(0, 8, None), (1, 0, 0)])  # operands in registers


def test_a_wgmma_reads_b_from_shared_memory_and_a_unless_it_sits_in_registers():
    from vendor_nvidia.plugin import _MMA_SHAPE, wgmma_shared_bytes

    shape = _MMA_SHAPE.search(".64x128x16.F32.BF16")
    # both operands through one descriptor pair; A in registers R120.. (Gluon's and attention's P @ V)
    assert wgmma_shared_bytes("HGMMA", shape, "x128x16.F32.BF16 R24, gdesc[UR8].tnspB, R24, gsb0") == 32 * (64 + 128)
    assert wgmma_shared_bytes("HGMMA", shape, "x128x16.F32.BF16 R24, R120, gdesc[UR8].tnspB, R24") == 32 * 128
    fp8 = _MMA_SHAPE.search(".64x256x32.F32.E4M3.E4M3")  # k32 of one byte: the same 32-byte-deep slice
    assert wgmma_shared_bytes("QGMMA", fp8, "x256x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24") == 32 * (64 + 256)


def test_narrow_wgmma_tiles_wait_on_shared_memory_where_wide_ones_do_not():
    # the same GEMM on 128x64 tiles (each warpgroup's pass: 64-wide wgmma) and on 64x128 tiles (128-wide):
    # the same FLOPs, the same tile traffic staged by cp.async; a 64-wide wgmma reads a third more operand
    # bytes a FLOP (results/s36/call1: 128x64 measured 7-14% slower in six pairs the model had tied)
    n = 4096
    gemm = Work(flops=2 * n**3, unique_bytes=3 * n * n * 2, requested_bytes=2 * n**3 * (1 / 64 + 1 / 128))
    res = resources(threads=128, per_unit=3, shared=96 * 1024)

    def estimate(width, properties=H100.properties):
        loop = {"mma": 8, "mma_warpgroup": 8, "async_copy": 8, "loop_instructions": 80, "loop_mmas": 8,
                "loop_mma_flops": 8 * 2 * 64 * width * 16, "mma_group_warps": 4,
                "loop_mma_shared_bytes": 8 * 32 * (64 + width)}
        return estimate_seconds(gemm, "bfloat16", H100.peaks, properties, res, (n // 128) * (n // 64), 1, loop)

    narrow, wide = estimate(64), estimate(128)
    staged = gemm.requested_bytes
    assert (narrow["shared_s"] / wide["shared_s"]
            == pytest.approx((staged + gemm.flops / 32) / (staged + gemm.flops * 3 / 128)))
    assert narrow["shared_s"] > 1.1 * wide["shared_s"] and narrow["seconds"] > wide["seconds"]
    blind = {**H100.properties, "shared_bytes_per_clock": 0}  # a table without the figure: no term
    assert estimate(64, blind)["shared_s"] == 0 and estimate(64, blind)["seconds"] < narrow["seconds"]


def test_a_memorys_rate_bends_below_both_asymptotes_near_their_corner():
    from kt_cli.evaluate.estimate import memory_term, memory_time

    assert memory_time(3.0, 2.0, math.inf) == 3.0  # no knee measured: the roofline's corner
    assert memory_time(2.0, 2.0, 3.3) == pytest.approx(2.0 * 2 ** (1 / 3.3))  # at the corner: 23% slower
    assert memory_time(10.0, 1.0, 3.3) == pytest.approx(10.0, rel=0.001)  # far from it: the slower alone
    # a row kernel that writes what it reads: its loads at half the bandwidth are at their own corner, but
    # the bandwidth that all its bytes need bounds it, and the loads' queue is not charged on top
    assert memory_term(1.0, 2.0, 1.0, 1.0, 3.3) == pytest.approx(2.0, rel=0.05)
    assert memory_term(1.0, 1.0, 1.0, 1.0, 3.3) == pytest.approx(2 ** (1 / 3.3))


def test_the_calibration_fits_the_knee_its_own_sweep_shows():
    from kt_cli.evaluate.calibrate import fit_knee
    from kt_cli.evaluate.estimate import memory_time

    units, in_flight, latency, bandwidth = 132, 28672.0, 2e-6, 4e12
    sweep = [{"programs_per_unit": p,
              "bytes_per_s": 1.0 / memory_time(latency / (units * p * in_flight), 1 / bandwidth, 3.3)}
             for p in (1, 2, 4, 8, 16)]
    assert fit_knee(sweep, units, in_flight, latency, bandwidth) == pytest.approx(3.3, abs=0.05)


def test_a_persistent_grid_walking_the_same_tiles_is_estimated_like_one_program_per_tile():
    # 8192^3 in 128x256 tiles re-reads A and B 32 and 64 times; 132 persistent programs hold one tile
    # each at a time, as 2048 one-tile programs do, so the re-reads hit L2 in both (before work items,
    # the persistent grid's per-program share of the problem missed L2 and was estimated 2.5x slower)
    n, tiles = 8192, (8192 // 128) * (8192 // 256)
    requested = (n * n * (n // 256) + n * n * (n // 128)) * 2 + n * n * 2
    res = resources(threads=256, per_unit=1, shared=160 * 1024)
    mix = {"async_copy": 8, "mma": 4, "mma_warpgroup": 4}
    per_tile = seconds(Work(2 * n**3, 3 * n * n * 2, requested), res, programs=tiles, mix=mix)
    persistent = seconds(Work(2 * n**3, 3 * n * n * 2, requested, items=tiles), res, programs=132, mix=mix)
    unknown = seconds(Work(2 * n**3, 3 * n * n * 2, requested), res, programs=132, mix=mix)
    assert persistent == pytest.approx(per_tile, rel=0.1)
    assert unknown > 1.5 * persistent


def test_a_program_has_in_flight_only_the_loads_between_two_reductions_across_its_warps():
    mix: dict = {}
    phases = LoadPhases(mix)
    phases.load(16)
    phases.barrier()  # a layout change through shared memory: no shuffle before it, the phase goes on
    phases.load(16)
    phases.cross_lane()
    phases.barrier()  # a row's sum across warps: the loads after it wait for it
    for _ in range(4):
        phases.load(16)
    phases.close()
    assert mix == {"global_load_bytes": 96, "load_bytes_largest_phase": 64}
    # latency-bound (two programs a unit): the same loads split by a reduction take longer
    two = resources(per_unit=2)
    whole = seconds(res=two, mix={"global_load_bytes": 64})
    split = seconds(res=two, mix={"global_load_bytes": 64, "load_bytes_largest_phase": 16})
    assert split > 2 * whole


def test_stores_are_posted_so_only_the_loads_wait_on_latency():
    # a latency-bound copy: half its bytes are written; a kernel reading every byte takes longer
    two = resources(per_unit=2)
    copy = Work(flops=0.0, unique_bytes=STREAM.unique_bytes, requested_bytes=STREAM.unique_bytes,
                written_bytes=STREAM.unique_bytes / 2)
    assert seconds(copy, two) < 0.6 * seconds(STREAM, two)
    # at DRAM's rate, written bytes cost their share of the bandwidth like any others
    wide = {"global_load_bytes": 4096}
    assert seconds(copy, mix=wide) == pytest.approx(seconds(STREAM, mix=wide), rel=0.01)


def test_compiled_row_reductions_report_the_loads_of_their_largest_phase():
    # layer norm over a whole 32768-wide row: the row before its sums, the weights after them
    shape, row = {"M": 4096, "N": 32768}, {"BLOCK_N": 32768, "num_warps": 16, "num_stages": 1, "ROWS": 1,
                                           "ROW_STAGES": 1}
    for target in ("nvidia:sm_90", "amd:gfx942"):
        out = compile_for("layernorm", target, shape, "bfloat16", row)
        mix = out["instructions"]
        assert 0 < mix["load_bytes_largest_phase"] < mix["global_load_bytes"], (target, mix)
        assert out["work"]["written_bytes"] == 4096 * 32768 * 2  # the output y; mean and rstd are not stored


def test_compiled_kernels_report_their_loads_and_mma_kind():
    shape, dtype = {"M": 32768, "N": 4096}, "bfloat16"
    row = {"BLOCK_N": 4096, "num_warps": 4, "num_stages": 1, "ROWS": 1, "ROW_STAGES": 1}
    out = compile_for("softmax", "nvidia:sm_90", shape, dtype, row)
    # a 4096-wide bf16 row in one block: 8 KiB in flight a program, 16-byte loads on 128 threads
    assert bytes_in_flight(Resources(**out["resources"]), out["instructions"]) == 4096 * 2
    square = {"M": 4096, "N": 4096, "K": 4096}
    tile = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 0,
            "num_stages": 3, "num_warps": 8}
    hopper = compile_for("matmul", "nvidia:sm_90", square, dtype, tile)["instructions"]
    ampere = compile_for("matmul", "nvidia:sm_80", square, dtype, tile)["instructions"]
    assert hopper["mma_warpgroup"] > 0 and hopper["global_load_bytes"] > 0
    # its main loop, read from the SASS: each of the two warpgroups issues 64x128x16 HGMMAs over the 64
    # deep K slice of a pass (4 of them: 1 MFLOP a warpgroup a pass), beside the pass's other work
    assert hopper["loop_mma_flops"] == 4 * 2 * 64 * 128 * 16 and hopper["loop_mmas"] == 4
    assert hopper["loop_instructions"] > 4 * hopper["loop_mmas"] and hopper["mma_group_warps"] == 4
    assert hopper["loop_mma_shared_bytes"] == 4 * 32 * (64 + 128)  # A and B of each from shared memory
    assert hopper["loop_barriers"] >= 1  # the CTA syncs each pass (BAR.SYNC): its two warpgroups in lockstep
    assert ampere["mma"] > 0 and "mma_warpgroup" not in ampere
    for arch in ("gfx942", "gfx950"):  # MFMA and buffer/global loads from the AMDGCN Triton produced
        cdna = compile_for("matmul", f"amd:{arch}", square, dtype, tile)["instructions"]
        assert cdna["mma"] > 0 and cdna["global_load_bytes"] > 0 and "mma_warpgroup" not in cdna, arch
        # its main loop: 8 waves share the 128x128x64 tile of a pass, a group is a wave on each SIMD
        assert cdna["loop_mmas"] > 0 and cdna["mma_group_warps"] == 4, arch
        assert cdna["loop_mma_flops"] % (2 * 128 * 128 * 64 // 8 * 4) == 0, (arch, cdna["loop_mma_flops"])
        assert cdna["loop_barriers"] >= 1, arch  # s_barrier each pass, around the LDS tiles


def test_a_calibration_is_laid_over_its_target_and_a_broken_one_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("KT_CACHE_DIR", str(tmp_path))
    calibration.save({"target": "nvidia:sm_90", "device": "NVIDIA H100 80GB HBM3",
                      "constants": {"dram_latency_s": 4e-6, "l2_bytes_per_s": 9e12}})
    spec = plugins.target("nvidia:sm_90")
    assert spec.properties["dram_latency_s"] == 4e-6 and spec.properties["l2_bytes_per_s"] == 9e12
    slower = estimate_seconds(STREAM, "bfloat16", spec.peaks, spec.properties, resources(), 132 * 64, 1,
                              {"global_load_bytes": 16})["seconds"]
    assert slower > seconds()
    calibration.path_for("nvidia:sm_90").write_text("{not json")
    assert plugins.target("nvidia:sm_90").properties == H100.properties


def test_calibrate_without_a_gpu_is_one_line_and_exit_2(tmp_path, monkeypatch):
    monkeypatch.setenv("KT_CACHE_DIR", str(tmp_path))
    result = kt("devices", "--calibrate")
    assert result.exit_code == 2
    assert "--calibrate: no GPU present" in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "calibration").exists()


SEEDED_ADD = SCALED_ADD + '\nSEEDS = [{"BLOCK": b, "num_warps": 1} for b in (64, 128, 256)]\n'


def test_measured_tuning_prunes_candidates_the_model_estimates_far_slower(fake_device, write, tmp_path, monkeypatch):
    # Few large programs on a 4-unit device hold few bytes in flight: estimated >2x slower than the best
    # of the seeds timed first, the last candidate is not sent to the device. Pruning reads what was timed
    # before the device became the candidate's (one candidate at a time here: with several in flight,
    # which of them is timed first depends on their compiles). A vendor that does not say its model was
    # validated is never pruned (tests/test_progress.py: the fake device without KT_FAKE_PRUNE).
    from kt_cli.evaluate.evaluator import Evaluator

    monkeypatch.setenv("KT_FAKE_PRUNE", "1")
    monkeypatch.setattr(Evaluator, "in_flight", property(lambda self: 1))
    blocks = [64, 128, 256, 4096]
    recipe = dsl_recipe(write, SEEDED_ADD, space=f"BLOCK = {blocks}\nnum_warps = [1]", trials=len(blocks),
                        extra='sampler = "grid"\nmax_spill_bytes = 100000')
    result = kt("tune", recipe, "--target", "fake:cpu", "--out", tmp_path / "art")
    assert result.exit_code == 0, result.output
    trials = {t["params"]["BLOCK"]: t for t in _trials(tmp_path / "art")}
    assert sorted(trials) == blocks
    pruned = [b for b, t in trials.items() if t["failure_kind"] == "pruned"]
    assert pruned == [4096]
    assert "the cost model estimates" in trials[4096]["message"] and "pruned above 1.5x" in trials[4096]["message"]
    assert "1 pruned (predicted far slower by the cost model, not sent to the device)" in result.stdout
    # the sampler learns it: a pruned trial, which TPE ranks below every measured one (a failed trial, which
    # it ignores, would leave it blind to the region the model ruled out)
    import optuna

    (db,) = (tmp_path / "art").rglob("*.study.db")
    states = {t.params["BLOCK"]: t.state for s in optuna.get_all_study_summaries(f"sqlite:///{db}")
              for t in optuna.load_study(study_name=s.study_name, storage=f"sqlite:///{db}").trials}
    assert states[4096] == optuna.trial.TrialState.PRUNED
    assert {states[b] for b in blocks[:-1]} == {optuna.trial.TrialState.COMPLETE}


def test_candidates_raced_out_at_their_screen_count_toward_pruning(fake_device, write, tmp_path):
    # A screen that races a candidate out measured it: pruning starts after PRUNE_AFTER candidates reached
    # the device, as benchmarks/rank.py validated the rule, not after PRUNE_AFTER survived their screens
    # (most are raced out: 83 of 108 on the matmul recipe on an H100, so pruning came late or never).
    from kt_cli.evaluate.evaluator import Evaluator
    from kt_cli.evaluate.pruning import EARLY_MARGIN, PRUNE_AFTER
    from kt_cli.kernel import KernelSource
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.search.plan import plan_targets
    from kt_cli.types import TrialResult, shape_key

    recipe = load_recipe(dsl_recipe(write, SEEDED_ADD, space="BLOCK = [64, 128]\nnum_warps = [1]"))
    plan, shape = plan_targets(recipe, ("fake:cpu",))[0], {"N": 4096}
    key = (plan.spec.name, shape_key(shape))

    def measured(raced_out: bool) -> TrialResult:
        return TrialResult("ok", {"BLOCK": 64, "num_warps": 1}, plan.spec.name, shape, "measured", value=1e-6,
                           stats={"ci_low": 1e-6, "ci_high": 1e-6, "median": 1e-6, "raced_out": raced_out,
                                  "device": plan.device.name, "estimate": {"seconds": 1e-6}})

    evaluator = Evaluator(KernelSource(str(tmp_path / "kernel.py"), "dsl", "kernel"), recipe, [], 60)
    try:
        far_slower = {"seconds": 10 * EARLY_MARGIN * 1e-6}
        evaluator.observe(plan, measured(raced_out=False))
        assert not evaluator._predicted_far_slower(key, far_slower)  # one measured: too few to prune
        for _ in range(PRUNE_AFTER - 1):
            evaluator.observe(plan, measured(raced_out=True))
        assert "the cost model estimates" in evaluator._predicted_far_slower(key, far_slower)
        assert not evaluator._predicted_far_slower(key, {"seconds": 1.2e-6})  # within the ratio: timed
    finally:
        evaluator.close()


@pytest.mark.parametrize("prunes", [True, False])
def test_compiled_candidates_wait_for_the_device_in_numbers_only_where_the_model_orders_and_prunes(
        prunes, fake_device, write, tmp_path, monkeypatch):
    # with DEVICE_QUEUE compiled candidates waiting, the device takes the most promising first and the rest are
    # judged against a better best (docs/costmodel.md); where the model neither orders nor prunes, waiting would
    # only hold candidates back from the sampler, so one waits, as in static mode
    from kt_cli.evaluate.evaluator import DEVICE_QUEUE, Evaluator
    from kt_cli.kernel import KernelSource
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.search.plan import plan_targets

    if prunes:
        monkeypatch.setenv("KT_FAKE_PRUNE", "1")
    recipe = load_recipe(dsl_recipe(write, SEEDED_ADD, space="BLOCK = [64, 128]\nnum_warps = [1]"))
    evaluator = Evaluator(KernelSource(str(tmp_path / "kernel.py"), "dsl", "kernel"), recipe, [], 60)
    try:
        compiling = evaluator.in_flight - 1
        evaluator.start_workers(plan_targets(recipe, ("fake:cpu",)))
        assert evaluator.in_flight == compiling + (DEVICE_QUEUE if prunes else 1)
        assert DEVICE_QUEUE > 1
    finally:
        evaluator.close()


def test_waiting_candidates_take_the_device_by_their_estimate_over_their_problems_fastest(fake_device, write,
                                                                                         tmp_path, monkeypatch):
    # kt_cli/evaluate/device_turns.py orders by what the evaluator says: nothing timed yet, every candidate
    # alike (arrival order); then its estimate over the fastest one's, read at hand-on; never where the
    # vendor's model does not prune
    from kt_cli.evaluate import evaluator as evaluator_module
    from kt_cli.evaluate.evaluator import Evaluator
    from kt_cli.kernel import KernelSource
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.search.plan import plan_targets
    from kt_cli.types import TrialResult, shape_key

    recipe = load_recipe(dsl_recipe(write, SEEDED_ADD, space="BLOCK = [64, 128]\nnum_warps = [1]"))
    plan, shape = plan_targets(recipe, ("fake:cpu",))[0], {"N": 4096}
    key = (plan.spec.name, shape_key(shape))
    evaluator = Evaluator(KernelSource(str(tmp_path / "kernel.py"), "dsl", "kernel"), recipe, [], 60)
    try:
        slow, promising = (evaluator._device_priority(key, {"seconds": s}, prunes=True) for s in (3e-6, 0.9e-6))
        assert slow() == promising() == 0.0
        evaluator.observe(plan, TrialResult("ok", {"BLOCK": 64, "num_warps": 1}, plan.spec.name, shape, "measured",
                                            value=1e-6, stats={"ci_low": 1e-6, "ci_high": 1e-6, "median": 1e-6,
                                                               "device": plan.device.name,
                                                               "estimate": {"seconds": 1e-6}}))
        assert slow() == pytest.approx(3.0) and promising() == pytest.approx(0.9)
        assert evaluator._device_priority(key, {"seconds": 3e-6}, prunes=False)() == 0.0
        monkeypatch.setattr(evaluator_module, "ORDER_BY_ESTIMATE", False)
        assert evaluator._device_priority(key, {"seconds": 3e-6}, prunes=True)() == 0.0
    finally:
        evaluator.close()


def _trials(artifact_dir) -> list[dict]:
    (path,) = [p for p in artifact_dir.rglob("trials.jsonl")]
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_only_targets_where_the_model_was_held_against_measurements_prune():
    assert plugins.vendor("nvidia").model_prunes(plugins.target("nvidia:sm_90"))
    for name in ("nvidia:sm_80", "nvidia:sm_100", "amd:gfx942", "amd:gfx950"):
        spec = plugins.target(name)
        assert not plugins.vendor(spec.vendor).model_prunes(spec), name


def test_a_grid_barrier_per_step_is_a_latency_chain_no_throughput_hides():
    """A sequence kernel's programs meet at a grid barrier every step: 1024 steps of a tiny step cost at
    least 1024 barriers' L2 round trips, however little data each step moves (the grid-synchronised
    LSTM measured 2.5-4.3 ms for T = 1024 on an H200; without the term the model said 28-915 us)."""
    from kt_cli.evaluate.estimate import GRID_SYNC_L2_TRIPS

    step = Work(flops=1e6, unique_bytes=1e6, requested_bytes=1e6)
    chained = Work(flops=1e6, unique_bytes=1e6, requested_bytes=1e6, grid_syncs=1024)
    free = estimate_seconds(step, "bfloat16", H100.peaks, H100.properties, resources(), 128, 1, {"total": 500})
    synced = estimate_seconds(chained, "bfloat16", H100.peaks, H100.properties, resources(), 128, 1, {"total": 500})
    floor = 1024 * GRID_SYNC_L2_TRIPS * H100.properties["l2_latency_s"]
    assert free["sync_s"] == 0 and free["seconds"] < floor / 10
    assert synced["bound"] == "sync" and synced["seconds"] >= floor


@pytest.mark.parametrize("name", ["lstm_seq", "gru_seq"])
def test_the_grid_synchronised_sequence_is_estimated_near_its_measured_time(name):
    from tests.kernel_checks import compile_for as compile_template

    params = {"GRID": 1, "BLOCK_B": 16, "BLOCK_H": 8, "BLOCK_K": 128, "num_warps": 4, "num_stages": 2}
    out = compile_template(name, "nvidia:sm_90", {"T": 1024, "B": 16, "H": 256, "I": 256}, "bfloat16", params)
    # measured on an H200 (BENCHMARKS.md, 2026-11-26): lstm_seq 2.95 ms, gru_seq 2.84 ms at this point
    assert out["estimate"]["bound"] == "sync" and 0.3e-3 < out["estimate"]["seconds"] < 6e-3


def test_the_pruning_rule_allows_for_the_most_the_model_over_estimated_a_measured_candidate():
    """One rule for the evaluator and rank.py's replays (kt_cli/evaluate/pruning.py): a candidate is pruned
    where its estimate, divided by the largest estimate / measured time the problem's measured candidates
    showed, is still more than the margin over the fastest measured time."""
    from kt_cli.evaluate.pruning import EARLY_MARGIN, LEARN_AFTER, MARGIN, PRUNE_AFTER, Evidence

    def evidence(*measured: tuple[float, float], upper_bound: bool = False) -> Evidence:
        e = Evidence()
        for est, seconds in measured:
            e.add({"seconds": est, "upper_bound": upper_bound}, seconds, fastest=seconds == min(m[1] for m in measured))
        return e

    exact = evidence(*[(t, t) for t in (1e-3, 2e-3, 3e-3, 4e-3, 5e-3)])  # the model hit every one
    assert exact.learned == LEARN_AFTER and exact.margin() == MARGIN
    assert exact.pruned_at({"seconds": 1.3e-3}) == pytest.approx(1.3)
    assert exact.pruned_at({"seconds": 1.15e-3}) is None  # within the margin: timed
    assert exact.pruned_at({"seconds": 1.3e-3}, margin=0) is None  # pruning off (benchmarks/run.py --no-prune)
    assert exact.pruned_at({}) is None  # no estimate: timed
    # an estimate that only bounds the candidate's time from above says nothing about how far slower it is
    assert exact.pruned_at({"seconds": 9e-3, "upper_bound": True}) is None
    # one measured candidate the model over-estimated 2x: every estimate is trusted half as far
    erring = evidence(*[(t, t) for t in (1e-3, 2e-3, 3e-3, 4e-3)], (10e-3, 5e-3))
    assert erring.pruned_at({"seconds": 2.2e-3}) is None
    assert erring.pruned_at({"seconds": 2.6e-3}) == pytest.approx(1.3)
    # few measured: the early margin, and nothing at all before PRUNE_AFTER
    early = evidence(*[(t, t) for t in (1e-3, 2e-3, 3e-3)])
    assert PRUNE_AFTER <= 3 < LEARN_AFTER and early.margin() == EARLY_MARGIN
    assert early.pruned_at({"seconds": 1.3e-3}) is None and early.pruned_at({"seconds": 1.6e-3}) == pytest.approx(1.6)
    assert evidence((1e-3, 1e-3), (2e-3, 2e-3)).pruned_at({"seconds": 9e-3}) is None
    # candidates measured only with upper-bound estimates show nothing of the model's error: no pruning
    assert evidence(*[(t, t) for t in (1e-3, 2e-3, 3e-3)], upper_bound=True).pruned_at({"seconds": 9e-3}) is None
