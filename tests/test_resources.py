"""A candidate over the target's shared-memory limit is refused as invalid after cross-compiling,
before anything runs, and the study goes on."""

import json

from tests.helpers import dsl_recipe, kt

BIG_DOT = '''
import torch
import triton
import triton.language as tl

OUTPUTS = ("out",)
VERIFY_SHAPES = [{"N": 64}]


@triton.jit
def square(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = (offs[:, None] < n) & (offs[None, :] < n)
    a = tl.load(x_ptr + offs[:, None] * n + offs[None, :], mask=mask, other=0.0)
    b = tl.dot(a, a)
    tl.store(out_ptr + offs[:, None] * n + offs[None, :], b, mask=mask)


def make_inputs(shape, dtype, t):
    n = shape["N"]
    return {"x": t.randn(n, n, dtype=dtype), "out": t.empty(n, n, dtype=dtype)}


def reference(inputs):
    x = inputs["x"].double()
    return {"out": x @ x}


def launch(k, inputs, params):
    n = inputs["x"].shape[0]
    k.square[(1,)](inputs["out"], inputs["x"], n, BLOCK=params["BLOCK"])


def flops(shape, dtype):
    return 2.0 * shape["N"] ** 3
'''


def test_over_limit_shared_memory_is_invalid_before_running(write, tmp_path):
    # fp32 256x256 dot operands staged in shared memory: 2 x 256 KiB, over sm_80's 163 KiB per block
    recipe = dsl_recipe(write, kernel_text=BIG_DOT, space="BLOCK = [64, 256]\nnum_warps = [4]",
                        shapes="[{N = 64}]", extra='sampler = "grid"', trials=2)
    recipe.write_text(recipe.read_text().replace('names = ["nvidia:sm_90"]', 'names = ["nvidia:sm_80"]'))
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    trials = [json.loads(l) for l in (tmp_path / "art" / "recipe.kt" / "trials.jsonl").read_text().splitlines()]
    kinds = {t["params"]["BLOCK"]: t for t in trials}
    assert kinds[64]["failure_kind"] == "ok"
    assert kinds[256]["failure_kind"] == "invalid"
    assert "of shared memory, nvidia:sm_80 has" in kinds[256]["message"]
    assert not kinds[256]["verification"]  # refused before it was run
