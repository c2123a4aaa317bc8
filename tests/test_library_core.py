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
    assert result["max_rel_error"] < result["tolerance"]
    assert {"M": 5, "N": 2000} in result["shapes"]


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_matmul_is_right_on_ragged_shapes(dtype):
    result = verify("matmul", dtype, {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4})
    assert result["max_rel_error"] < result["tolerance"]


@pytest.mark.parametrize("target", ["nvidia:sm_90", "amd:gfx942"])
@pytest.mark.parametrize("name,shape", [("softmax", {"M": 4096, "N": 4096}),
                                        ("matmul", {"M": 1024, "N": 1024, "K": 1024})])
def test_library_kernel_cross_compiles(name, shape, target):
    params = first_valid_params(name, "bfloat16", shape, target)
    out = compile_for(name, target, shape, "bfloat16", params)
    assert out["resources"]["registers"] > 0
    assert out["resources"]["programs_per_unit"] >= 1
    assert out["estimate"]["seconds"] > 0
