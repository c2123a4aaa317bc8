"""Element-wise with a float scalar: SGLang's logit soft-capping kernel, tanh(x / c) * c in fp32
(Gemma-2 style final-logit soft-capping; c = 30.0 there).

Source: https://github.com/sgl-project/sglang, python/sglang/srt/layers/triton_ops/softcap.py,
commit 8a697dff84cfe1d839fbd01c79d3a284a666965f; the kernel `softcap_out_kernel` only (its float
scalar `softcap_const` is declared `tl.constexpr` by its authors).
License: Apache-2.0 (the repository's LICENSE).

Between the two `verbatim` markers: the kernel, unchanged. Below them: the glue kt needs, counted by
benchmarks/real_kernels.py (every non-blank, non-comment line outside the verbatim block and this
docstring, imports included).
"""

import torch
import triton
import triton.language as tl

# ---- verbatim: begin ----


@triton.jit
def softcap_out_kernel(
    output_ptr,
    input_ptr,
    n_ele,
    softcap_const: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_ele
    x = tl.load(input_ptr + offsets, mask=mask, other=0.0)
    fx = x.to(tl.float32)
    fxs = fx / softcap_const
    exped = tl.exp(2 * fxs)
    top = exped - 1
    bottom = exped + 1
    output = top / bottom * softcap_const
    tl.store(output_ptr + offsets, output, mask=mask)


# ---- verbatim: end; kt glue below ----


def make_inputs(shape, dtype, t):  # logits of M tokens over N vocabulary entries; the kernel writes fp32
    return {"x": t.randn(shape["M"], shape["N"], dtype=dtype, scale=30.0),
            "out": t.empty(shape["M"], shape["N"], dtype=torch.float32)}


def reference(inputs):
    return {"out": torch.tanh(inputs["x"].double() / 30.0) * 30.0}


def launch(k, inputs, params):
    n = inputs["x"].numel()
    k.softcap_out_kernel[(triton.cdiv(n, params["BLOCK_SIZE"]),)](inputs["out"], inputs["x"], n, 30.0,
                                                                   BLOCK_SIZE=params["BLOCK_SIZE"])
