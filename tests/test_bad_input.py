"""Every bad input gets exit 2 (1 for a job that ran and found nothing), one line naming the file and
key, and no artifact written."""

import pytest

from tests.helpers import SCALED_ADD, dsl_recipe, kt, one_error_line


def tune(recipe, tmp_path, *extra):
    result = kt("tune", recipe, "--out", tmp_path / "art", *extra)
    return result, not (tmp_path / "art").exists() or not any((tmp_path / "art").glob("*.kt"))


def test_missing_recipe_file(tmp_path):
    result, clean = tune(tmp_path / "nope.toml", tmp_path)
    assert result.exit_code == 2 and clean
    assert "nope.toml: recipe file not found" in one_error_line(result)


def test_not_toml(write, tmp_path):
    result, clean = tune(write("r.toml", "[kernel\ngenerator = 1"), tmp_path)
    assert result.exit_code == 2 and clean
    assert "r.toml: not valid TOML" in one_error_line(result)


def test_unknown_section(write, tmp_path):
    result, _ = tune(write("r.toml", '[kernel]\ngenerator = "templates"\nname = "softmax"\n[serach]\ntrials = 3\n'),
                     tmp_path)
    line = one_error_line(result)
    assert result.exit_code == 2 and "unknown section [serach]" in line and "search" in line


def test_unknown_key(write, tmp_path):
    result, _ = tune(dsl_recipe(write, extra="trails = 3"), tmp_path)
    line = one_error_line(result)
    assert result.exit_code == 2 and "search.trails: unknown key" in line


def test_wrong_type(write, tmp_path):
    result, _ = tune(dsl_recipe(write, extra='seed = "zero"'), tmp_path)
    assert result.exit_code == 2 and "search.seed: must be int" in one_error_line(result)


def test_empty_parameter_list(write, tmp_path):
    result, clean = tune(dsl_recipe(write, space="BLOCK = []"), tmp_path)
    assert result.exit_code == 2 and clean
    assert "search.space.BLOCK: empty list of values" in one_error_line(result)


def test_constraints_reject_every_point(write, tmp_path):
    recipe = dsl_recipe(write, extra='constraints = ["BLOCK > 4096", "num_warps > 0"]')
    result, clean = tune(recipe, tmp_path)
    line = one_error_line(result)
    assert result.exit_code == 2 and clean
    assert "all 6 points violate" in line and "'BLOCK > 4096'" in line


@pytest.mark.parametrize("constraint,what", [
    ("__import__('os').system('true') == 0", "an attribute access"),
    ("abs(BLOCK) > 1", "a call other than min()/max()"),
    ("BLOCK.bit_length() > 1", "an attribute access"),
    ("BLOCK.real > 1", "an attribute access"),
    ("__class__ == 1", "dunder name"),
    ("[BLOCK][0] > 1", "a subscript"),
    ("(lambda: 1)() == 1", "a call other than min()/max()"),
    ("[x for x in (1,)] == 1", "unsupported syntax ListComp"),
])
def test_unsafe_constraint(write, tmp_path, constraint, what):
    recipe = dsl_recipe(write, extra=f'constraints = ["{constraint}"]'.replace("'", "\\\""))
    result, clean = tune(recipe, tmp_path)
    line = one_error_line(result)
    assert result.exit_code == 2 and clean and what in line and "search.constraints[0]" in line


def test_unknown_generator(write, tmp_path):
    result, _ = tune(write("r.toml", '[kernel]\ngenerator = "magic"\n[problem]\nshapes = [{N = 4}]\n'), tmp_path)
    line = one_error_line(result)
    assert result.exit_code == 2 and "unknown generator 'magic'" in line and "dsl" in line and "templates" in line


def test_unknown_template(write, tmp_path):
    result, _ = tune(write("r.toml", '[kernel]\ngenerator = "templates"\nname = "fft"\n[problem]\nshapes = [{N = 4}]\n'
                           '[targets]\nnames = ["nvidia:sm_90"]\n'), tmp_path)
    line = one_error_line(result)
    assert result.exit_code == 2 and "kernel.name: unknown template 'fft'" in line and "softmax" in line


@pytest.mark.parametrize("target,message", [
    ("intel:xe", "unknown vendor in 'intel:xe'; must be one of: amd, nvidia"),
    ("nvidia:sm_75", "unknown target 'nvidia:sm_75'; must be one of:"),
])
def test_unknown_vendor_or_target(write, tmp_path, target, message):
    result, _ = tune(dsl_recipe(write), tmp_path, "--target", target)
    assert result.exit_code == 2 and message in one_error_line(result)


def test_dsl_file_that_does_not_import(write, tmp_path):
    recipe = dsl_recipe(write, kernel_text="import not_a_module_kt\n" + SCALED_ADD)
    result, clean = tune(recipe, tmp_path)
    line = one_error_line(result)
    assert result.exit_code == 2 and clean and "kernel.py: does not import" in line and "not_a_module_kt" in line


def test_dsl_file_lacking_the_named_function(write, tmp_path):
    recipe = dsl_recipe(write, kernel_extra='launch = "run_it"')
    result, _ = tune(recipe, tmp_path)
    line = one_error_line(result)
    assert result.exit_code == 2 and "kernel.launch: kernel.py has no function 'run_it'" in line


def test_reference_that_raises(write, tmp_path):
    broken = SCALED_ADD.replace('return {"out": 0.5', 'raise ValueError("bad reference")\n    return {"out": 0.5')
    result, clean = tune(dsl_recipe(write, kernel_text=broken), tmp_path)
    line = one_error_line(result)
    assert result.exit_code == 2 and clean and "reference function 'reference' raised ValueError: bad reference" in line


@pytest.mark.parametrize("trials", ["0", "-3"])
def test_trials_must_be_positive(write, tmp_path, trials):
    result, clean = tune(dsl_recipe(write), tmp_path, "--trials", trials)
    assert result.exit_code == 2 and clean and "--trials: must be at least 1" in one_error_line(result)


def test_job_that_finds_nothing_exits_1(write, tmp_path):
    wrong = SCALED_ADD.replace("alpha * x + y", "alpha * x - y")
    result, clean = tune(dsl_recipe(write, kernel_text=wrong, trials=2), tmp_path)
    line = one_error_line(result)
    assert result.exit_code == 1 and clean and "no candidate passed verification" in line and "wrong 2" in line
