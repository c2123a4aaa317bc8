"""A user's own Triton kernel for the dsl generator: out = alpha * x + y over a flat vector."""

import torch
import triton
import triton.language as tl

OUTPUTS = ("out",)
VERIFY_SHAPES = [{"N": 1000}, {"N": 4097}]


@triton.jit
def scaled_add(out_ptr, x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


def make_inputs(shape, dtype, t):
    n = shape["N"]
    return {"x": t.randn(n, dtype=dtype), "y": t.randn(n, dtype=dtype), "out": t.empty(n, dtype=dtype)}


def reference(inputs):
    return {"out": 0.5 * inputs["x"].double() + inputs["y"].double()}


def baseline(inputs):
    return torch.add(inputs["y"], inputs["x"], alpha=0.5)


def launch(k, inputs, params):
    n = inputs["x"].numel()
    block = params["BLOCK"]
    k.scaled_add[(triton.cdiv(n, block),)](inputs["out"], inputs["x"], inputs["y"], 0.5, n, BLOCK=block)


def flops(shape, dtype):
    return 2.0 * shape["N"]


def bytes_moved(shape, dtype):
    return 3.0 * shape["N"] * dtype.itemsize


def shape_of(inputs):
    return {"N": inputs["x"].numel()}
