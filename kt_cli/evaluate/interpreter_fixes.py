"""Work-arounds for Triton interpreter bugs that would fail right kernels in CPU verification.

Triton's interpreter keeps bfloat16 tensors as raw uint16 bits and its tl.dot multiplies those bits
as integers (seen in Triton 3.9), so every bf16 GEMM and attention kernel looks wrong on the CPU.
Widening bf16 operands to fp32 first gives what the GPU computes: bf16 products are exact in fp32.
"""

from __future__ import annotations


def apply() -> None:
    """Patch the interpreter in this process (a verification worker); safe to call again."""
    try:
        import numpy as np
        import triton.language as tl
        from triton.runtime.interpreter import InterpreterBuilder, TensorHandle
    except ImportError:  # another Triton layout: nothing we know how to fix
        return
    original = InterpreterBuilder.create_dot
    if getattr(original, "_kt_widens_bf16", False):
        return

    def widen(handle):
        if handle.dtype != tl.bfloat16:
            return handle
        bits = np.ascontiguousarray(handle.data).astype(np.uint32) << 16
        return TensorHandle(bits.view(np.float32), tl.float32)

    def create_dot(self, a, b, d, *args, **kwargs):
        return original(self, widen(a), widen(b), d, *args, **kwargs)

    create_dot._kt_widens_bf16 = True
    InterpreterBuilder.create_dot = create_dot
