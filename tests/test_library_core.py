"""The two kernels the core ships (softmax, matmul): interpreter verification and cross-compilation."""

import pytest

from tests.kernel_checks import compile_for, first_valid_params, stop_workers, verify


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    stop_workers()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_softmax_is_right_for_short_and_long_rows(dtype):
    # BLOCK_N=256 makes the 300- and 2000-wide rows take the multi-block (online) path
    result = verify("softmax", dtype, {"BLOCK_N": 256})
    assert result["worst_excess"] <= 1
    assert {"M": 5, "N": 2000} in result["shapes"]


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_matmul_is_right_on_ragged_shapes(dtype):
    result = verify("matmul", dtype, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4})
    assert result["worst_excess"] <= 1


@pytest.mark.parametrize("target", ["nvidia:sm_90", "amd:gfx942"])
@pytest.mark.parametrize("name,shape", [("softmax", {"M": 4096, "N": 4096}),
                                        ("matmul", {"M": 1024, "N": 1024, "K": 1024})])
def test_library_kernel_cross_compiles(name, shape, target):
    params = first_valid_params(name, "bfloat16", shape, target)
    out = compile_for(name, target, shape, "bfloat16", params)
    assert out["resources"]["registers"] > 0
    assert out["resources"]["programs_per_unit"] >= 1
    assert out["estimate"]["seconds"] > 0


def test_bound_launch_computes_what_launch_computes(tmp_path):
    """The timed callable (wrappers built once) runs the same kernel as the verified launch."""
    import subprocess
    import sys

    from tests.helpers import ROOT, process_env

    script = f"""
import torch
from kt_cli.kernel import Kernel, KernelSource, Tensors
k = Kernel.load(KernelSource({str(ROOT / 'recipes/examples/scaled_add.py')!r}, "dsl", "scaled_add"))
inputs = k.make_inputs({{"N": 3000}}, "float32", Tensors("cpu", 0))
k.bound_launch(inputs, {{"BLOCK": 512}}, {{"num_warps": 4}})()
expected = k.reference(inputs)["out"]
assert torch.allclose(inputs["out"].double(), expected, atol=1e-5), "bound launch differs"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=process_env(TRITON_INTERPRET="1"), timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
