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


def test_llm_prompt_carries_profiler_counters_where_the_vendor_gives_them():
    from kt_llm.prompts import figures_text

    best = {"round": 2, "problems": [{"target": "nvidia:sm_90", "shape": "M=4,N=8", "params": {"BLOCK_N": 8},
                                      "seconds": 1e-5, "speedup": 1.5, "fraction_of_peak": 0.4,
                                      "resources": {"registers": 32},
                                      "profiler": {"dram_throughput_pct": 41.0, "top_stalls": ["long_scoreboard (3.10)"]}}]}
    text = figures_text(best)
    assert "profiler counters" in text and "dram_throughput_pct" in text and "long_scoreboard" in text
    best["problems"][0]["profiler"] = None  # static mode or no profiler: nothing claimed
    assert "profiler counters" not in figures_text(best)


def test_profile_candidate_asks_the_vendor_for_the_kernel_names(plugin, tmp_path):
    from kt_cli.hookspecs import hookimpl
    from kt_cli.kernel import KernelSource
    from kt_cli.evaluate.profile import profile_candidate
    from kt_cli.types import TrialResult
    from tests.fake_vendor import FakeVendor
    from tests.helpers import ROOT

    seen = {}

    class ProfilingVendor(FakeVendor):
        def profile(self, device, command, kernel_names):
            seen.update(device=device, command=command, kernel_names=kernel_names)
            return {"achieved_occupancy_pct": 50.0}

    class Plugin:
        @hookimpl
        def kt_register_vendors(self, register):
            register(ProfilingVendor())

    plugin(Plugin(), "fake-profiler")
    source = KernelSource(str(ROOT / "recipes/examples/scaled_add.py"), "dsl", "scaled_add")
    trial = TrialResult("ok", {"BLOCK": 1024, "num_warps": 4}, "fake:cpu", {"N": 4096}, "measured", value=1e-5)
    device = ProfilingVendor().detect_devices()[0]
    assert profile_candidate(source, device, trial, "float32") == {"achieved_occupancy_pct": 50.0}
    assert seen["kernel_names"] == ["scaled_add"] and seen["command"][1:3] == ["-m", "kt_cli.evaluate.profile"]
    spec = __import__("json").loads(open(seen["command"][3]).read())
    assert spec["params"] == {"BLOCK": 1024} and spec["options"] == {"num_warps": 4}  # launch options apart
