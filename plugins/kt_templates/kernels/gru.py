"""One fused GRU step, as torch.nn.GRUCell computes it (gate order r, z, n):
r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr), z likewise, n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn)),
h' = (1 - z) n + z h.

One program owns a BLOCK_B x BLOCK_H tile of h' and keeps four fp32 accumulators of that tile: r and
z (x and h parts summed), and the x and h parts of n apart, because r scales only the h part. The
two GEMMs, the biases and the pointwise math are one kernel. Shape: B (batch), H (hidden), I (input).
Rows of x, h and the weights must be contiguous (as nn.GRUCell keeps them).
The module is self-contained (an artifact keeps one source file), hence its own sigmoid and tanh.
"""

import torch
import triton
import triton.language as tl

OUTPUTS = ("h_new",)
SPACE = {
    "BLOCK_B": [16, 32, 64, 128],
    "BLOCK_H": [16, 32, 64, 128],
    "BLOCK_K": [32, 64, 128],
    "num_warps": [2, 4, 8],
    "num_stages": [1, 2, 3, 4],
}
CONSTRAINTS = [
    "4 * BLOCK_B * BLOCK_H // (warp_size * num_warps) <= 256",  # four fp32 accumulator tiles per thread
    "(BLOCK_B + 3 * BLOCK_H) * BLOCK_K * dtype_bytes * max(num_stages - 1, 1) <= smem_bytes",
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
def _gate_dots(acc_r, acc_z, acc_n, x_ptr, w_ptr, rb, rh, B, H, K, stride_xb, stride_wr, BLOCK_K: tl.constexpr):
    """Add x[rb, :K] @ W[g*H + rh, :K]^T to the accumulators of gates r, z, n (W's rows stack them)."""
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rb[:, None].to(tl.int64) * stride_xb + rk[None, :]
    w_ptrs = w_ptr + rh[None, :].to(tl.int64) * stride_wr + rk[:, None]
    gate = H.to(tl.int64) * stride_wr
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_ok = rk < K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(rb[:, None] < B) & k_ok[None, :], other=0.0)
        w_mask = k_ok[:, None] & (rh[None, :] < H)
        acc_r = tl.dot(x, tl.load(w_ptrs, mask=w_mask, other=0.0), acc_r)
        acc_z = tl.dot(x, tl.load(w_ptrs + gate, mask=w_mask, other=0.0), acc_z)
        acc_n = tl.dot(x, tl.load(w_ptrs + 2 * gate, mask=w_mask, other=0.0), acc_n)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    return acc_r, acc_z, acc_n


@triton.jit
def _bias(b_ptr, rh, gate, H):
    return tl.load(b_ptr + gate * H + rh, mask=rh < H, other=0.0).to(tl.float32)[None, :]


@triton.jit
def gru_cell_kernel(x_ptr, h_ptr, w_ih_ptr, w_hh_ptr, b_ih_ptr, b_hh_ptr, h_new_ptr, B, H, I,
                    stride_xb, stride_hb, stride_wih, stride_whh, stride_hnb,
                    BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr):
    rb = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    rh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    acc_r = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
    acc_z = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
    acc_xn = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
    acc_hn = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
    acc_r, acc_z, acc_xn = _gate_dots(acc_r, acc_z, acc_xn, x_ptr, w_ih_ptr, rb, rh, B, H, I, stride_xb, stride_wih,
                                      BLOCK_K)
    acc_r, acc_z, acc_hn = _gate_dots(acc_r, acc_z, acc_hn, h_ptr, w_hh_ptr, rb, rh, B, H, H, stride_hb, stride_whh,
                                      BLOCK_K)
    r = _sigmoid(acc_r + _bias(b_ih_ptr, rh, 0, H) + _bias(b_hh_ptr, rh, 0, H))
    z = _sigmoid(acc_z + _bias(b_ih_ptr, rh, 1, H) + _bias(b_hh_ptr, rh, 1, H))
    n = _tanh(acc_xn + _bias(b_ih_ptr, rh, 2, H) + r * (acc_hn + _bias(b_hh_ptr, rh, 2, H)))
    mask = (rb[:, None] < B) & (rh[None, :] < H)
    rows = rb[:, None].to(tl.int64)
    h = tl.load(h_ptr + rows * stride_hb + rh[None, :], mask=mask, other=0.0).to(tl.float32)
    h_new = (1.0 - z) * n + z * h
    tl.store(h_new_ptr + rows * stride_hnb + rh[None, :], h_new.to(h_new_ptr.dtype.element_ty), mask=mask)


def make_inputs(shape, dtype, t):
    b, h, i = shape["B"], shape["H"], shape["I"]
    scale = h ** -0.5  # torch's GRUCell init range: gates stay out of saturation
    return {"x": t.randn(b, i, dtype=dtype), "h": t.randn(b, h, dtype=dtype),
            "w_ih": t.randn(3 * h, i, dtype=dtype, scale=scale), "w_hh": t.randn(3 * h, h, dtype=dtype, scale=scale),
            "b_ih": t.randn(3 * h, dtype=dtype, scale=scale), "b_hh": t.randn(3 * h, dtype=dtype, scale=scale),
            "h_new": t.empty(b, h, dtype=dtype)}


def reference(inputs):
    x, h = inputs["x"].double(), inputs["h"].double()
    gi = x @ inputs["w_ih"].double().T + inputs["b_ih"].double()
    gh = h @ inputs["w_hh"].double().T + inputs["b_hh"].double()
    (xr, xz, xn), (hr, hz, hn) = gi.chunk(3, 1), gh.chunk(3, 1)
    r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    return {"h_new": (1 - z) * n + z * h}


def baseline(inputs):
    """What nn.GRUCell runs in eager mode (the fused cell on CUDA)."""
    return torch.gru_cell(inputs["x"], inputs["h"], inputs["w_ih"], inputs["w_hh"], inputs["b_ih"], inputs["b_hh"])


def launch(k, inputs, params):
    x, h, h_new, w_ih, w_hh = (inputs[n] for n in ("x", "h", "h_new", "w_ih", "w_hh"))
    (b, i), hidden = x.shape, h.shape[1]
    bb, bh = params["BLOCK_B"], params["BLOCK_H"]
    grid = (triton.cdiv(b, bb), triton.cdiv(hidden, bh))
    k.gru_cell_kernel[grid](x, h, w_ih, w_hh, inputs["b_ih"], inputs["b_hh"], h_new, b, hidden, i, x.stride(0),
                            h.stride(0), w_ih.stride(0), w_hh.stride(0), h_new.stride(0), BLOCK_B=bb, BLOCK_H=bh,
                            BLOCK_K=params["BLOCK_K"])


def flops(shape, dtype):
    b, h, i = shape["B"], shape["H"], shape["I"]
    return 2.0 * b * 3 * h * (i + h)


def bytes_moved(shape, dtype):
    b, h, i = shape["B"], shape["H"], shape["I"]
    weights = 3 * h * (i + h) + 6 * h
    return (weights + b * i + 2 * b * h) * dtype.itemsize  # x, h in; h' out


def traffic(shape, dtype, params):
    """Weights are read once per batch tile, x and h once per hidden tile (L2 reuse ignored)."""
    b, h, i = shape["B"], shape["H"], shape["I"]
    weights = 3 * h * (i + h) * triton.cdiv(b, params["BLOCK_B"])
    activations = b * (i + h) * triton.cdiv(h, params["BLOCK_H"])
    return (weights + activations + b * h + 6 * h) * dtype.itemsize


def shape_of(inputs):
    (b, i), h = inputs["x"].shape, inputs["h"].shape[1]
    return {"B": b, "H": h, "I": i}
