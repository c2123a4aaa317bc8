"""Work-arounds for Triton interpreter defects that would fail right kernels in CPU verification, and
the probes that tell which defects this Triton's interpreter still has once they are applied.

Each defect below was seen in Triton 3.9's interpreter:
- it keeps bfloat16 tensors as raw uint16 bits, and its tl.dot, its element-wise arithmetic (add, sub,
  mul, div, min/max), its unary math, its reductions and scans (tl.sum, tl.argmax/tl.argmin,
  tl.cumsum, tl.cumprod) and tl.fma compute on those bits as if they were integers: a right bf16
  kernel gives garbage or non-finite values. Widening to fp32 and rounding back to bf16 (to nearest
  even) gives what a GPU computes for one operation;
- it passes a float scalar argument to the kernel as a Python float, so `alpha.to(tl.float32)` raises
  where a GPU kernel sees an fp32 scalar.
- its atomic operations refuse some data types a GPU takes: a bf16 tl.atomic_add (and an fp32
  tl.atomic_xchg) raises "Unsupported data type" in the interpreter's own atomics. No fix: the probe
  finds it, and such a crash is reported as the interpreter's.
And one in Triton 3.6's (the GPU hosts' Triton): a scalar argument used as a Python index
(`range(0, n_cols, BLOCK)`) is converted with int() of a one-element array, which NumPy 2 refuses
("only 0-dimensional arrays can be converted to Python scalars"); later Tritons squeeze it first.

Each fix is guarded by the layout it relies on (bf16 stored as uint16 bits), not by a version, so it
does nothing on an interpreter that does not have the defect; the probes find a defect a fix could not
reach, and a failure such a defect explains is reported as the interpreter's, not the kernel's.
"""

from __future__ import annotations

INTERPRETER_ONLY = "verify on a GPU or with fp32"


def apply() -> None:
    """Patch the interpreter in this process (a verification worker); safe to call again."""
    try:
        from triton.runtime import interpreter
    except ImportError:  # another Triton layout: nothing we know how to fix
        return
    if getattr(interpreter.InterpreterBuilder, "_kt_fixed", False):
        return
    _compute_bf16_in_fp32(interpreter)
    _reduce_and_scan_bf16_in_fp32(interpreter)
    _pass_float_scalars_as_fp32(interpreter)
    _index_with_one_element_scalars(interpreter)
    interpreter.InterpreterBuilder._kt_fixed = True


def _index_with_one_element_scalars(interpreter) -> None:
    """A scalar used as an index: int() of its one element (what Triton >= 3.7 does itself)."""
    patch_tensor = getattr(interpreter, "_patch_lang_tensor", None)
    if patch_tensor is None:  # another interpreter layout
        return

    def patched(tensor, scope):
        patch_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interpreter._patch_lang_tensor = patched


def _is_bf16_bits(handle) -> bool:
    import numpy as np
    import triton.language as tl

    return handle.dtype.scalar == tl.bfloat16 and handle.data.dtype == np.uint16


def _widen(data):
    """bf16 bits as the fp32 values they stand for."""
    import numpy as np

    return (np.ascontiguousarray(data).astype(np.uint32) << 16).view(np.float32)


def _narrow(values):
    """fp32 values as bf16 bits, rounded to nearest even (NaN stays NaN), as a GPU rounds."""
    import numpy as np

    values = np.asarray(values, dtype=np.float32)
    bits = np.ascontiguousarray(values).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(values), np.uint16(0x7FC0), rounded)


def _compute_bf16_in_fp32(interpreter) -> None:
    """tl.dot, element-wise and unary math on bf16 bits: widened to fp32, computed, rounded back."""
    import numpy as np
    import triton.language as tl

    builder, handle_of = interpreter.InterpreterBuilder, interpreter.TensorHandle

    def result(output):  # a comparison's booleans stay as they are, labelled like the interpreter's own
        return handle_of(_narrow(output) if output.dtype == np.float32 else output, tl.bfloat16)

    create_dot, binary_op, unary_op = builder.create_dot, builder.binary_op, builder.unary_op

    def dot(self, a, b, d, *args, **kwargs):
        wide = [handle_of(_widen(h.data), tl.float32) if _is_bf16_bits(h) else h for h in (a, b)]
        return create_dot(self, *wide, d, *args, **kwargs)

    def binary(self, lhs, rhs, op):
        if not (_is_bf16_bits(lhs) and _is_bf16_bits(rhs)):
            return binary_op(self, lhs, rhs, op)
        return result(op(_widen(lhs.data), _widen(rhs.data)))

    def unary(self, arg, op):
        if not _is_bf16_bits(arg):
            return unary_op(self, arg, op)
        return result(op(_widen(arg.data)))

    builder.create_dot, builder.binary_op, builder.unary_op = dot, binary, unary


def _reduce_and_scan_bf16_in_fp32(interpreter) -> None:
    """tl.sum, tl.max/tl.min with indices (tl.argmax, tl.argmin), tl.cumsum, tl.cumprod and tl.fma on
    bf16 bits: run on the fp32 values, values rounded back to bf16 (indices stay indices)."""
    import triton.language as tl

    reduce_ops, scan_ops = getattr(interpreter, "ReduceOps", None), getattr(interpreter, "ScanOps", None)
    builder, handle_of = interpreter.InterpreterBuilder, interpreter.TensorHandle
    if not all(hasattr(ops, name) for ops, name in ((reduce_ops, "sum"), (reduce_ops, "min_max"),
                                                    (scan_ops, "cumsum"), (scan_ops, "cumprod"))):
        return  # another interpreter layout

    def retyped(out, source, to, convert):
        """Each tensor of `out` (a tensor, or a tuple or list of them) of `source` values as `to` values."""
        if isinstance(out, (tuple, list)):
            return type(out)(retyped(o, source, to, convert) for o in out)
        if not isinstance(out, tl.core.tensor) or out.dtype != source:
            return out
        return tl.core.tensor(handle_of(convert(out.handle.data), to), out.type.with_element_ty(to))

    def in_fp32(op):
        def patched(self, input, *args, **kwargs):
            if not _is_bf16_bits((input[0] if isinstance(input, tuple) else input).handle):
                return op(self, input, *args, **kwargs)
            out = op(self, retyped(input, tl.bfloat16, tl.float32, _widen), *args, **kwargs)
            return retyped(out, tl.float32, tl.bfloat16, _narrow)
        return patched

    for ops, name in ((reduce_ops, "sum"), (reduce_ops, "min_max"), (scan_ops, "cumsum"), (scan_ops, "cumprod")):
        setattr(ops, name, in_fp32(getattr(ops, name)))
    create_fma = builder.create_fma

    def fma(self, x, y, z):
        if not all(_is_bf16_bits(h) for h in (x, y, z)):
            return create_fma(self, x, y, z)
        out = create_fma(self, *(handle_of(_widen(h.data), tl.float32) for h in (x, y, z)))
        return handle_of(_narrow(out.data), tl.bfloat16)

    builder.create_fma = fma


def _pass_float_scalars_as_fp32(interpreter) -> None:
    """A float argument reaches the kernel as an fp32 scalar tensor, as on a GPU (signature fp32)."""
    import numpy as np
    import triton.language as tl

    implicit_cvt = interpreter._implicit_cvt

    def float_as_fp32(arg):
        if isinstance(arg, float):
            return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return implicit_cvt(arg)

    interpreter._implicit_cvt = float_as_fp32


# Each defect a probe looks for, and what it does, in the words a report uses.
DEFECTS = {
    "bf16_arithmetic": "its bf16 arithmetic computes on raw bits",
    "float_scalar": "it passes a float scalar argument as a Python float",
    "atomic_dtypes": "its atomic operations refuse data types a GPU takes (bf16 atomic_add)",
}


def defects_left() -> list[str]:
    """The DEFECTS this process's interpreter still shows, fixes applied (run under TRITON_INTERPRET=1)."""
    from kt_cli.evaluate import interpreter_probes

    apply()
    return [name for name, probe in (("bf16_arithmetic", interpreter_probes.bf16_arithmetic_is_wrong),
                                     ("float_scalar", interpreter_probes.float_scalar_is_python_float),
                                     ("atomic_dtypes", interpreter_probes.bf16_atomic_add_is_refused)) if probe()]


def not_interpretable(kernel_names) -> str:
    """The message of an `interpreter` failure for a candidate whose launches call kernels the
    interpreter does not run at all (kt_cli.kernel.interpretable): not verifiable on the CPU."""
    return (f"{', '.join(kernel_names)}: Triton's interpreter does not run this kernel (not a @triton.jit "
            "function), so the CPU cannot verify it; cross-compiled and estimated only, never ranked: verify it "
            "on a device (measured mode)")


def blame(kind: str, message: str, dtype: str, defects: list[str]) -> str:
    """The message of an `interpreter` failure (shown as `interpreter: …`) for a failure that a defect
    left in `defects` explains, or ""."""
    if kind not in ("wrong", "crash"):
        return ""
    if "float_scalar" in defects and "'float' object has no attribute" in message:
        return f"{DEFECTS['float_scalar']}, {INTERPRETER_ONLY} ({kind}: {message})"
    if "atomic_dtypes" in defects and "Unsupported data type" in message:  # the interpreter's atomics' words
        return f"{DEFECTS['atomic_dtypes']}, {INTERPRETER_ONLY} ({kind}: {message})"
    if "bf16_arithmetic" in defects and dtype == "bfloat16":
        return f"{DEFECTS['bf16_arithmetic']}, {INTERPRETER_ONLY} ({kind}: {message})"
    return ""
