"""`kt init FILE[:FUNCTION]`: a recipe for the user's own kernel from its signature, and the protocol
functions it lacks, which run once their TODOs are filled in."""

import json

from kt_cli.recipe.parse import load_recipe
from tests.helpers import ROOT, kt, one_error_line

BARE = '''import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)
'''


def test_a_bare_kernel_gets_a_recipe_and_glue_that_tunes_once_completed(tmp_path):
    kernel = tmp_path / "add.py"
    kernel.write_text(BARE)
    result = kt("init", kernel)
    assert result.exit_code == 0, result.output
    recipe = load_recipe(tmp_path / "add.toml")  # a valid recipe as written
    assert recipe.kernel["kernel"] == "add_kernel" and set(recipe.search.space) == {"BLOCK_SIZE", "num_warps",
                                                                                    "num_stages"}
    glue = result.stdout[result.stdout.index("def make_inputs"):]
    assert '"output": t.empty(shape["N"]' in glue and 'BLOCK_SIZE=params["BLOCK_SIZE"]' in glue
    # what a user fills in: the size and the reference
    completed = glue.replace('n_elements = ...  # TODO', 'n_elements = inputs["x"].numel()').replace(
        '{"output": ...}', '{"output": inputs["x"].double() + inputs["y"].double()}')
    kernel.write_text(BARE + "\n\n" + completed)
    text = (tmp_path / "add.toml").read_text().replace("N = 4096", "N = 3000").replace("trials = 32", "trials = 2")
    (tmp_path / "add.toml").write_text(text.replace('dtype = "float16"', 'dtype = "float32"')
                                       .replace('names = ["amd:gfx942", "nvidia:sm_90"]', 'names = ["nvidia:sm_90"]'))
    tuned = kt("tune", tmp_path / "add.toml", "--out", tmp_path / "art")
    assert tuned.exit_code == 0, tuned.output
    trials = [json.loads(line) for line in (tmp_path / "art" / "add.kt" / "trials.jsonl").read_text().splitlines()]
    assert [t["failure_kind"] for t in trials] == ["ok", "ok"]


def test_an_autotuned_kernel_leaves_the_space_to_its_configs(tmp_path):
    kernel = tmp_path / "rms.py"
    kernel.write_text((ROOT / "tests" / "data" / "autotuned_rmsnorm.py").read_text())
    result = kt("--json", "init", kernel)
    assert result.exit_code == 0, result.output
    said = json.loads(result.stdout)
    assert said["autotuned"] and said["kernel"] == "rmsnorm_fwd" and said["glue"] == ""  # it has the protocol
    recipe = load_recipe(tmp_path / "rms.toml")
    assert recipe.search.space == {} and list(recipe.problem.shapes) == [{"M": 4096, "N": 4096}]


def test_init_refuses_in_one_line_and_writes_nothing(tmp_path):
    two = tmp_path / "two.py"
    two.write_text(BARE + BARE.split("\n\n\n")[1].replace("add_kernel", "sub_kernel"))
    (tmp_path / "add.py").write_text(BARE)
    (tmp_path / "add.toml").write_text("# mine\n")
    cases = {
        (tmp_path / "missing.py",): "not found",
        (two,): "name one: kt init two.py:NAME",
        (f"{two}:nope",): "not a @triton.jit function of the file; it has: add_kernel, sub_kernel",
        (tmp_path / "add.py",): "exists; pass --force",
        (tmp_path / "add.py", "--out", tmp_path / "add.py"): "is the kernel file itself",
    }
    for args, expected in cases.items():
        result = kt("init", *args)
        assert result.exit_code == 2 and expected in one_error_line(result), (args, result.output)
    assert (tmp_path / "add.toml").read_text() == "# mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add.py", "add.toml", "two.py"]


def test_an_autotuned_kernel_without_glue_takes_its_dimensions_from_the_autotune_key(tmp_path):
    kernel = tmp_path / "rms.py"
    text = (ROOT / "tests" / "data" / "autotuned_rmsnorm.py").read_text()
    kernel.write_text(text[:text.index("def make_inputs")])  # the kernel alone, as a library publishes it
    result = kt("init", kernel)
    assert result.exit_code == 0, result.output
    recipe = load_recipe(tmp_path / "rms.toml")
    assert list(recipe.problem.shapes) == [{"n_cols": 4096}]  # key=["n_cols"] names the problem's size
    assert 'shape["n_cols"]' in result.stdout and "def launch(k, inputs, params):" in result.stdout


def _commented_reference_config(recipe_text: str) -> dict:
    """The configuration the recipe's commented `# reference_config = {...}` line names, as TOML reads it."""
    import tomllib

    line = next(l for l in recipe_text.splitlines() if l.startswith("# reference_config = "))
    return tomllib.loads(line[2:])["reference_config"]


def test_the_recipe_names_the_configuration_an_autotuned_kernel_is_verified_against(tmp_path):
    """Without a reference function kt checks candidates against the kernel at its reference
    configuration (first SEEDS point, else first @triton.autotune config): the recipe's commented
    reference_config is that configuration, so uncommenting it changes nothing."""
    from kt_cli.kernel import Kernel, KernelSource

    text = (ROOT / "tests" / "data" / "autotuned_rmsnorm.py").read_text()
    cases = {"rms.py": (text, {"BLOCK_N": 128, "num_warps": 2, "num_stages": 3}),  # Config's num_stages=3
             "seeded.py": (text + '\n\nSEEDS = [{"BLOCK_N": 256, "num_warps": 8}, {"BLOCK_N": 128}]\n',
                           {"BLOCK_N": 256, "num_warps": 8})}
    for name, (source, expected) in cases.items():
        kernel = tmp_path / name
        kernel.write_text(source)
        result = kt("init", kernel)
        assert result.exit_code == 0, result.output
        shown = _commented_reference_config(kernel.with_suffix(".toml").read_text())
        params, options = Kernel.load(KernelSource(str(kernel), "dsl", "rmsnorm_fwd")).reference_point()
        assert shown == expected == {**params, **options}, (name, shown)
