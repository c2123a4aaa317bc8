"""The sequence-fused recurrent kernels of the library (lstm_seq, gru_seq: the time loop inside one
launch): the float64 references against torch.nn.LSTM / nn.GRU, interpreter verification on ragged
shapes, cross-compilation for nvidia and amd at the recipes' largest shape, recipes."""

import pytest
import torch

from tests.kernel_checks import compile_for, first_valid_params, stop_workers, template, verify


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    stop_workers()


@pytest.mark.parametrize("name", ["lstm_seq", "gru_seq"])
def test_reference_is_torch_nn_rnn_in_float64(name):
    from kt_cli.kernel import Kernel, Tensors

    kernel = Kernel.load(template(name))
    inputs = kernel.make_inputs({"T": 4, "B": 3, "H": 8, "I": 5}, "float32", Tensors("cpu", 0))
    inputs = {n: v.double() for n, v in inputs.items()}
    module = (torch.nn.LSTM if name == "lstm_seq" else torch.nn.GRU)(5, 8, dtype=torch.float64)
    with torch.no_grad():
        for n in ("w_ih", "w_hh", "b_ih", "b_hh"):
            getattr(module, f"{n.replace('w_', 'weight_').replace('b_', 'bias_')}_l0").copy_(inputs[n])
        state = (inputs["h0"][None], inputs["c0"][None]) if name == "lstm_seq" else inputs["h0"][None]
        y, state = module(inputs["x"], state)
    ref = kernel.reference(inputs)
    torch.testing.assert_close(ref["y"], y, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ref["h_n"], (state[0] if name == "lstm_seq" else state)[0], rtol=1e-12, atol=1e-12)
    if name == "lstm_seq":
        torch.testing.assert_close(ref["c_n"], state[1][0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["lstm_seq", "gru_seq"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_sequence_is_right_on_ragged_shapes(name, dtype):
    # BLOCK_H = 16 < H = 40: three hidden chunks, the last ragged; B = 3 and 19 leave batch rows masked
    result = verify(name, dtype, {"BLOCK_B": 16, "BLOCK_H": 16, "BLOCK_K": 16})
    assert result["worst_excess"] <= 1
    assert {"T": 5, "B": 3, "H": 40, "I": 24} in result["shapes"]


@pytest.mark.parametrize("target", ["nvidia:sm_90", "amd:gfx942"])
@pytest.mark.parametrize("name", ["lstm_seq", "gru_seq"])
def test_first_valid_point_cross_compiles_at_the_recipe_largest_shape(name, target):
    shape = {"T": 1024, "B": 16, "H": 1024, "I": 1024}
    params = first_valid_params(name, "bfloat16", shape, target)
    out = compile_for(name, target, shape, "bfloat16", params)
    assert (out["programs"], out["launches"]) == (16 // params["BLOCK_B"] or 1, 1)
    assert out["resources"]["registers"] > 0 and out["resources"]["programs_per_unit"] >= 1
    assert out["estimate"]["seconds"] > 0


@pytest.mark.parametrize("recipe", ["lstm_seq", "gru_seq"])
def test_recipe_ships_with_the_library(recipe):
    # feasible points for every target and shape: test_library_compute.py's recipe test covers these too
    from kt_cli.recipe.library import library_recipes

    assert recipe in library_recipes()
