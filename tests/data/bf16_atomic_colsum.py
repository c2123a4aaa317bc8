"""Column sums of a bf16 matrix, both ways kernel libraries write them: a program per row block adding
into the output with tl.atomic_add (ATOMIC = 1), or a program per column block walking every row
(ATOMIC = 0). Both are right on a GPU; Triton 3.9's interpreter refuses the bf16 atomic_add
("Unsupported data type"), a defect of its own (kt_cli/evaluate/interpreter_fixes.py)."""

import triton
import triton.language as tl

VERIFY_SHAPES = [{"M": 4, "N": 100}]


@triton.jit
def col_sum(out_ptr, x_ptr, m, n, BLOCK: tl.constexpr, ATOMIC: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    if ATOMIC:  # program (column block, row): its row's slice added into the output
        x = tl.load(x_ptr + tl.program_id(1) * n + cols, mask=mask, other=0.0)
        tl.atomic_add(out_ptr + cols, x, mask=mask)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for row in range(0, m):
            acc += tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + cols, acc.to(out_ptr.dtype.element_ty), mask=mask)


def make_inputs(shape, dtype, t):
    x = (t.rand(shape["M"], shape["N"], dtype=dtype) * 2).floor()  # 0 or 1: every partial sum is exact in bf16
    return {"x": x, "out": t.empty(shape["N"], dtype=dtype)}


def reference(inputs):
    return {"out": inputs["x"].double().sum(dim=0)}


def launch(k, inputs, params):
    m, n = inputs["x"].shape
    if params["ATOMIC"]:
        inputs["out"].zero_()  # the atomics' accumulator
    grid = (triton.cdiv(n, params["BLOCK"]), m if params["ATOMIC"] else 1)
    k.col_sum[grid](inputs["out"], inputs["x"], m, n, BLOCK=params["BLOCK"], ATOMIC=params["ATOMIC"])
