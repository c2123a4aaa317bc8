"""The recipes that ship with kt: packaged with the library's kernels, listed by `kt kernels`, tuned by name."""

import importlib.resources
import json
import subprocess
import sys
import tomllib
import zipfile

import pytest

from tests.helpers import ROOT, kt, one_error_line


def _library_in_checkout() -> set[str]:
    return {p.stem for p in (ROOT / "recipes").glob("*.toml")
            if tomllib.loads(p.read_text())["kernel"]["generator"] == "templates"}


def test_kt_kernels_lists_every_library_kernel_with_its_dimensions_and_knobs():
    result = kt("kernels", "--json")
    assert result.exit_code == 0, result.stderr
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert set(rows) == _library_in_checkout()
    assert rows["softmax"]["dimensions"] == ["M", "N"] and "BLOCK_N" in rows["softmax"]["knobs"]
    assert "waves_per_eu (amd)" in rows["softmax"]["knobs"]  # a vendor's own knob says whose it is
    table = kt("kernels")
    assert table.exit_code == 0 and "matmul_fp8" in table.stdout and "M,N,K" in table.stdout


def test_the_library_recipes_are_package_resources():
    recipes = importlib.resources.files("kt_templates") / "recipes"
    assert {name for name in _library_in_checkout() if (recipes / f"{name}.toml").is_file()} == _library_in_checkout()


def test_a_built_wheel_carries_the_recipes_beside_the_kernels(tmp_path):
    pytest.importorskip("setuptools")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path)], check=True, capture_output=True)
    names = zipfile.ZipFile(next(tmp_path.glob("*.whl"))).namelist()
    assert {f"kt_templates/recipes/{n}.toml" for n in _library_in_checkout()} <= set(names)
    assert "kt_templates/kernels/softmax.py" in names


def test_kt_tune_takes_a_library_kernels_name(tmp_path):
    # the recipe is found and read: the refusal is of the target, after it
    result = kt("tune", "softmax", "--target", "nvidia:sm_00", "--out", tmp_path)
    assert result.exit_code == 2 and "nvidia:sm_00" in one_error_line(result)
    misspelt = kt("tune", "sofmax", "--out", tmp_path)
    line = one_error_line(misspelt)
    assert misspelt.exit_code == 2 and "sofmax: no recipe file" in line and "did you mean 'softmax'" in line
    assert not any(tmp_path.iterdir())
