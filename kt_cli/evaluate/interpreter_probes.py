"""Tiny kernels that show whether Triton's interpreter still has a defect kt_cli.evaluate.interpreter_fixes
knows. Run only in a worker with TRITON_INTERPRET=1, on the CPU."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _bf16_arithmetic(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, x + y)
    tl.store(out_ptr + N + offs, x - y)
    tl.store(out_ptr + 2 * N + offs, x * y)


@triton.jit
def _bf16_reductions(out_ptr, index_ptr, x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr, tl.sum(x, axis=0))
    tl.store(out_ptr + 1 + offs, tl.cumsum(x, axis=0))
    tl.store(out_ptr + 1 + N + offs, tl.fma(x, x, x))
    tl.store(index_ptr, tl.argmax(x, axis=0))


@triton.jit
def _float_scalar(out_ptr, alpha):
    tl.store(out_ptr, alpha.to(tl.float32))


@triton.jit
def _bf16_atomic_add(out_ptr, x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.atomic_add(out_ptr + offs, tl.load(x_ptr + offs))


def bf16_arithmetic_is_wrong() -> bool:
    import torch

    x = torch.tensor([1.5, -2.25, 3.0, -0.125], dtype=torch.bfloat16)
    y = torch.tensor([0.5, 1.25, -4.0, -8.0], dtype=torch.bfloat16)
    out = torch.empty(12, dtype=torch.bfloat16)
    _bf16_arithmetic[(1,)](out, x, y, N=4)
    if not torch.equal(out, torch.cat([x + y, x - y, x * y])):
        return True
    reduced, index = torch.empty(9, dtype=torch.bfloat16), torch.empty(1, dtype=torch.int32)
    _bf16_reductions[(1,)](reduced, index, x, N=4)  # every value exact in bf16: no rounding to argue about
    return not (torch.equal(reduced, torch.cat([x.sum().reshape(1), x.cumsum(0), x * x + x]))
                and index.item() == 2)


def float_scalar_is_python_float() -> bool:
    import torch

    out = torch.empty(1)
    try:
        _float_scalar[(1,)](out, 0.5)
    except Exception:
        return True
    return out.item() != 0.5


def bf16_atomic_add_is_refused() -> bool:
    import torch

    x = torch.tensor([1.5, -2.25, 3.0, -0.125], dtype=torch.bfloat16)
    out = torch.ones(4, dtype=torch.bfloat16)
    try:
        _bf16_atomic_add[(1,)](out, x, N=4)
    except Exception:
        return True
    return not torch.equal(out, x + 1)
