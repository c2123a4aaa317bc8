"""Memory-bound kernels of the library (layernorm, rmsnorm, axpy, gemv, spmv, jacobi2d, cg): interpreter
verification at small sizes, cross-compilation for nvidia and amd at each recipe's real shapes, and
broken or unusual inputs that must be caught."""

from pathlib import Path

import pytest

from kt_cli.kernel import KernelSource, Tensors, import_module
from kt_cli.recipe.parse import load_recipe
from kt_cli.evaluate.failure import WorkerFailure
from tests.kernel_checks import compile_for, first_valid_params, stop_workers, template, verify, verify_source

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ("layernorm", "rmsnorm", "axpy", "gemv", "spmv", "jacobi2d", "cg")


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    stop_workers()


def verify_file(path: Path, dtype: str, params: dict) -> dict:
    """Interpreter verification of a kernel module outside the library, through kt's worker."""
    source = KernelSource(str(path), "templates", path.stem)
    return verify_source(source, params, import_module(str(path)).VERIFY_SHAPES, dtype)


def assert_passes(result: dict) -> None:
    assert result["trials"] >= 3
    assert result["worst_excess"] <= 1


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("block", [128, 512])
def test_norms_are_right_for_rows_of_one_and_many_blocks(name, dtype, block):
    # BLOCK_N=128: every verification row (300, 1000, 512 wide) takes the two-pass loop, ragged or even;
    # BLOCK_N=512: 300 fits one masked block, 512 one exact block, 1000 loops over two ragged blocks
    result = verify(name, dtype, {"BLOCK_N": block})
    assert_passes(result)
    assert {"M": 5, "N": 1000} in result["shapes"]


@pytest.mark.parametrize("name", ["softmax", "layernorm", "rmsnorm"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_row_kernels_are_right_with_several_rows_a_program(name, dtype):
    # 4 rows a program, prefetched: M=37 and M=5 leave the last program rows past the end; rows of
    # 300 fit the 2048 block masked, 1000-2000 fit it masked, 512 and 4096 are checked where they fit
    result = verify(name, dtype, {"BLOCK_N": 4096, "ROWS": 4, "ROW_STAGES": 2})
    assert_passes(result)
    assert {s["M"] for s in result["shapes"]} >= {37, 5}


def test_row_prefetch_compiles_to_asynchronous_copies():
    """ROW_STAGES=2 makes Triton load the next row into shared memory while this one is reduced; the
    compiled kernel says so by the shared memory it asks for (a stage of one 32768-wide bf16 row)."""
    shape = {"M": 4096, "N": 32768}
    plain = {"BLOCK_N": 32768, "ROWS": 4, "ROW_STAGES": 1, "num_warps": 16, "num_stages": 1}
    one = compile_for("softmax", "nvidia:sm_90", shape, "bfloat16", plain)["resources"]["shared_bytes"]
    two = compile_for("softmax", "nvidia:sm_90", shape, "bfloat16", {**plain, "ROW_STAGES": 2})["resources"]
    assert two["shared_bytes"] >= 32768 * 2 > one
    assert two["programs_per_unit"] >= 1


@pytest.mark.parametrize("name,dtype,params", [
    ("axpy", "float32", {"BLOCK": 1024}),
    ("axpy", "bfloat16", {"BLOCK": 2048}),
    ("gemv", "float32", {"BLOCK_M": 8, "BLOCK_N": 128}),  # ragged M and N, several column tiles
    ("gemv", "bfloat16", {"BLOCK_M": 2, "BLOCK_N": 256}),
    ("jacobi2d", "float32", {"BLOCK_M": 4, "BLOCK_N": 16}),  # interior (unmasked) and edge tiles
    ("jacobi2d", "float32", {"BLOCK_M": 1, "BLOCK_N": 64}),
    ("spmv", "float32", {"BLOCK_M": 16, "BLOCK_K": 4}),  # rows of 7 and 16 non-zeros: several chunks
    ("spmv", "float32", {"BLOCK_M": 64, "BLOCK_K": 16}),
    ("cg", "float32", {"BLOCK_M": 16, "BLOCK_K": 4, "BLOCK": 128}),  # many programs feed each atomic dot
    ("cg", "float32", {"BLOCK_M": 64, "BLOCK_K": 8, "BLOCK": 1024}),
])
def test_vector_and_sparse_kernels_are_right(name, dtype, params):
    assert_passes(verify(name, dtype, params))


def _recipe_cases():
    for name in KERNELS:
        recipe = load_recipe(ROOT / "recipes" / f"{name}.toml")
        assert recipe.kernel["name"] == name and recipe.targets == ("nvidia:sm_90", "amd:gfx942")
        for shape in recipe.problem.shapes:
            yield name, recipe.problem.dtype, shape


@pytest.mark.parametrize("target", ["nvidia:sm_90", "amd:gfx942"])
@pytest.mark.parametrize("name,dtype,shape", list(_recipe_cases()))
def test_kernel_cross_compiles_at_its_recipe_shape(name, dtype, shape, target):
    params = first_valid_params(name, dtype, shape, target)
    out = compile_for(name, target, shape, dtype, params)
    assert out["resources"]["registers"] > 0
    assert out["resources"]["spill_bytes"] == 0
    assert out["resources"]["programs_per_unit"] >= 1
    assert out["estimate"]["seconds"] > 0
    assert out["estimate"]["bound"] in ("dram", "l2")  # memory-bound kernels


def test_layernorm_that_takes_statistics_from_the_first_block_only_is_rejected(tmp_path):
    text = template("layernorm").text()
    first_pass = "for start in range(0, n_cols, BLOCK_N):\n            if EVEN_N:\n                d ="
    assert text.count(first_pass) == 1
    broken = tmp_path / "layernorm_first_block.py"
    broken.write_text(text.replace(first_pass, first_pass.replace("range(0, n_cols,", "range(0, BLOCK_N,")))
    # rows that fit one block never reach the bug: the module itself loads and verifies
    assert_passes(verify_file(broken, "float32", {"BLOCK_N": 1024}))
    with pytest.raises(WorkerFailure) as failure:
        verify_file(broken, "float32", {"BLOCK_N": 128})
    assert failure.value.kind == "wrong"
    assert "output 'y'" in failure.value.message and "relative error" in failure.value.message


def test_spmv_handles_rows_of_any_length(tmp_path):
    # The library problem has a fixed number of non-zeros a row; the kernel must not depend on it.
    ragged = tmp_path / "spmv_ragged.py"
    ragged.write_text(template("spmv").text() + '''

def make_inputs(shape, dtype, t):
    """Rows of 0 to 2 * NNZ_PER_ROW non-zeros (empty rows included)."""
    n, most = shape["N"], 2 * shape["NNZ_PER_ROW"]
    lengths = torch.randint(0, most + 1, (n,), generator=t.generator())
    lengths[::5] = 0
    row_ptr = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)])
    nnz = int(row_ptr[-1])
    return {"row_ptr": t.as_tensor(row_ptr, dtype=torch.int32),
            "col_idx": t.as_tensor(torch.randint(0, n, (nnz,), generator=t.generator()), dtype=torch.int32),
            "values": t.randn(nnz, dtype=dtype), "x": t.randn(n, dtype=dtype), "y": t.empty(n, dtype=dtype)}
''')
    assert_passes(verify_file(ragged, "float32", {"BLOCK_M": 16, "BLOCK_K": 4}))


def test_cg_matrix_is_symmetric_positive_definite_with_fixed_row_length():
    import torch

    cg = import_module(template("cg").path)
    n, per_row = 96, 7
    row_ptr, col_idx, values = cg.spd_csr(n, per_row, Tensors("cpu", 3), torch.float64)
    dense = torch.zeros(n, n, dtype=torch.float64)
    rows = torch.arange(n).repeat_interleave(per_row)
    dense[rows, col_idx.long()] = values
    assert row_ptr.diff().eq(per_row).all()
    assert all(len(set(col_idx[i * per_row:(i + 1) * per_row].tolist())) == per_row for i in range(n))
    assert torch.equal(dense, dense.t())
    assert torch.linalg.eigvalsh(dense).min() > 0


@pytest.mark.parametrize("name", KERNELS)
def test_baseline_torch_op_computes_what_the_kernel_computes(name):
    # kt reports speed against the baseline: a baseline that solves another problem makes that ratio a lie
    import torch

    module = import_module(template(name).path)
    shape = module.VERIFY_SHAPES[0]
    inputs = module.make_inputs(dict(shape), torch.float32, Tensors("cpu", 1))
    given = {k: v for k, v in inputs.items() if k not in module.OUTPUTS}
    expected = module.reference(given)
    got = module.baseline(given)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(module.OUTPUTS)
    for out_name, value in zip(module.OUTPUTS, got):
        assert torch.allclose(value.double(), expected[out_name], rtol=1e-4, atol=1e-4), out_name


@pytest.mark.parametrize("name,dtype,shape", list(_recipe_cases()))
def test_minimal_bytes_are_every_tensor_read_or_written_once(name, dtype, shape):
    # % of peak bandwidth divides by bytes_moved: each of these kernels must touch every input and
    # output tensor, and nothing forces a second DRAM pass, so the minimum is their total size
    from kt_cli.kernel import torch_dtype

    module = import_module(template(name).path)
    inputs = module.make_inputs(dict(shape), torch_dtype(dtype), Tensors("meta", 0))
    total = sum(v.numel() * v.element_size() for v in inputs.values() if hasattr(v, "element_size"))
    assert module.bytes_moved(dict(shape), torch_dtype(dtype)) == total
    assert module.shape_of(inputs) == shape
