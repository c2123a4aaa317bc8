"""Kernels written by others, as a new user brings them: they tune without changes to the kernel."""

import json
import subprocess
import sys

import pytest

from kt_cli.evaluate.interpreter_fixes import blame
from tests.helpers import ROOT, dsl_recipe, kt, one_error_line, process_env

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


def _tune_in_bf16(write, tmp_path, kernel_file: str, shapes: str, space: str, trials: int) -> list[dict]:
    """The trials of a static bf16 tune of tests/data/`kernel_file` (verified under the interpreter)."""
    recipe = dsl_recipe(write, (DATA / kernel_file).read_text(), shapes=shapes, space=space, trials=trials)
    recipe.write_text(recipe.read_text().replace('dtype = "float32"', 'dtype = "bfloat16"'))
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    return _trials(tmp_path / "art")


def test_a_bf16_kernel_with_a_float_scalar_verifies_under_the_interpreter(write, tmp_path):
    trials = _tune_in_bf16(write, tmp_path, "scaled_gate.py", "[{N = 4096}]",
                           "BLOCK = [256, 1024]\nnum_warps = [4]", 2)
    assert [t["failure_kind"] for t in trials] == ["ok", "ok"], trials


def test_a_bf16_kernel_that_sums_and_scans_in_bf16_verifies_under_the_interpreter(write, tmp_path):
    trials = _tune_in_bf16(write, tmp_path, "bf16_row_counts.py", "[{M = 8, N = 200}]",
                           "BLOCK = [256]\nnum_warps = [4]", 1)
    assert [(t["failure_kind"], t["message"]) for t in trials] == [("ok", "")]


PROBE = """
import json, triton
from kt_cli.evaluate import interpreter_probes as probes
before = [probes.bf16_arithmetic_is_wrong(), probes.float_scalar_is_python_float(), probes.bf16_atomic_add_is_refused()]
from kt_cli.evaluate.interpreter_fixes import defects_left
print(json.dumps({"triton": triton.__version__, "before": before, "after": defects_left()}))
"""


def test_the_interpreters_known_defects_are_seen_and_fixed():
    found = json.loads(subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True,
                                      env=process_env(TRITON_INTERPRET="1")).stdout)
    if found["triton"].startswith("3.9."):  # where all three were seen; a later Triton may have fixed them
        assert found["before"] == [True, True, True]
    assert set(found["after"]) <= {"atomic_dtypes"}  # kt fixes the others; atomics it only reports


def test_a_failure_a_defect_explains_is_the_interpreters_not_the_kernels():
    wrong = "output 'out': worst at [3]: got nan, expected 4.4 (unwritten or not finite)"
    message = blame("wrong", wrong, "bfloat16", ["bf16_arithmetic"])
    assert message.startswith("its bf16 arithmetic computes on raw bits, verify on a GPU or with fp32") and wrong in message
    assert blame("wrong", wrong, "float32", ["bf16_arithmetic"]) == ""  # fp32 is not hit: the kernel's own
    assert blame("wrong", wrong, "bfloat16", []) == ""  # a fixed interpreter: the kernel's own
    crash = "InterpreterError: AttributeError(\"'float' object has no attribute 'to'\")"
    assert blame("crash", crash, "float32", ["float_scalar"]).startswith("it passes a float scalar argument")
    refused = "InterpreterError: ValueError('Unsupported data type')"
    assert blame("crash", refused, "bfloat16", ["atomic_dtypes"]).startswith("its atomic operations refuse")
    assert blame("crash", refused, "bfloat16", []) == ""  # atomics that take bf16: the kernel's own


def test_a_crash_only_the_interpreter_has_is_reported_as_the_interpreters_end_to_end(write, tmp_path):
    """A bf16 kernel whose atomic_add variant is right on a GPU but which Triton 3.9's interpreter refuses:
    `kt tune` in static mode records that candidate as `interpreter: …, verify on a GPU or with fp32`,
    never as the kernel's crash or wrong, and says so when no candidate is left."""
    space = "BLOCK = [128]\nATOMIC = [0, 1]\nnum_warps = [4]"
    recipe = dsl_recipe(write, (DATA / "bf16_atomic_colsum.py").read_text(), shapes="[{M = 8, N = 200}]",
                        space=space, trials=2)
    recipe.write_text(recipe.read_text().replace('dtype = "float32"', 'dtype = "bfloat16"'))
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    kinds = {t["params"]["ATOMIC"]: (t["failure_kind"], t["message"]) for t in _trials(tmp_path / "art")}
    assert kinds[0] == ("ok", "")  # the same sums without atomics verify: the kernel is right
    assert kinds[1][0] == "interpreter", kinds[1]
    assert kinds[1][1].startswith("its atomic operations refuse data types a GPU takes (bf16 atomic_add), "
                                  "verify on a GPU or with fp32 (crash: "), kinds[1][1]
    assert "1 failed (interpreter 1)" in result.stdout

    recipe.write_text(recipe.read_text().replace("ATOMIC = [0, 1]", "ATOMIC = [1]"))
    alone = kt("tune", recipe, "--out", tmp_path / "alone")
    line = one_error_line(alone)
    assert alone.exit_code != 0 and "(interpreter 1); last failure: interpreter: its atomic operations" in line, line
    assert "verify on a GPU or with fp32" in line


AUTOTUNED_RECIPE = """
[kernel]
generator = "dsl"
file = "kernel.py"

[problem]
dtype = "float32"
shapes = [{M = 16, N = 1000}]

[search]
trials = 4
timeout = 120

[targets]
names = ["nvidia:sm_90", "amd:gfx942"]
"""

LOAD_AND_RUN = """
import json, sys, torch
import kt_cli
kernel = kt_cli.load(sys.argv[1], target="nvidia:sm_90")
x, w = torch.randn(5, 300), torch.randn(300)
inputs = {"x": x, "w": w, "out": torch.full((5, 300), float("nan"))}
kernel(inputs)
ref = x.double() * torch.rsqrt((x.double() ** 2).mean(-1, keepdim=True) + 1e-6) * w.double()
print(json.dumps({"err": float((inputs["out"].double() - ref).abs().max())}))
"""


def test_an_autotuned_kernel_tunes_unchanged_with_three_functions_of_glue(write, tmp_path):
    """No SPACE, SEEDS, OUTPUTS, VERIFY_SHAPES, shape_of, flops or bytes: the autotune configs give the
    space and are evaluated first, the reference's keys name the outputs, the verification shape and
    the runtime's shape reader are derived from make_inputs."""
    write("kernel.py", (DATA / "autotuned_rmsnorm.py").read_text())
    recipe = write("recipe.toml", AUTOTUNED_RECIPE)
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    trials = _trials(tmp_path / "art")
    assert len(trials) == 8 and {t["failure_kind"] for t in trials} == {"ok"}, trials
    for target in ("nvidia:sm_90", "amd:gfx942"):
        points = [t["params"] for t in trials if t["target"] == target]
        assert {"BLOCK_N": 128, "num_warps": 2, "num_stages": 3} in points  # each config, as the decorator has it
        assert {"BLOCK_N": 512, "num_warps": 4, "num_stages": 2} in points
        assert all(set(p) == {"BLOCK_N", "num_warps", "num_stages"} for p in points)  # EVEN_N: the heuristic's
    manifest = json.loads((tmp_path / "art" / "recipe.kt" / "manifest.json").read_text())
    for r in manifest["results"]:  # bytes: x, w and out once each; a small verification shape of the problem
        assert r["stats"]["bytes_per_s"] * r["seconds"] == pytest.approx((2 * 16 * 1000 + 1000) * 4)
        assert {"M": 16, "N": 125} in r["verification"]["shapes"]
    run = subprocess.run([sys.executable, "-c", LOAD_AND_RUN, str(tmp_path / "art" / "recipe.kt")],
                         capture_output=True, text=True, env=process_env(TRITON_INTERPRET="1"), timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1])["err"] < 1e-4


def _no_reference(text: str) -> str:
    return text[:text.index("def reference(inputs):")]


def test_without_a_reference_candidates_are_checked_against_the_authors_config(write, tmp_path):
    """No reference function: the first autotune config (or kernel.reference_config) is the reference;
    a config that computes differently is wrong, the others verify."""
    kernel = _no_reference((DATA / "autotuned_rmsnorm.py").read_text()).replace(
        "    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)\n",
        "    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)\n"
        "    if BLOCK_N == 512:  # planted: 1% off, for this config only\n        rstd = rstd * 1.01\n")
    write("kernel.py", kernel)
    recipe = write("recipe.toml", AUTOTUNED_RECIPE.replace("trials = 4", "trials = 6").replace(
        'names = ["nvidia:sm_90", "amd:gfx942"]', 'names = ["nvidia:sm_90"]'))
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    trials = _trials(tmp_path / "art")
    assert any(t["params"]["BLOCK_N"] == 512 for t in trials)  # the autotune config of 512 is a seed
    for t in trials:
        assert (t["failure_kind"] == "wrong") == (t["params"]["BLOCK_N"] == 512), t
    manifest = json.loads((tmp_path / "art" / "recipe.kt" / "manifest.json").read_text())
    why = manifest["results"][0]["verification"]["tolerance"]["why"]
    assert why.startswith("differential: against this kernel at its reference configuration") and "128" in why

    # with no reference function and no configuration to compare with: one line, before any trial
    write("kernel.py", _no_reference((DATA / "scaled_gate.py").read_text()) + (DATA / "scaled_gate.py").read_text()
          .split("def reference(inputs):")[1].split("\n\n\n", 1)[1])
    bare = write("bare.toml", AUTOTUNED_RECIPE.replace("{M = 16, N = 1000}", "{N = 1000}").replace(
        "timeout = 120", "timeout = 120\n\n[search.space]\nBLOCK = [256]"))
    refused = kt("tune", bare, "--out", tmp_path / "bare")
    assert refused.exit_code == 2 and "set kernel.reference_config in the recipe" in one_error_line(refused)
    assert not (tmp_path / "bare" / "recipe.kt").exists()


def _benchmark():
    import importlib.util

    spec = importlib.util.spec_from_file_location("real_kernels_benchmark", ROOT / "benchmarks" / "real_kernels.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


SMALL = {  # tiny problems and spaces: the same modules and recipes as the GPU benchmark, in seconds
    "softmax": (("{M = 64, N = 300}",), ("PROGRAMS = [4, 16]", "num_stages = [1, 2]", "num_warps = [4]")),
    "layer_norm": (("{M = 16, N = 300}",), ("BLOCK_SIZE = [128, 256]", "num_warps = [2, 4]")),
    "softcap": (("{M = 8, N = 300}",), ("BLOCK_SIZE = [256, 1024]", "num_warps = [4]")),
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_a_benchmarked_real_kernel_tunes_unchanged_for_both_vendors_with_little_glue(tmp_path, name):
    """benchmarks/real_kernels.py's kernels, verbatim from their sources: each tunes statically for an
    NVIDIA and an AMD target with every candidate ok, with at most 15 lines of glue in its module."""
    bench = _benchmark()
    kernel = next(k for k in bench.KERNELS if k.name == name)
    glue = bench.glue_lines(bench.KERNELS_DIR / kernel.module)
    assert 0 < len(glue) <= bench.MAX_GLUE_LINES, glue
    shapes, space = SMALL[name]
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(bench.recipe_text(kernel, 2, shapes, space))
    result = kt("tune", recipe, "--target", "nvidia:sm_90", "--target", "amd:gfx942", "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    trials = _trials(tmp_path / "art")
    assert {t["target"] for t in trials} == {"nvidia:sm_90", "amd:gfx942"}
    assert {t["failure_kind"] for t in trials} == {"ok"}, [(t["failure_kind"], t.get("message")) for t in trials]
    manifest = json.loads((tmp_path / "art" / "recipe.kt" / "manifest.json").read_text())
    assert {r["target"] for r in manifest["results"] if r["params"]} == {"nvidia:sm_90", "amd:gfx942"}
