"""out = a * x + y (BLAS axpy) over a flat vector. Written into a separate `out` so that kt can poison
the output before each run; an application passes out=y to update y in place (each element is read
before it is written by the same thread). Full blocks skip the mask; only the last program masks."""

import torch
import triton
import triton.language as tl

OUTPUTS = ("out",)
SPACE = {
    "BLOCK": [1024, 2048, 4096, 8192, 16384],
    "num_warps": [2, 4, 8, 16],
    "num_stages": [1, 2, 3],
}
CONSTRAINTS = [
    "BLOCK >= 128 * num_warps",  # at least 4 elements a thread: 16-byte vector loads for fp32
    "BLOCK // (32 * num_warps) <= 64",  # registers per thread
    "BLOCK <= N",
]
VERIFY_SHAPES = [{"N": 5003}, {"N": 4096}, {"N": 777}]


@triton.jit
def axpy_kernel(out_ptr, x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    if start + BLOCK <= n:  # uniform per program: all but the last take the unmasked path
        x = tl.load(x_ptr + offs, eviction_policy="evict_first").to(tl.float32)
        y = tl.load(y_ptr + offs, eviction_policy="evict_first").to(tl.float32)
        tl.store(out_ptr + offs, (a * x + y).to(out_ptr.dtype.element_ty))
    else:
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + offs, (a * x + y).to(out_ptr.dtype.element_ty), mask=mask)


def make_inputs(shape, dtype, t):
    n = shape["N"]
    a = 0.5 + float(torch.rand(1, generator=t.generator()))  # a fresh scalar per seed, never 0 or 1
    return {"a": a, "x": t.randn(n, dtype=dtype), "y": t.randn(n, dtype=dtype), "out": t.empty(n, dtype=dtype)}


def reference(inputs):
    return {"out": inputs["a"] * inputs["x"].double() + inputs["y"].double()}


def baseline(inputs):
    return torch.add(inputs["y"], inputs["x"], alpha=inputs["a"])


def launch(k, inputs, params):
    x, out = inputs["x"], inputs["out"]
    n, block = x.numel(), params["BLOCK"]
    k.axpy_kernel[(triton.cdiv(n, block),)](out, x, inputs["y"], inputs["a"], n, BLOCK=block)


def flops(shape, dtype):
    return 2.0 * shape["N"]


def bytes_moved(shape, dtype):
    return 3.0 * shape["N"] * dtype.itemsize


def shape_of(inputs):
    return {"N": inputs["x"].numel()}
