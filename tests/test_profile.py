"""`kt tune --profile`: Nsight Compute's CSV read into counters (a CSV recorded on an H200), and a
static-mode run where there is nothing measured to profile."""

import json
from pathlib import Path

from tests.helpers import dsl_recipe, kt

DATA = Path(__file__).parent / "data"


def test_ncu_csv_from_an_h200_becomes_counters_and_top_stalls():
    from vendor_nvidia.ncu import parse_csv

    # recorded on 2026-11-22: ncu --csv over softmax_kernel, bf16 32768x4096, BLOCK_N=4096, 8 warps
    counters = parse_csv((DATA / "ncu_softmax_h200.csv").read_text())
    assert 0 < counters["achieved_occupancy_pct"] <= 100
    assert 50 < counters["dram_throughput_pct"] <= 100  # a memory-bound kernel near the DRAM roof
    assert counters["tensor_pipe_pct"] < 5  # softmax uses no tensor cores
    assert counters["duration_ns"] > 10_000
    assert len(counters["top_stalls"]) == 3 and counters["top_stalls"][0].startswith("long_scoreboard")


def test_profile_in_static_mode_records_nothing_and_keeps_the_run(write, tmp_path):
    result = kt("tune", dsl_recipe(write, trials=1), "--out", tmp_path / "art", "--profile", "2")
    assert result.exit_code == 0, result.stderr
    (entry,) = json.loads((tmp_path / "art" / "recipe.kt" / "manifest.json").read_text())["results"]
    assert entry["mode"] == "estimated" and entry["profile"] is None
