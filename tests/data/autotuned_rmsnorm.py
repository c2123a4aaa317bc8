"""An RMSNorm forward as kernel libraries publish it: `@triton.autotune` over a few configs keyed on the
row length, `@triton.heuristics` for the even-length fast path, and the tuned BLOCK_N never passed at
the call. Below the kernel, the only glue kt needs: make_inputs, launch, reference."""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_N": 128}, num_warps=2),
        triton.Config({"BLOCK_N": 256}, num_warps=4),
        triton.Config({"BLOCK_N": 512}, num_warps=4, num_stages=2),
    ],
    key=["n_cols"],
)
@triton.heuristics({"EVEN_N": lambda args: args["n_cols"] % args["BLOCK_N"] == 0})
@triton.jit
def rmsnorm_fwd(out_ptr, x_ptr, w_ptr, n_cols, stride, eps, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        if EVEN_N:
            x = tl.load(x_row + offs).to(tl.float32)
        else:
            x = tl.load(x_row + offs, mask=offs < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * stride + offs, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


def make_inputs(shape, dtype, t):
    m, n = shape["M"], shape["N"]
    return {"x": t.randn(m, n, dtype=dtype), "w": t.randn(n, dtype=dtype), "out": t.empty(m, n, dtype=dtype)}


def launch(k, inputs, params):
    x = inputs["x"]
    k.rmsnorm_fwd[(x.shape[0],)](inputs["out"], x, inputs["w"], x.shape[1], x.stride(0), 1e-6)


def reference(inputs):
    x = inputs["x"].double()
    return {"out": x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * inputs["w"].double()}
