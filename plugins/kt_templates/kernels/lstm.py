"""One fused LSTM step, as torch.nn.LSTMCell computes it: gates = x W_ih^T + b_ih + h W_hh^T + b_hh,
split into i, f, g, o (torch's order); c' = sigmoid(f) c + sigmoid(i) tanh(g); h' = sigmoid(o) tanh(c').

One program owns a BLOCK_B x BLOCK_H tile of h' and c' and keeps the four gate accumulators of that
tile in fp32 registers, so the 4H-wide gate tensor never reaches memory: the two GEMMs, the bias and
the pointwise math are one kernel. Shape: B (batch), H (hidden), I (input features). Rows of x, h, c
and the weights must be contiguous (as nn.LSTMCell keeps them). The module is self-contained (an
artifact keeps one source file), hence its own sigmoid and tanh.
"""

import torch
import triton
import triton.language as tl

OUTPUTS = ("h_new", "c_new")
SPACE = {
    "BLOCK_B": [16, 32, 64, 128],
    "BLOCK_H": [16, 32, 64, 128],
    "BLOCK_K": [32, 64, 128],
    "num_warps": [2, 4, 8],
    "num_stages": [1, 2, 3, 4],
}
CONSTRAINTS = [
    "4 * BLOCK_B * BLOCK_H // (warp_size * num_warps) <= 256",  # four fp32 gate tiles per thread
    "(BLOCK_B + 4 * BLOCK_H) * BLOCK_K * dtype_bytes * max(num_stages - 1, 1) <= smem_bytes",
    "BLOCK_B <= 2 * B and BLOCK_H <= 2 * H",
]
VERIFY_SHAPES = [{"B": 19, "H": 40, "I": 24}, {"B": 32, "H": 32, "I": 64}]


@triton.jit
def _sigmoid(x):
    return 1.0 / (1.0 + tl.exp(-x))


@triton.jit
def _tanh(x):
    return 2.0 * _sigmoid(2.0 * x) - 1.0


@triton.jit
def _gate_dots(acc_0, acc_1, acc_2, acc_3, x_ptr, w_ptr, rb, rh, B, H, K, stride_xb, stride_wr,
               BLOCK_K: tl.constexpr):
    """Add x[rb, :K] @ W[g*H + rh, :K]^T to gate accumulator g (W's rows are the four gates stacked)."""
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rb[:, None].to(tl.int64) * stride_xb + rk[None, :]
    w_ptrs = w_ptr + rh[None, :].to(tl.int64) * stride_wr + rk[:, None]
    gate = H.to(tl.int64) * stride_wr
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_ok = rk < K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(rb[:, None] < B) & k_ok[None, :], other=0.0)
        w_mask = k_ok[:, None] & (rh[None, :] < H)
        acc_0 = tl.dot(x, tl.load(w_ptrs, mask=w_mask, other=0.0), acc_0)
        acc_1 = tl.dot(x, tl.load(w_ptrs + gate, mask=w_mask, other=0.0), acc_1)
        acc_2 = tl.dot(x, tl.load(w_ptrs + 2 * gate, mask=w_mask, other=0.0), acc_2)
        acc_3 = tl.dot(x, tl.load(w_ptrs + 3 * gate, mask=w_mask, other=0.0), acc_3)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    return acc_0, acc_1, acc_2, acc_3


@triton.jit
def _bias(b_ih, b_hh, rh, gate, H):
    mask = rh < H
    return (tl.load(b_ih + gate * H + rh, mask=mask, other=0.0).to(tl.float32)
            + tl.load(b_hh + gate * H + rh, mask=mask, other=0.0).to(tl.float32))[None, :]


@triton.jit
def lstm_cell_kernel(x_ptr, h_ptr, c_ptr, w_ih_ptr, w_hh_ptr, b_ih_ptr, b_hh_ptr, h_new_ptr, c_new_ptr, B, H, I,
                     stride_xb, stride_hb, stride_cb, stride_wih, stride_whh, stride_hnb, stride_cnb,
                     BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr):
    rb = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    rh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    acc_i = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
    acc_f = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
    acc_g = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
    acc_o = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
    acc_i, acc_f, acc_g, acc_o = _gate_dots(acc_i, acc_f, acc_g, acc_o, x_ptr, w_ih_ptr, rb, rh, B, H, I,
                                            stride_xb, stride_wih, BLOCK_K)
    acc_i, acc_f, acc_g, acc_o = _gate_dots(acc_i, acc_f, acc_g, acc_o, h_ptr, w_hh_ptr, rb, rh, B, H, H,
                                            stride_hb, stride_whh, BLOCK_K)
    i = _sigmoid(acc_i + _bias(b_ih_ptr, b_hh_ptr, rh, 0, H))
    f = _sigmoid(acc_f + _bias(b_ih_ptr, b_hh_ptr, rh, 1, H))
    g = _tanh(acc_g + _bias(b_ih_ptr, b_hh_ptr, rh, 2, H))
    o = _sigmoid(acc_o + _bias(b_ih_ptr, b_hh_ptr, rh, 3, H))
    mask = (rb[:, None] < B) & (rh[None, :] < H)
    rows = rb[:, None].to(tl.int64)
    c = tl.load(c_ptr + rows * stride_cb + rh[None, :], mask=mask, other=0.0).to(tl.float32)
    c_new = f * c + i * g
    h_new = o * _tanh(c_new)
    tl.store(c_new_ptr + rows * stride_cnb + rh[None, :], c_new.to(c_new_ptr.dtype.element_ty), mask=mask)
    tl.store(h_new_ptr + rows * stride_hnb + rh[None, :], h_new.to(h_new_ptr.dtype.element_ty), mask=mask)


def make_inputs(shape, dtype, t):
    b, h, i = shape["B"], shape["H"], shape["I"]
    scale = h ** -0.5  # torch's LSTMCell init range: gates stay out of saturation
    return {"x": t.randn(b, i, dtype=dtype), "h": t.randn(b, h, dtype=dtype), "c": t.randn(b, h, dtype=dtype),
            "w_ih": t.randn(4 * h, i, dtype=dtype, scale=scale), "w_hh": t.randn(4 * h, h, dtype=dtype, scale=scale),
            "b_ih": t.randn(4 * h, dtype=dtype, scale=scale), "b_hh": t.randn(4 * h, dtype=dtype, scale=scale),
            "h_new": t.empty(b, h, dtype=dtype), "c_new": t.empty(b, h, dtype=dtype)}


def reference(inputs):
    x, h, c = (inputs[n].double() for n in ("x", "h", "c"))
    gates = x @ inputs["w_ih"].double().T + inputs["b_ih"].double() + h @ inputs["w_hh"].double().T + inputs["b_hh"].double()
    i, f, g, o = gates.chunk(4, 1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return {"h_new": torch.sigmoid(o) * torch.tanh(c_new), "c_new": c_new}


def baseline(inputs):
    """What nn.LSTMCell runs in eager mode (the fused cell on CUDA)."""
    return torch.lstm_cell(inputs["x"], (inputs["h"], inputs["c"]), inputs["w_ih"], inputs["w_hh"], inputs["b_ih"],
                           inputs["b_hh"])


def launch(k, inputs, params):
    x, h, c, h_new, c_new = (inputs[n] for n in ("x", "h", "c", "h_new", "c_new"))
    w_ih, w_hh = inputs["w_ih"], inputs["w_hh"]
    (b, i), hidden = x.shape, h.shape[1]
    bb, bh = params["BLOCK_B"], params["BLOCK_H"]
    grid = (triton.cdiv(b, bb), triton.cdiv(hidden, bh))
    k.lstm_cell_kernel[grid](x, h, c, w_ih, w_hh, inputs["b_ih"], inputs["b_hh"], h_new, c_new, b, hidden, i,
                             x.stride(0), h.stride(0), c.stride(0), w_ih.stride(0), w_hh.stride(0), h_new.stride(0),
                             c_new.stride(0), BLOCK_B=bb, BLOCK_H=bh, BLOCK_K=params["BLOCK_K"])


def flops(shape, dtype):
    b, h, i = shape["B"], shape["H"], shape["I"]
    return 2.0 * b * 4 * h * (i + h)


def bytes_moved(shape, dtype):
    b, h, i = shape["B"], shape["H"], shape["I"]
    weights = 4 * h * (i + h) + 8 * h
    return (weights + b * i + 4 * b * h) * dtype.itemsize  # x, h, c in; h', c' out


def traffic(shape, dtype, params):
    """Weights are read once per batch tile, x and h once per hidden tile (L2 reuse ignored)."""
    b, h, i = shape["B"], shape["H"], shape["I"]
    weights = 4 * h * (i + h) * triton.cdiv(b, params["BLOCK_B"])
    activations = b * (i + h) * triton.cdiv(h, params["BLOCK_H"])
    return (weights + activations + 3 * b * h + 8 * h) * dtype.itemsize


def shape_of(inputs):
    (b, i), h = inputs["x"].shape, inputs["h"].shape[1]
    return {"B": b, "H": h, "I": i}
