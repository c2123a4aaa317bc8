"""Kernels written by others, as a new user brings them: they tune without changes to the kernel."""

import json
import subprocess
import sys

import pytest

from kt_cli.evaluate.interpreter_fixes import blame
from tests.helpers import ROOT, dsl_recipe, kt, process_env

DATA = ROOT / "tests" / "data"


def _trials(out) -> list[dict]:
    return [json.loads(line) for line in (out / "recipe.kt" / "trials.jsonl").read_text().splitlines()]


LEFT_OUT = 'BLOCK_SIZE=triton.next_power_of_2(n_cols))'  # num_stages not passed: kt's launch option binds it


@pytest.mark.parametrize("call", ["as the tutorial passes it", "left out"])
def test_a_kernel_taking_its_own_num_stages_tunes_with_every_candidate_ok(write, tmp_path, call):
    kernel = (DATA / "tutorial_softmax.py").read_text()
    if call == "left out":
        kernel = kernel.replace('triton.next_power_of_2(n_cols), params["num_stages"])', LEFT_OUT)
    recipe = dsl_recipe(write, kernel, shapes="[{M = 64, N = 1000}]",
                        space="PROGRAMS = [4, 16]\nnum_stages = [1, 3]\nnum_warps = [4]", trials=2)
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    trials = _trials(tmp_path / "art")
    assert len(trials) == 2 and {t["failure_kind"] for t in trials} == {"ok"}, trials


def test_a_bf16_kernel_with_a_float_scalar_verifies_under_the_interpreter(write, tmp_path):
    recipe = dsl_recipe(write, (DATA / "scaled_gate.py").read_text(), shapes="[{N = 4096}]",
                        space="BLOCK = [256, 1024]\nnum_warps = [4]", trials=2)
    recipe.write_text(recipe.read_text().replace('dtype = "float32"', 'dtype = "bfloat16"'))
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    trials = _trials(tmp_path / "art")
    assert [t["failure_kind"] for t in trials] == ["ok", "ok"], trials


PROBE = """
import json, triton
from kt_cli.evaluate import interpreter_probes as probes
before = [probes.bf16_arithmetic_is_wrong(), probes.float_scalar_is_python_float()]
from kt_cli.evaluate.interpreter_fixes import defects_left
print(json.dumps({"triton": triton.__version__, "before": before, "after": defects_left()}))
"""


def test_the_interpreters_known_defects_are_seen_and_fixed():
    found = json.loads(subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True,
                                      env=process_env(TRITON_INTERPRET="1")).stdout)
    if found["triton"].startswith("3.9."):  # where both were seen; a later Triton may have fixed them
        assert found["before"] == [True, True]
    assert found["after"] == []


def test_a_failure_a_defect_explains_is_the_interpreters_not_the_kernels():
    wrong = "output 'out': worst at [3]: got nan, expected 4.4 (unwritten or not finite)"
    message = blame("wrong", wrong, "bfloat16", ["bf16_arithmetic"])
    assert message.startswith("its bf16 arithmetic computes on raw bits, verify on a GPU or with fp32") and wrong in message
    assert blame("wrong", wrong, "float32", ["bf16_arithmetic"]) == ""  # fp32 is not hit: the kernel's own
    assert blame("wrong", wrong, "bfloat16", []) == ""  # a fixed interpreter: the kernel's own
    crash = "InterpreterError: AttributeError(\"'float' object has no attribute 'to'\")"
    assert blame("crash", crash, "float32", ["float_scalar"]).startswith("it passes a float scalar argument")
