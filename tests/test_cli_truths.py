"""What the command line says is true: no stray warnings, the same global flags everywhere, the
datasheet without a GPU, and errors before output."""

import json

from tests.helpers import dsl_recipe, kt


def test_tune_sets_tritons_fp_fusion_knob_so_triton_does_not_warn_and_records_it(write, tmp_path, monkeypatch):
    monkeypatch.delenv("TRITON_DEFAULT_FP_FUSION", raising=False)
    result = kt("tune", dsl_recipe(write, trials=1), "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    art = tmp_path / "art" / "recipe.kt"
    assert "FP_FUSION" not in result.stderr + result.stdout + (art / "trials.jsonl").read_text()
    assert json.loads((art / "manifest.json").read_text())["provenance"]["triton_default_fp_fusion"] == "1"
