"""What the command line says is true: no stray warnings, the same global flags everywhere, the
datasheet without a GPU, and errors before output."""

import json

import pytest

from tests.helpers import dsl_recipe, kt, one_error_line


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """One `kt tune` of a dsl recipe in a fresh directory, output where a recipe puts it by default,
    TRITON_DEFAULT_FP_FUSION unset: (the directory, kt's result)."""
    here = tmp_path_factory.mktemp("run")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("TRITON_DEFAULT_FP_FUSION", raising=False)
        mp.chdir(here)

        def write(name, text):
            (here / name).write_text(text)
            return here / name

        yield here, kt("tune", dsl_recipe(write, trials=1))


def test_tune_sets_tritons_fp_fusion_knob_so_triton_does_not_warn_and_records_it(local_run):
    here, result = local_run
    assert result.exit_code == 0, result.stderr
    art = here / "artifacts" / "recipe.kt"
    assert "FP_FUSION" not in result.stderr + result.stdout + (art / "trials.jsonl").read_text()
    assert json.loads((art / "manifest.json").read_text())["provenance"]["triton_default_fp_fusion"] == "1"


def test_kt_status_finds_a_local_runs_study_by_name_recipe_or_artifact(local_run, monkeypatch):
    here, _ = local_run
    monkeypatch.chdir(here)
    for what in ("recipe", "recipe.toml", "artifacts/recipe.kt", "artifacts/recipe.kt/"):
        result = kt("status", what)
        assert result.exit_code == 0, (what, result.stderr)
        assert result.stdout.startswith("recipe|") and "evaluated 1 of 1" in result.stdout
    missing = kt("status", "other")
    assert missing.exit_code == 2 and "no local study at artifacts/other.study.db" in one_error_line(missing)


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
