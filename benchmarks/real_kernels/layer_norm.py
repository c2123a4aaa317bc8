"""Normalisation with several outputs: the layer-norm forward of Triton's tutorials (writes Y, Mean, Rstd).

Source: https://github.com/triton-lang/triton, python/tutorials/05-layer-norm.py,
commit 545699290b851e70231ee3017481851170f1583d; the forward kernel `_layer_norm_fwd_fused` only.
License: MIT (Copyright 2018-2020 Philippe Tillet, 2020-2022 OpenAI; the repository's LICENSE).

Between the two `verbatim` markers: the tutorial's kernel, unchanged. Below them: the glue kt needs,
counted by benchmarks/real_kernels.py (every non-blank, non-comment line outside the verbatim block and
this docstring, imports included).
"""

import torch
import triton
import triton.language as tl

# ---- verbatim: begin ----


@triton.jit
def _layer_norm_fwd_fused(
    X,  # pointer to the input
    Y,  # pointer to the output
    W,  # pointer to the weights
    B,  # pointer to the biases
    Mean,  # pointer to the mean
    Rstd,  # pointer to the 1/std
    stride,  # how much to increase the pointer when moving by 1 row
    N,  # number of columns in X
    eps,  # epsilon to avoid division by zero
    BLOCK_SIZE: tl.constexpr,
):
    # Map the program id to the row of X and Y it should compute.
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # Compute mean
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # Compute variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    # Write mean / rstd
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # Normalize and apply linear transformation
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        # Write output
        tl.store(Y + cols, y, mask=mask)


# ---- verbatim: end; kt glue below ----


def make_inputs(shape, dtype, t):
    m, n = shape["M"], shape["N"]
    return {"x": t.randn(m, n, dtype=dtype), "w": t.rand(n, dtype=dtype), "b": t.rand(n, dtype=dtype),
            "y": t.empty(m, n, dtype=dtype), "mean": t.empty(m, dtype=torch.float32), "rstd": t.empty(m, dtype=torch.float32)}


def reference(inputs):
    x = inputs["x"].double()
    y = torch.nn.functional.layer_norm(x, x.shape[-1:], inputs["w"].double(), inputs["b"].double(), 1e-5)
    return {"y": y, "mean": x.mean(-1), "rstd": torch.rsqrt(x.var(-1, unbiased=False) + 1e-5)}


def launch(k, inputs, params):
    x = inputs["x"]
    k._layer_norm_fwd_fused[(x.shape[0],)](x, inputs["y"], inputs["w"], inputs["b"], inputs["mean"], inputs["rstd"],
                                           x.stride(0), x.shape[1], 1e-5, BLOCK_SIZE=params["BLOCK_SIZE"])
