"""The sequence-fused recurrent kernels of the library (lstm_seq, gru_seq, lstm_heads, gru_heads: the
time loop inside one launch): the float64 references against torch.nn.LSTM / nn.GRU, interpreter verification on
ragged shapes, cross-compilation for nvidia and amd at the recipes' largest shape, recipes."""

import pytest
import torch

from tests.kernel_checks import compile_for, first_valid_params, stop_workers, template, verify


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    stop_workers()


def _torch_rnn(lstm: bool, inputs: dict, w_hh) -> dict:
    """nn.LSTM / nn.GRU (float64) holding the kernel's weights, with `w_hh` as its W_hh: its outputs by name."""
    size, hidden = inputs["x"].shape[2], inputs["h0"].shape[1]
    module = (torch.nn.LSTM if lstm else torch.nn.GRU)(size, hidden, dtype=torch.float64)
    with torch.no_grad():
        for param, value in (("weight_ih_l0", inputs["w_ih"]), ("weight_hh_l0", w_hh), ("bias_ih_l0", inputs["b_ih"]),
                             ("bias_hh_l0", inputs["b_hh"])):
            getattr(module, param).copy_(value)
        if lstm:
            y, (h_n, c_n) = module(inputs["x"], (inputs["h0"][None], inputs["c0"][None]))
            return {"y": y, "h_n": h_n[0], "c_n": c_n[0]}
        y, h_n = module(inputs["x"], inputs["h0"][None])
        return {"y": y, "h_n": h_n[0]}


@pytest.mark.parametrize("name", ["lstm_seq", "gru_seq"])
def test_reference_is_torch_nn_rnn_in_float64(name):
    from kt_cli.kernel import Kernel, Tensors

    kernel = Kernel.load(template(name))
    inputs = kernel.make_inputs({"T": 4, "B": 3, "H": 8, "I": 5}, "float32", Tensors("cpu", 0))
    inputs = {n: v.double() for n, v in inputs.items()}
    ref, expected = kernel.reference(inputs), _torch_rnn(name == "lstm_seq", inputs, inputs["w_hh"])
    assert set(ref) == set(expected)  # y, h_n (and c_n)
    for out in ref:
        torch.testing.assert_close(ref[out], expected[out], rtol=1e-12, atol=1e-12)


GRID_POINT = {"GRID": 1, "BLOCK_B": 16, "BLOCK_H": 8, "BLOCK_K": 16}


@pytest.mark.parametrize("name", ["lstm_seq", "gru_seq"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("params", [{"GRID": 0, "BLOCK_B": 16, "BLOCK_H": 16, "BLOCK_K": 16}, GRID_POINT],
                         ids=["batch-tiles", "grid"])
def test_sequence_is_right_on_ragged_shapes(name, dtype, params):
    # GRID = 0: BLOCK_H = 16 < H = 40, three hidden chunks, the last ragged; GRID = 1: five programs of 8 hidden
    # units, h split in four K slices of 16 (H padded to 64), the last program's units partly masked.
    # B = 3 and 19 leave batch rows masked (19: two batch tiles).
    result = verify(name, dtype, params)
    assert result["worst_excess"] <= 1
    assert {"T": 5, "B": 3, "H": 40, "I": 24} in result["shapes"]


@pytest.mark.parametrize("target", ["nvidia:sm_90", "amd:gfx942", "amd:gfx950"])
@pytest.mark.parametrize("name", ["lstm_seq", "gru_seq"])
def test_grid_variant_cross_compiles_one_resident_program_per_slice(name, target):
    from kt_cli.kernel import Kernel, record_launches

    shape = {"T": 1024, "B": 16, "H": 1024, "I": 1024}
    params = {**GRID_POINT, "BLOCK_K": 128, "num_warps": 4, "num_stages": 2}
    out = compile_for(name, target, shape, "bfloat16", params)
    assert out["launches"] == 2  # the input projection of every step, then the recurrence
    # the recurrence is the main launch (SETUP_KERNELS names the projection): its grid and resources
    assert out["programs"] == 1024 // 8
    assert out["resources"]["spill_bytes"] == 0 and out["resources"]["registers"] > 0
    projection, recurrence = record_launches(Kernel.load(template(name)), shape, "bfloat16",
                                             {k: v for k, v in params.items() if k.isupper()},
                                             {"num_warps": 4, "num_stages": 2})
    assert recurrence.grid == (1024 // 8, 1) and recurrence.args["GRID_SYNC"] is True
    assert recurrence.args["t_first"] == 0 and recurrence.args["t_last"] == 1024


@pytest.mark.parametrize("name", ["lstm_seq", "gru_seq"])
def test_grid_variant_refuses_more_programs_than_the_device_holds_at_once(name, monkeypatch):
    # a grid barrier waits for every program: with more programs than SMs some would wait for ever
    from kt_cli.kernel import Kernel

    module = Kernel.load(template(name)).module
    monkeypatch.setattr(module, "_units", lambda index: 100)
    module._check_resident(torch.device("cuda", 0), (100, 1))
    with pytest.raises(ValueError, match="101 programs, 100 SMs/CUs"):
        module._check_resident(torch.device("cuda", 0), (101, 1))


@pytest.mark.parametrize("target", ["nvidia:sm_90", "amd:gfx942"])
@pytest.mark.parametrize("name", ["lstm_seq", "gru_seq"])
def test_first_valid_point_cross_compiles_at_the_recipe_largest_shape(name, target):
    shape = {"T": 1024, "B": 16, "H": 1024, "I": 1024}
    params = first_valid_params(name, "bfloat16", shape, target)
    out = compile_for(name, target, shape, "bfloat16", params)
    assert (out["programs"], out["launches"]) == (16 // params["BLOCK_B"] or 1, 1)
    assert out["resources"]["registers"] > 0 and out["resources"]["programs_per_unit"] >= 1
    assert out["estimate"]["seconds"] > 0


@pytest.mark.parametrize("recipe", ["lstm_seq", "gru_seq", "lstm_heads", "gru_heads"])
def test_recipe_ships_with_the_library(recipe):
    # feasible points for every target and shape: test_library_compute.py's recipe test covers these too
    from kt_cli.recipe.library import library_recipes

    assert recipe in library_recipes()


HEADS_SHAPE = {"T": 1024, "B": 16, "NH": 16, "DH": 64, "I": 1024}  # recipes/lstm_heads.toml's largest
HEADS = ["lstm_heads", "gru_heads"]


@pytest.mark.parametrize("name", HEADS)
def test_heads_reference_is_the_torch_rnn_with_a_block_diagonal_w_hh(name):
    from kt_cli.kernel import Kernel, Tensors

    kernel = Kernel.load(template(name))
    gates = 4 if name == "lstm_heads" else 3
    for shape in ({"T": 4, "B": 3, "NH": 3, "DH": 5, "I": 7}, {"T": 3, "B": 2, "NH": 1, "DH": 6, "I": 4}):
        inputs = {n: v.double() for n, v in kernel.make_inputs(shape, "float32", Tensors("cpu", 0)).items()}
        full = kernel.module.block_diagonal(inputs["w_hh"])
        hidden = shape["NH"] * shape["DH"]
        assert full.shape == (gates * hidden, hidden)
        head_of = torch.arange(hidden) // shape["DH"]  # a unit's head; row g * H + unit
        off_block = head_of.repeat(gates)[:, None] != head_of[None, :]
        assert not full[off_block].any()  # a head's gates read only its own units of h
        if shape["NH"] == 1:  # one head: the torch RNN's own W_hh
            torch.testing.assert_close(full, inputs["w_hh"][0], rtol=0, atol=0)
        ref, expected = kernel.reference(inputs), _torch_rnn(name == "lstm_heads", inputs, full)
        assert set(ref) == set(expected)
        for out in ref:
            torch.testing.assert_close(ref[out], expected[out], rtol=1e-12, atol=1e-12)
        for out, got in zip(kernel.module.OUTPUTS, kernel.module.baseline(inputs)):  # the baseline computes it too
            torch.testing.assert_close(got, ref[out], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", HEADS)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_heads_sequence_is_right_on_ragged_shapes(name, dtype):
    # DH = 24 padded to 32 (the padded units' weights and h stay 0), three heads; B = 3 and 19 leave batch
    # rows masked (19: two batch tiles)
    result = verify(name, dtype, {"BLOCK_B": 16, "num_warps": 4, "num_stages": 2})
    assert result["worst_excess"] <= 1
    assert {"T": 5, "B": 3, "NH": 3, "DH": 24, "I": 20} in result["shapes"]


@pytest.mark.parametrize("target", ["nvidia:sm_90", "amd:gfx942", "amd:gfx950"])
@pytest.mark.parametrize("name", HEADS)
def test_heads_cross_compile_one_program_a_head_and_batch_tile(name, target):
    from kt_cli.kernel import Kernel, record_launches

    params = {"BLOCK_B": 16, "num_warps": 4, "num_stages": 2}
    out = compile_for(name, target, HEADS_SHAPE, "bfloat16", params)
    assert out["launches"] == 2  # the input projection of every step, then the heads' recurrence
    assert out["programs"] == 16  # the recurrence is the main launch: 16 heads x one batch tile of 16 rows
    assert out["resources"]["spill_bytes"] == 0 and out["resources"]["registers"] > 0
    projection, recurrence = record_launches(Kernel.load(template(name)), HEADS_SHAPE, "bfloat16",
                                             {"BLOCK_B": 16}, {"num_warps": 4, "num_stages": 2})
    assert recurrence.fn.__name__ == f"{name}_kernel" and recurrence.grid == (16, 1)
    assert recurrence.args["DH_PAD"] == 64 and out["estimate"]["seconds"] > 0
    # a batch of one: Triton compiles B = 1 as a constant, which takes no cast (the first version's failed)
    one = compile_for(name, target, {**HEADS_SHAPE, "B": 1, "NH": 4, "I": 256}, "bfloat16", params)
    assert one["programs"] == 4 and one["resources"]["registers"] > 0
