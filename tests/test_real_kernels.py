"""Kernels written by others, as a new user brings them: they tune without changes to the kernel."""

import json

from tests.helpers import ROOT, dsl_recipe, kt

DATA = ROOT / "tests" / "data"


def _trials(out) -> list[dict]:
    return [json.loads(line) for line in (out / "recipe.kt" / "trials.jsonl").read_text().splitlines()]


def test_a_kernel_taking_its_own_num_stages_tunes_with_every_candidate_ok(write, tmp_path):
    recipe = dsl_recipe(write, (DATA / "tutorial_softmax.py").read_text(), shapes="[{M = 64, N = 1000}]",
                        space="PROGRAMS = [4, 16]\nnum_stages = [1, 3]\nnum_warps = [4]", trials=3)
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    trials = _trials(tmp_path / "art")
    assert len(trials) == 3 and {t["failure_kind"] for t in trials} == {"ok"}, trials
    assert {t["params"]["num_stages"] for t in trials} <= {1, 3}
