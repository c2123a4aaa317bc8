"""What the command line says is true: no stray warnings, the same global flags everywhere, the
datasheet without a GPU, and errors before output."""

import json

from tests.helpers import dsl_recipe, kt, one_error_line


def test_tune_sets_tritons_fp_fusion_knob_so_triton_does_not_warn_and_records_it(write, tmp_path, monkeypatch):
    monkeypatch.delenv("TRITON_DEFAULT_FP_FUSION", raising=False)
    result = kt("tune", dsl_recipe(write, trials=1), "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    art = tmp_path / "art" / "recipe.kt"
    assert "FP_FUSION" not in result.stderr + result.stdout + (art / "trials.jsonl").read_text()
    assert json.loads((art / "manifest.json").read_text())["provenance"]["triton_default_fp_fusion"] == "1"


def test_kt_devices_without_a_gpu_lists_every_targets_datasheet_and_refuses_measure():
    result = kt("devices")
    assert result.exit_code == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines() if line.startswith(("nvidia:", "amd:"))}
    assert set(rows) >= {"nvidia:sm_80", "nvidia:sm_90", "nvidia:sm_100", "amd:gfx942", "amd:gfx950"}
    assert rows["nvidia:sm_90"][1] == "989" and rows["nvidia:sm_90"][-1] == "3.35"  # bf16 TFLOP/s, DRAM TB/s
    assert rows["nvidia:sm_80"][3] == "-"  # no fp8 on sm_80: nothing made up
    data = json.loads(kt("devices", "--json").stdout)
    assert data["target_peaks"]["amd:gfx942"]["dram_bytes_per_s"] == 5.3e12
    measured = kt("devices", "--measure")
    assert measured.exit_code == 2 and "--measure: no GPU present" in one_error_line(measured)
    assert measured.stdout == ""
