"""The cost model's ranking quality, held against stored measurements (benchmarks/rank.py on
benchmarks/results/rank_dataset.jsonl: every measured trial of kt's H100/H200 runs with the static
features of the same point). A change to the model that ranks worse than today fails here.

FLOORS are what the model reaches today, a little below; TARGETS (benchmarks/rank.py) are what it is
meant to reach, and docs/costmodel.md says which are not met yet."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import rank  # noqa: E402

FLOORS = {"rho_median": 0.68, "rho_worst": 0.2, "winner_within_10pct": 0.74, "top8_recall": 0.92,
          "error_median": 0.11, "ties": 244}
# The model this replaced (a roofline x occupancy x waves), on the same data: rho median 0.11 (H200) and
# 0.31 (H100), winner within 10% on 36% and 8% of problems, top-8 recall 0.86 and 0.69, error 30% and
# 59%, 598 and 1230 ties.


# Twenty-third session (2026-11-28): the matmul module's lockstep re-reads (L2 lookups a byte measured by
# Nsight Compute) and pipeline stages (the stage being read is not in flight) moved these floors: ties fell
# on every matmul run (s14 333 -> 69, s15 1023 -> 587, s18 33 -> 10, s28 39 -> 20, s8 25 -> 7), worst rho
# rose (s14 0.51 -> 0.68, s15 0.48 -> 0.56, s18 0.50 -> 0.64), s28's winner 78% -> 89% and error 26% ->
# 15%; s9's and s18's winner fell 92% -> 83% and 56% -> 44% (one problem each, its top estimates within 6%
# of each other: a tie broken luckily before) and s8's rho median 0.82 -> 0.79 (docs/costmodel.md).
# Twenty-fourth session: a persistent grid's busiest unit computes ceil(tiles / units) tiles (unit_tail):
# s33b's winner 56% -> 78% (all three GEMMs were missed) and rho median 0.77 -> 0.77, error s14 13% -> 12%;
# ties rise where persistent and one-tile-a-program grids of the same tile are math-bound alike (s14 69 ->
# 86, s33b 11 -> 19) and s15's rho median falls 0.58 -> 0.56, s14's 0.80 -> 0.79.
# Then two more: sm_90's table carries the latencies, L2 bandwidth and attainable fractions that `kt devices
# --calibrate` measured on every H100 and H200 since the seventh session (the uncalibrated runs s14 and s15
# and the stored runs are estimated with the table: s15 rho median 0.56 -> 0.75, ties 587 -> 144; s14's
# winner 33% -> 100%; stored rho median 0.61 -> 0.70), and a warp-specialized kernel's loads wait on its
# producer warp's instructions only (Work.load_warps: held-out worst rho s28 0.48 -> 0.59, s33b 0.37 ->
# 0.47, s34c 0.47 -> 0.58; s28's winner 89% -> 78%: its causal problem's pick is a Gluon config 24% slower).
# Twenty-sixth session: DRAM's loads bend below both their Little's-law and bandwidth lines near their corner
# (the knee each calibration fits to its own sweep; sm_90's table carries the H100's), and a unit's shared
# memory serves the tiles staged there and the operands its wgmma read (shared_memory_time). Ties fell on
# every held-out run (s28 24 -> 12, s33b 20 -> 9, s34c 20 -> 17, s34d 23 -> 18, s36e 28 -> 15, s36f 13 -> 8)
# and on s14, s15, s18, s9; rho median rose or held (s34c 0.75 -> 0.76, s36f 0.81 -> 0.84, s8 0.81 -> 0.83);
# winners fell on s28 (a split-K tile among estimates within 1%), s33b (two GEMM tiles the model ties
# exactly, one 10% slower) and s15, and rose on s18; s27's spmv left the top 8 (its 24 configs within 3.5%
# of each other in the model). docs/costmodel.md.
# Thirty-first session: warpgroups an MMA loop's barrier holds in lockstep issue the loop's other instructions
# while no MMA runs (kt_cli/evaluate/estimate.mma_issue_factor). Winners rose on s8 75% -> 87%, s28 77% ->
# 88%, s34d 88% -> 100%, s36f 66% -> 77%, s36g and s39h 77% -> 88% (attention's picks, most of them), rho
# medians on s33b 0.80 -> 0.87, s39h 0.82 -> 0.87, s18 0.79 -> 0.83; the estimates of two-warpgroup GEMM and
# attention configs rose 10-30%, so median errors rose (s28 15% -> 22%, s36e 16% -> 23%), and the uncalibrated
# matmul searches s14 and s15 lost rho (0.74 -> 0.71, 0.72 -> 0.70) while their ties fell (33 -> 19, 89 -> 51);
# s34c's attention left the top 8. Then the main loop read without NVIDIA's cold-path returns (an mbarrier
# wait's retry jumping back had been read as a loop holding 8 of a pass's 12 MMAs) and groups that sync alone
# (Gluon's one-warpgroup partitions) taking turns instead of lockstep: the two runs held out earlier in the
# session rose (s41i winner 67% -> 78%, top-8 89% -> 100%; s41j winner 67% -> 78%), the stored runs' ties fell
# (s33b 6 -> 1, s15 89 -> 51), the eleventh held-out run was scored once with it (docs/costmodel.md).
# Fresh H100 runs scored with the constants `kt devices --calibrate` measured in the same run: the way
# kt estimates on a calibrated device. s9: random (not searched) points of 12 problems, lstm's a kernel
# the model was never developed on; s8: the points of measured searches of softmax, matmul and attention.
# Floors a little below today's figures (docs/costmodel.md). Since the thirty-second session every stored point
# of today's kernel code holds the features of the binary its GPU timed (`features_from: device`: read by the
# run itself, or read again on a GPU host with the runs' Triton 3.6.0 by benchmarks/experiments/
# gpu_host_features.py, which rebuilt the resources every run had kept, 611 of 611 points), where they had
# held a cross-compile's of this machine's Triton (other registers for 55% of them): every floor moved to the
# figures on those features (the stored set's worst rho 0.38 -> 0.01, its ties 200 -> 286; the held-out runs'
# winners 86.8% -> 87.6%, ties 121 -> 114).
# Thirty-ninth session: a unit's programs go in rounds of those resident at once, and a last, partial round's
# programs stream at their own loads in flight (kt_cli/evaluate/estimate.in_rounds). The stored set's rho median
# 0.66 -> 0.68, worst 0.01 -> 0.20, winner 70% -> 74%, ties 286 -> 244; over the fourteen held-out runs rho median
# 0.873 -> 0.879, winner 86.6% -> 88.1%, top-8 92.5% -> 93.3%, ties 127 -> 95, error 17.6% -> 17.9%. Moved down:
# s33b's top-8 (its causal GQA attention B16 S1024 D64, whose best, 64 x 64 on 3 programs a unit, pays a last
# round of one program: 1.0 -> 0.88), s41i's winner (1.0 -> 0.88), rho medians of s33b, s34d, s36f, s36g, s39h
# by 0.01-0.02, s27's error 0.12 -> 0.13 (docs/costmodel.md).
RESULTS = ROOT / "benchmarks" / "results"
FRESH = {
    "s9": (RESULTS / "rank_fresh_h100_s9.jsonl", RESULTS / "calibrate_h100_s9.json", 12,
           {"rho_median": 0.88, "rho_worst": -0.41, "winner_within_10pct": 0.91, "top8_recall": 1.0,
            "error_median": 0.16, "ties": 28}),
    "s8": (RESULTS / "rank_fresh_h100_s8.jsonl", RESULTS / "calibrate_h100_s8.json", 8,
           {"rho_median": 0.81, "rho_worst": 0.67, "winner_within_10pct": 0.87, "top8_recall": 1.0,
            "error_median": 0.12, "ties": 9}),
    # three measured matmul searches on an H200 (2026-11-26, results/s14/final), not calibrated: the
    # table's constants (static mode's estimate of a searched space)
    "s14": (RESULTS / "rank_fresh_h200_s14.jsonl", None, 3,
            {"rho_median": 0.71, "rho_worst": 0.67, "winner_within_10pct": 1.0, "top8_recall": 1.0,
             "error_median": 0.15, "ties": 19}),
    # random points of matmul, attention and lstm on an H100 (2026-11-26, seventh session), calibrated
    # in the same call, measured after the MMA issue factor was built: never developed or fitted on
    "s18": (RESULTS / "rank_fresh_h100_s18.jsonl", RESULTS / "calibrate_h100_s18b.json", 9,
            {"rho_median": 0.83, "rho_worst": 0.68, "winner_within_10pct": 0.77, "top8_recall": 1.0,
             "error_median": 0.20, "ties": 7}),
    # random points of nine memory-bound and step kernels on an H100 (2026-11-27, sixteenth session,
    # results/s27), calibrated in the same call, each value a candidate's ratio to its baseline timed
    # beside it: the model was neither developed nor fitted on them (axpy's and gemv's configs lie within a
    # few percent of each other: their rho is noise). One row's loads in flight a program walking rows
    # (seventeenth session) took its rho median from 0.70 to 0.80 and its ties from 88 to 46
    "s27": (RESULTS / "rank_fresh_h100_s27.jsonl", RESULTS / "calibrate_h100_s27.json", 13,
            {"rho_median": 0.78, "rho_worst": -0.34, "winner_within_10pct": 0.76, "top8_recall": 1.0,
             "error_median": 0.13, "ties": 50}),
    # held out (2026-11-27, eighteenth session, results/s28/call1): the library's matmul, attention, softmax
    # and layernorm on problems no other dataset, calibration or recipe has (benchmarks/recipes/holdout_*),
    # random points timed fully beside their baselines, calibrated in the same call; scored once the model
    # was fixed, before any change was tried on it
    "s28": (RESULTS / "rank_fresh_h100_s28.jsonl", RESULTS / "calibrate_h100_s28.json", 9,
            {"rho_median": 0.84, "rho_worst": 0.58, "winner_within_10pct": 0.88, "top8_recall": 1.0,
             "error_median": 0.22, "ties": 5}),
    # the library's matmul (14 tiles on five shapes) and Triton attention (8 tiles on four shapes) on an H200
    # (2026-11-28, twenty-third session, results/s33/call1-2), each point one launch under Nsight Compute
    # (cold caches), its counters kept in the record ("ncu": L2 sectors looked up, bytes the SMs received
    # from L2, DRAM bytes), calibrated in the same call: the ground truth for the model's traffic terms. The
    # attention problems rank poorly (causal D128 rho -0.29 over 8 points: the spilling and TMA configs)
    "s33": (RESULTS / "rank_fresh_h200_s33.jsonl", RESULTS / "calibrate_h200_s33.json", 9,
            {"rho_median": 0.81, "rho_worst": -0.22, "winner_within_10pct": 1.0, "top8_recall": 1.0,
             "error_median": 0.17, "ties": 5}),
    # held out again (2026-11-28, twenty-third session, results/s33/call4): the library's matmul, attention,
    # softmax and layernorm on problems of benchmarks/recipes/holdout_*_b.toml, written after the session's
    # model change and before anything was measured on them, random points timed fully, calibrated in the
    # same call; scored once. The model before the change: rho median 0.76, winner 56%, error 20%, 31 ties
    "s33b": (RESULTS / "rank_fresh_h200_s33b.jsonl", RESULTS / "calibrate_h200_s33b.json", 9,
             {"rho_median": 0.88, "rho_worst": 0.48, "winner_within_10pct": 0.88, "top8_recall": 0.88,
              "error_median": 0.18, "ties": 3}),
    # held out a third time (2026-11-28, twenty-fourth session, results/s34/call3): benchmarks/recipes/
    # holdout_*_c.toml, written after unit_tail was built and before anything was measured on them, random
    # points timed fully on an H200, calibrated in the same call; scored once. The model before unit_tail:
    # rho median 0.75, winner 78%, error 17%, 15 ties
    "s34c": (RESULTS / "rank_fresh_h200_s34c.jsonl", RESULTS / "calibrate_h200_s34c.json", 9,
             {"rho_median": 0.72, "rho_worst": 0.58, "winner_within_10pct": 0.88, "top8_recall": 0.77,
              "error_median": 0.19, "ties": 8}),
    # held out a fourth time (2026-11-28, twenty-fourth session, results/s34/call4): holdout_*_d.toml, written
    # after the session's last model change and before anything was measured on them, H200, calibrated in the
    # same call; scored once. The session's starting model: rho median 0.89, worst 0.62, winner 89%, error
    # 13%, 19 ties (uncalibrated, with sm_90's old table: 0.70, 0.47, 56%, 19%, 61 ties)
    "s34d": (RESULTS / "rank_fresh_h200_s34d.jsonl", RESULTS / "calibrate_h200_s34d.json", 9,
             {"rho_median": 0.88, "rho_worst": 0.78, "winner_within_10pct": 1.0, "top8_recall": 1.0,
              "error_median": 0.17, "ties": 7}),
    # held out a fifth time (2026-11-28, twenty-sixth session, results/s36/call1): holdout_*_e.toml, written at
    # the session's start, before anything was measured on them and before the session changed the model, H200,
    # calibrated in the same call; scored once with the twenty-fifth session's final model: rho median 0.91,
    # worst 0.52, winner 78%, top-8 100%, error 15%, 28 ties
    "s36e": (RESULTS / "rank_fresh_h200_s36e.jsonl", RESULTS / "calibrate_h200_s36e.json", 9,
             {"rho_median": 0.9, "rho_worst": 0.51, "winner_within_10pct": 0.77, "top8_recall": 1.0,
              "error_median": 0.23, "ties": 9}),
    # held out a sixth time (2026-11-28, twenty-sixth session, results/s36/call2): holdout_*_f.toml, written and
    # measured before the session's model change; scored once with the model of 7f8e511 (knees on DRAM and L2,
    # shared memory): rho median 0.84, worst 0.47, winner 56%, top-8 100%, error 14%, 2 ties (the model before
    # it: 0.81, 0.47, 67%, 100%, 13%, 13 ties). Its one lost winner was attention D64's 64x32 tile picked over
    # 64x64, as on s34c and s36e: the L2 knee, dropped after (not held out for that choice: 0.84, 0.47, 67%,
    # 100%, 13%, 8 ties)
    "s36f": (RESULTS / "rank_fresh_h200_s36f.jsonl", RESULTS / "calibrate_h200_s36f.json", 9,
             {"rho_median": 0.83, "rho_worst": 0.56, "winner_within_10pct": 1.0, "top8_recall": 1.0,
              "error_median": 0.17, "ties": 8}),
    # held out a seventh time (2026-11-28, twenty-sixth session, results/s36/call6): holdout_*_g.toml, written
    # after the session's final model change and before anything was measured on them; scored once with the
    # final model: rho median 0.80, worst 0.07 (softmax 3072x20480: its 4096-wide blocks walking the row twice,
    # estimated 1.9x the best, measured the best), winner 78%, top-8 78%, error 16%, 4 ties (the session's
    # starting model: 0.79, 0.07, 78%, 78%, 16%, 12 ties)
    "s36g": (RESULTS / "rank_fresh_h200_s36g.jsonl", RESULTS / "calibrate_h200_s36g.json", 9,
             {"rho_median": 0.83, "rho_worst": 0.05, "winner_within_10pct": 0.88, "top8_recall": 0.77,
              "error_median": 0.22, "ties": 6}),
    # held out an eighth time (2026-11-29, twenty-ninth session, results/s39/holdout_h): holdout_*_h.toml, written
    # after the session's final model change (the tile fill) and before anything was measured on them; scored
    # once: rho median 0.83, worst 0.62, winner 78%, top-8 89%, error 15%, 2 ties (the session's starting
    # model: 0.83, 0.62, 78%, 89%, 15%, 5 ties); layernorm 12288x10240's pick measured 1.58x its best
    "s39h": (RESULTS / "rank_fresh_h200_s39h.jsonl", RESULTS / "calibrate_h200_s39h.json", 9,
             {"rho_median": 0.85, "rho_worst": 0.58, "winner_within_10pct": 0.88, "top8_recall": 0.88,
              "error_median": 0.20, "ties": 4}),
    # held out a ninth and a tenth time (2026-11-29, thirty-first session, results/s41/holdout_i, holdout_j):
    # holdout_*_i.toml and holdout_*_j.toml, written after the session's model change (MMA loops in lockstep)
    # and before anything was measured on them, each run on its own H200 calibrated in the same call; scored
    # once. The model before the change on the same points: s41i rho median 0.82, worst 0.57, winner 56%,
    # top-8 89%, error 15%, 41 ties; s41j 0.87, 0.56, 67%, 89%, 16%, 9 ties
    "s41i": (RESULTS / "rank_fresh_h200_s41i.jsonl", RESULTS / "calibrate_h200_s41i.json", 9,
             {"rho_median": 0.85, "rho_worst": 0.68, "winner_within_10pct": 0.88, "top8_recall": 1.0,
              "error_median": 0.19, "ties": 14}),
    # held out an eleventh time (2026-11-29, thirty-first session, results/s41/holdout_k): holdout_*_k.toml, written
    # after the session's final model change (groups that sync alone take turns; the loop read without cold
    # paths) and before anything was measured on them; scored once. The session's starting model: rho median
    # 0.85, worst 0.29, winner 67%, top-8 89%, error 13%, 10 ties; with the lockstep alone: 0.90, 0.29, 67%
    "s41k": (RESULTS / "rank_fresh_h200_s41k.jsonl", RESULTS / "calibrate_h200_s41k.json", 9,
             {"rho_median": 0.88, "rho_worst": 0.28, "winner_within_10pct": 0.88, "top8_recall": 0.88,
              "error_median": 0.13, "ties": 4}),
    # held out a twelfth time (2026-11-29, thirty-second session, results/s42/holdout_l): holdout_*_l.toml, written
    # before anything was measured on them, H200, calibrated in the same call; the first run whose trials kept every
    # feature the model read from the binary the GPU timed (the dataset's `features_from: device`); scored once.
    # Its worst problem is again a long-row softmax (2560 x 18944, rho 0.09: looped 4096-wide blocks measured
    # fastest, estimated as an upper bound)
    "s42l": (RESULTS / "rank_fresh_h200_s42l.jsonl", RESULTS / "calibrate_h200_s42l.json", 9,
             {"rho_median": 0.84, "rho_worst": 0.14, "winner_within_10pct": 0.88, "top8_recall": 0.88,
              "error_median": 0.18, "ties": 4}),
    # held out a thirteenth time (2026-11-29, thirty-second session, results/s42/holdout_m): holdout_*_m.toml,
    # six library kernels (rmsnorm and gemv besides the four held out before), written after s42l was scored and
    # before anything was measured on them, H200, calibrated in the same call, the binaries' own features; scored
    # once. gemv's configs lie within 3% of each other for most points (their rho is the timing's noise)
    "s42m": (RESULTS / "rank_fresh_h200_s42m.jsonl", RESULTS / "calibrate_h200_s42m.json", 13,
             {"rho_median": 0.85, "rho_worst": 0.34, "winner_within_10pct": 0.84, "top8_recall": 1.0,
              "error_median": 0.16, "ties": 14}),
    # held out a fourteenth time (2026-11-29, thirty-third session, results/s43/holdout_n): holdout_*_n.toml, the
    # same six kernels, written before anything was measured on them and after the pruning rule that learns the
    # model's error was chosen on the stored runs, H200, calibrated in the same call, the binaries' own features;
    # scored once with the unchanged model (rho median 0.89, worst -0.31, winner 77%, top-8 100%, error 20%, 13
    # ties). gemv's worst again (36864 x 4608: its configs within a few percent, the model spreading them)
    "s43n": (RESULTS / "rank_fresh_h200_s43n.jsonl", RESULTS / "calibrate_h200_s43n.json", 13,
             {"rho_median": 0.88, "rho_worst": -0.31, "winner_within_10pct": 0.84, "top8_recall": 1.0,
              "error_median": 0.22, "ties": 4}),
    # held out a fifteenth time (2026-11-30, thirty-ninth session, results/s49/holdout_o): holdout_*_o.toml, the
    # same six kernels, written after a unit's last round of programs was modelled and committed before anything was
    # measured on them, H200, calibrated in the same call, the binaries' own features; scored once (rho median 0.75,
    # worst -0.10, winner 77%, top-8 100%, error 22%, 9 ties; the model before the rounds: 0.76, -0.22, 77%, 100%,
    # 22%, 13). Its worst, gemv 20480 x 8192: 20 of 24 configs measured within 4% of each other
    "s49o": (RESULTS / "rank_fresh_h200_s49o.jsonl", RESULTS / "calibrate_h200_s49o.json", 13,
             {"rho_median": 0.75, "rho_worst": -0.1, "winner_within_10pct": 0.76, "top8_recall": 1.0,
              "error_median": 0.23, "ties": 9}),
    "s41j": (RESULTS / "rank_fresh_h200_s41j.jsonl", RESULTS / "calibrate_h200_s41j.json", 9,
             {"rho_median": 0.91, "rho_worst": 0.54, "winner_within_10pct": 0.77, "top8_recall": 0.88,
              "error_median": 0.17, "ties": 5}),
    # twelve measured matmul searches on two H100s (2026-11-26, results/s15/ab1, ab2), not calibrated;
    # the MMA issue term (2026-11-26, seventh session) moved its rho median from 0.55 to 0.50 (1000^3 up,
    # 4096^3 and 8192^3 down) while it raised every other run's (docs/costmodel.md)
    "s15": (RESULTS / "rank_fresh_h100_s15.jsonl", None, 3,
            {"rho_median": 0.7, "rho_worst": 0.61, "winner_within_10pct": 0.33, "top8_recall": 0.66,
             "error_median": 0.16, "ties": 53}),
}


@pytest.fixture(scope="module")
def quality():
    records = rank.load(rank.DATASETS)
    assert len(records) >= 480, "the stored dataset lost points"
    return rank.quality(records)


def test_the_model_ranks_the_stored_measurements_at_least_as_well_as_today(quality):
    per, summary = quality
    assert summary["problems"] >= 25
    lower_is_better = {"error_median", "ties"}
    worse = {k: (summary[k], floor) for k, floor in FLOORS.items()
             if (summary[k] > floor if k in lower_is_better else summary[k] < floor)}
    assert not worse, f"ranks worse than the floors (now, floor): {worse}"


def _fresh_records(run: str, monkeypatch) -> list[dict]:
    """A fresh run's points, estimated with the constants calibrated in that run (if any)."""
    dataset, calibration_run, _, _ = FRESH[run]
    monkeypatch.setattr(rank, "CALIBRATIONS", {})
    rank.use_calibrations([calibration_run] if calibration_run else [])
    return rank.load([dataset])


@pytest.mark.parametrize("run", sorted(FRESH))
def test_the_model_ranks_a_fresh_calibrated_run_at_least_as_well_as_today(run, monkeypatch):
    _, _, problems, floors = FRESH[run]
    per, summary = rank.quality(_fresh_records(run, monkeypatch))
    assert summary["problems"] == problems
    assert run != "s9" or any("lstm" in k for k in per)  # a kernel the model was never developed on
    lower_is_better = {"error_median", "ties"}
    worse = {k: (summary[k], floor) for k, floor in floors.items()
             if (summary[k] > floor if k in lower_is_better else summary[k] < floor)}
    assert not worse, f"ranks worse than the floors (now, floor): {worse}"


def test_the_held_out_runs_are_scored_on_the_features_of_the_binaries_their_gpu_timed(monkeypatch):
    # a point cross-compiled here (Triton 3.9) describes another binary than the one its GPU host (Triton 3.6)
    # timed for about half of the row kernels' points: every held-out point of today's kernel code holds the
    # features its run read, or that benchmarks/experiments/gpu_host_features.py read again on a GPU host; only
    # points measured on kernel code changed since (the attention module, for the runs before s41i) do not
    every = ("s41i", "s41j", "s41k", "s42l", "s42m", "s43n", "s49o")
    for run in ("s28", "s33b", "s34c", "s34d", "s36e", "s36f", "s36g", "s39h", *every):
        _, summary = rank.quality(_fresh_records(run, monkeypatch))
        assert summary["binaries_timed"] >= (1.0 if run in every else 0.45), (run, summary["binaries_timed"])


# Where the rule is known to lose a best, found on a held-out run and not yet fixed: the share of replayed
# orders that lose it, alone and with 8 candidates waiting, which a change may not raise. Since the rule learns
# the model's error from the problem's measured candidates (the thirty-third session): s34c's causal GQA attention
# D128, whose best (the Gluon 128 x 128 tile on 8 warps) the model over-estimates more than all but one of the
# problem's 24 configs, so that where the timed ones are those it over-estimates least, the best is pruned (1.0% of
# orders with 8 waiting, 1.041x kept); s36g's attention B32 H16 S512 D64 (0.1%, 1.031x). Lost before and no longer:
# s41k's causal GQA attention D64 (6-7% of orders under the fixed ratio of estimates, 1.023x kept), s36g's softmax
# 3072x20480 and s41k's 3584x24064 (looped rows estimated from above, which pruning does not act on:
# kt_cli/evaluate/estimate.py `upper_bound`).
# Since a last round's programs stream alone (thirty-ninth session): s33b's causal GQA attention B16 S1024 D64 in one
# order of 1800 with 8 waiting (1.17x kept), s34c's share 1.1% -> 1.2%.
KNOWN_LOSSES = {"s34c": (0.002, 0.012), "s36g": (0.001, 0.002), "s33b": (0.0, 0.001)}


def test_a_looped_row_kernel_is_estimated_from_above_and_never_pruned(monkeypatch):
    # s36g's softmax 3072x20480 on an H200: the 4096-wide blocks on 4 warps walk each row in five blocks, twice,
    # and measured fastest; their issue term charges every static instruction each time (only the loop bodies
    # repeat), and so does the time that holds their loads out of flight in the L2 term, which bounds the
    # estimate of the binary the GPU ran (the cross-compile's was bound by the issue term): only an upper bound;
    # the whole-row block's is not
    from kt_cli.evaluate.pruning import Evidence

    problem = [r for r in _fresh_records("s36g", monkeypatch)
               if r["recipe"] == "holdout_softmax_g" and r["shape"] == {"M": 3072, "N": 20480}]
    best = min(problem, key=lambda r: r["measured_s"])
    favourite = min(problem, key=lambda r: rank.estimate(r)["seconds"])
    assert best["params"]["BLOCK_N"] == 4096 and favourite["params"]["BLOCK_N"] == 32768
    looped, whole = rank.estimate(best), rank.estimate(favourite)
    assert looped["bound"] in ("issue", "l2") and looped["upper_bound"] and not whole["upper_bound"]
    assert looped["seconds"] > 1.5 * whole["seconds"]  # far above: the rule would prune it, as a true estimate
    evidence = Evidence()
    for _ in range(9):  # were the model exact on every measured candidate
        evidence.add(whole, whole["seconds"], fastest=True)
    assert evidence.pruned_at({**looped, "upper_bound": False}) is not None
    assert evidence.pruned_at(looped) is None


def test_a_looped_row_kernel_bound_by_a_memory_its_loads_in_flight_hold_back_is_estimated_from_above(monkeypatch):
    # s41k's softmax 3584x24064 (H200, eleventh held-out run): 8192-wide blocks on 16 warps walk each row three
    # times a pass and measured fastest; their L2 term, Little's law over loads held out of flight by every
    # static instruction of the program (a trip's only, in truth), bounds the estimate at 2.8x the favourite's,
    # and pruning lost them in 97% of replayed orders until such estimates were marked upper bounds
    problem = [r for r in _fresh_records("s41k", monkeypatch)
               if r["recipe"] == "holdout_softmax_k" and r["shape"] == {"M": 3584, "N": 24064}]
    best = min(problem, key=lambda r: r["measured_s"])
    favourite = min(problem, key=lambda r: rank.estimate(r)["seconds"])
    looped, whole = rank.estimate(best), rank.estimate(favourite)
    assert best["params"]["BLOCK_N"] < 24064 <= favourite["params"]["BLOCK_N"]
    assert looped["bound"] == "l2" and looped["upper_bound"] and not whole["upper_bound"]
    assert looped["seconds"] > 1.5 * whole["seconds"]


@pytest.mark.parametrize("run", ["stored", *sorted(FRESH)])
def test_pruning_replayed_on_the_stored_runs_never_loses_the_best(run, monkeypatch):
    # measured tuning's pruning rule (kt_cli/evaluate/pruning.py) replayed in 200
    # random orders per problem: no replay may keep a best more than 1% slower than the problem's true best.
    # A model change that moves a problem's best far above another config's estimate prunes the best on a GPU
    # (an issue factor for warps issuing their own mma.sync, tried on 2026-11-27, did on s27's GRU step B64:
    # half the replays kept a config 1.27x its best)
    records = rank.load(rank.DATASETS) if run == "stored" else _fresh_records(run, monkeypatch)
    replayed = rank.pruning(records)
    assert replayed["runs_missing_best_by_1pct"] <= KNOWN_LOSSES.get(run, (0, 0))[0], replayed
    assert replayed["evaluations_saved"] > 0.05  # and it still prunes
    # with 8 compiled candidates waiting and the device taken by the most promising first
    # (kt_cli/evaluate/device_turns.py): no best lost either, more saved, the best timed sooner
    best_first = rank.pruning(records, waiting=8)
    assert best_first["runs_missing_best_by_1pct"] <= KNOWN_LOSSES.get(run, (0, 0))[1], best_first
    assert best_first["evaluations_saved"] > replayed["evaluations_saved"], (best_first, replayed)
    assert best_first["best_timed_after"] < replayed["best_timed_after"], (best_first, replayed)


def test_problems_far_apart_in_size_are_estimated_in_order():
    # the estimate must scale with the problem: matmul 8192^3 is ~8x the work of 4096^3
    records = [r for r in rank.load(rank.DATASETS) if r["recipe"] == "matmul" and "H100" in r["device"]]
    by_k = {}
    for r in records:
        by_k.setdefault(r["shape"]["K"], []).append(rank.estimate(r)["seconds"])
    small, mid, large = (min(by_k[k]) for k in (1000, 4096, 8192))
    assert small < mid < large and 4 < large / mid < 16


def test_a_calibration_run_changes_the_estimates_of_its_own_device_only(monkeypatch):
    # rank.py --calibration: constants a GPU measured are laid over the table for that device's points
    h100 = next(r for r in rank.load(rank.DATASETS) if "H100" in r["device"] and r["recipe"] == "softmax")
    h200 = next(r for r in rank.load(rank.DATASETS) if "H200" in r["device"] and r["recipe"] == "softmax")
    before = rank.estimate(h100)["seconds"], rank.estimate(h200)["seconds"]
    monkeypatch.setitem(rank.CALIBRATIONS, h100["device"], {"dram_attainable": 0.45, "dram_latency_s": 4e-6})
    after = rank.estimate(h100)["seconds"], rank.estimate(h200)["seconds"]
    assert after[0] > 1.3 * before[0] and after[1] == before[1]


def test_the_learned_baseline_fits_what_its_features_show():
    # benchmarks/learned_models.py backs docs/costmodel.md's choice of an analytical model: its trees
    # must learn a step and a slope that the features carry, or its negative result would mean nothing
    import random

    import learned_models

    rng = random.Random(0)
    rows = [[rng.random(), rng.random()] for _ in range(300)]
    targets = [(1.0 if a > 0.5 else 0.0) + 0.5 * b for a, b in rows]
    model = learned_models.fit(rows, targets, trees=80)
    errors = [abs(learned_models.predict(model, r) - t) for r, t in zip(rows, targets)]
    assert sorted(errors)[len(errors) // 2] < 0.05
    assert learned_models.predict(model, [0.9, 0.5]) - learned_models.predict(model, [0.1, 0.5]) > 0.8


HELD_OUT = ("s28", "s33b", "s34c", "s34d", "s36e", "s36f", "s36g")  # the runs of benchmarks/recipes/holdout_*.toml


def test_the_held_out_recipes_are_the_library_spaces_on_problems_no_other_data_has():
    """The held-out runs' recipes (benchmarks/recipes/holdout_*.toml) keep what makes them a held-out test:
    each tunes a library kernel over that kernel's own recipe space, on shapes that no library recipe tunes
    and no other stored dataset measured (a shape added there later would leak into what calibration and development
    see)."""
    import tomllib

    def key(shape: dict) -> str:
        return json.dumps(shape, sort_keys=True)

    held_out = sorted((ROOT / "benchmarks" / "recipes").glob("holdout_*.toml"))
    assert len(held_out) >= 4
    measured = {(r["recipe"], key(r["shape"])) for r in rank.load(rank.DATASETS)}
    measured |= {(r["recipe"], key(r["shape"]))
                 for run, (dataset, *_) in FRESH.items() if run not in HELD_OUT for r in rank.load([dataset])}
    library = [tomllib.loads(p.read_text()) for p in (ROOT / "recipes").glob("*.toml")]
    for path in held_out:
        recipe = tomllib.loads(path.read_text())
        name = recipe["kernel"]["name"]
        (own,) = [r for r in library if r["kernel"].get("name") == name and r["problem"]["dtype"] == "bfloat16"]
        assert recipe["search"]["space"] == own["search"]["space"], path.name
        shapes = {key(s) for s in recipe["problem"]["shapes"]}
        tuned = {key(s) for r in library if r["kernel"].get("name") == name for s in r["problem"]["shapes"]}
        assert not shapes & tuned, (path.name, shapes & tuned)
        assert not {(name, s) for s in shapes} & measured, path.name
