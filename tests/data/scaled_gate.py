"""An element-wise gated kernel in the style of LLM kernel libraries: a float scalar argument cast with
`.to(tl.float32)`, and bf16 add, sub and mul of two bf16 tensors. Both are right on a GPU and were
wrong under Triton 3.9's interpreter (kt_cli/evaluate/interpreter_fixes.py)."""

import torch
import triton
import triton.language as tl

VERIFY_SHAPES = [{"N": 1000}, {"N": 333}]


@triton.jit
def scaled_gate(out_ptr, x_ptr, g_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    g = tl.load(g_ptr + offs, mask=mask)
    gate = (g.to(tl.float32) * alpha.to(tl.float32)).to(g.dtype)
    tl.store(out_ptr + offs, (x - g) * gate + x, mask=mask)


def make_inputs(shape, dtype, t):
    n = shape["N"]  # x in [2, 3), g in [0.5, 1): nothing cancels, so bf16 rounding stays within tolerance
    return {"x": t.rand(n, dtype=dtype, low=2.0, high=3.0), "g": t.rand(n, dtype=dtype, low=0.5, high=1.0),
            "out": t.empty(n, dtype=dtype)}


def reference(inputs):
    x, g = inputs["x"].double(), inputs["g"].double()
    return {"out": (x - g) * (g * 0.75) + x}


def launch(k, inputs, params):
    n = inputs["x"].numel()
    k.scaled_gate[(triton.cdiv(n, params["BLOCK"]),)](inputs["out"], inputs["x"], inputs["g"], 0.75, n,
                                                       BLOCK=params["BLOCK"])
