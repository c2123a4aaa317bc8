"""Row totals and running totals of a bf16 matrix, summed in bf16 (tl.sum, tl.cumsum): right on a GPU,
and garbage under Triton 3.9's interpreter, whose reductions and scans add the raw bits of bf16 values as
integers (kt_cli/evaluate/interpreter_fixes.py). Its inputs are 0 or 1, so that every partial sum
is exact in bf16 whatever order a GPU adds in."""

import triton
import triton.language as tl

VERIFY_SHAPES = [{"M": 4, "N": 100}]


@triton.jit
def row_counts(total_ptr, prefix_ptr, x_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
    tl.store(total_ptr + row, tl.sum(x, axis=0))
    tl.store(prefix_ptr + row * n + offs, tl.cumsum(x, axis=0), mask=mask)


def make_inputs(shape, dtype, t):
    m, n = shape["M"], shape["N"]
    return {"x": (t.rand(m, n, dtype=dtype) * 2).floor(), "total": t.empty(m, dtype=dtype),
            "prefix": t.empty(m, n, dtype=dtype)}


def reference(inputs):
    x = inputs["x"].double()
    return {"total": x.sum(dim=1), "prefix": x.cumsum(dim=1)}


def launch(k, inputs, params):
    m, n = inputs["x"].shape
    k.row_counts[(m,)](inputs["total"], inputs["prefix"], inputs["x"], n, BLOCK=params["BLOCK"])
