"""A whole GRU sequence in one kernel launch, as torch.nn.GRU (one layer, one direction, biases,
batch_first=False) computes it, gate order r, z, n: for t = 0..T-1,
r = sigmoid(x_t W_ir^T + b_ir + h W_hr^T + b_hr), z likewise, n = tanh(x_t W_in^T + b_in + r (h W_hn^T + b_hn)),
h = (1 - z) n + z h; y[t] = h.

The time loop runs inside the kernel (FlashRNN-style fusion of the sequence). Design: one program per
BLOCK_B rows of the batch owns ALL of the hidden state of those rows, so no program ever needs
another program's h and there is no grid-wide barrier (a spin-wait barrier would deadlock under
Triton's interpreter, where programs run one after another, and needs every program co-resident).
Each step walks H in chunks of BLOCK_H: a chunk keeps four fp32 tiles (BLOCK_B x BLOCK_H): r and z
(x and h parts summed) and the x and h parts of n apart, because r scales only the h part; they are
accumulated over I and H in BLOCK_K slices (the input projection is done inside the loop), then the
pointwise math writes y[t]. The previous h is read back from y[t-1] (h0 at t = 0), rounded to the
tensors' dtype as torch keeps it; a barrier between steps orders one step's stores before the next
step's loads within the program. The weights are streamed from global memory (L2) every step.
The price of the design: only cdiv(B, BLOCK_B) programs run, so a small batch occupies few SMs.
Shape: T (steps), B (batch), H (hidden), I (input features). Rows of x, h0 and the weights must be
contiguous (as nn.GRU keeps them). The module is self-contained (an artifact keeps one source file),
hence its own sigmoid and tanh.
"""

import torch
import triton
import triton.language as tl

OUTPUTS = ("y", "h_n")
SPACE = {
    "BLOCK_B": [16, 32, 64],
    "BLOCK_H": [16, 32, 64, 128],
    "BLOCK_K": [32, 64, 128],
    "num_warps": [2, 4, 8],
    "num_stages": [1, 2, 3],
}
CONSTRAINTS = [
    "4 * BLOCK_B * BLOCK_H // (warp_size * num_warps) <= 256",  # four fp32 accumulator tiles per thread
    "(BLOCK_B + 3 * BLOCK_H) * BLOCK_K * dtype_bytes * max(num_stages - 1, 1) <= smem_bytes",
    "BLOCK_B <= 2 * B and BLOCK_H <= 2 * H",
]
VERIFY_SHAPES = [{"T": 5, "B": 3, "H": 40, "I": 24}, {"T": 3, "B": 19, "H": 32, "I": 48}]
_FEEDBACK = ("h is rounded to the dtype every step and fed back (as torch keeps it), so rounding and fp32 "
             "accumulation errors carry across steps and scale with the state's typical size: 8 units of rounding "
             "of the dtype (lstm_seq failed at 4, one element of 16.7 million at T = 1024, B = 16, H = 1024 on an H100)")
TOLERANCE = {  # element-wise; `rms` scales with RMS(ref) (kt_cli.evaluate.verify.Tolerance)
    "float32": {"rtol": 4e-3, "atol": 1e-5, "rms": 4e-3, "why": "tl.dot takes fp32 inputs as tf32 on tensor cores; " + _FEEDBACK},
    "float16": {"rtol": 4e-3, "atol": 1e-5, "rms": 4e-3, "why": _FEEDBACK},
    "bfloat16": {"rtol": 3.2e-2, "atol": 1e-5, "rms": 3.2e-2, "why": _FEEDBACK},
}


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
def gru_seq_kernel(x_ptr, h0_ptr, w_ih_ptr, w_hh_ptr, b_ih_ptr, b_hh_ptr, y_ptr, h_n_ptr, T, B, H, I,
                   stride_xt, stride_xb, stride_h0b, stride_wih, stride_whh, stride_yt, stride_yb, stride_hnb,
                   BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr):
    rb = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    rows = rb[:, None].to(tl.int64)
    for t in range(0, T):
        x_t = x_ptr + stride_xt.to(tl.int64) * t
        y_t = y_ptr + stride_yt.to(tl.int64) * t
        if t == 0:
            h_prev = h0_ptr
            stride_hp = stride_h0b
        else:
            h_prev = y_ptr + stride_yt.to(tl.int64) * (t - 1)
            stride_hp = stride_yb
        for hc in range(0, tl.cdiv(H, BLOCK_H)):
            rh = hc * BLOCK_H + tl.arange(0, BLOCK_H)
            acc_r = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
            acc_z = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
            acc_xn = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
            acc_hn = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
            acc_r, acc_z, acc_xn = _gate_dots(acc_r, acc_z, acc_xn, x_t, w_ih_ptr, rb, rh, B, H, I, stride_xb,
                                              stride_wih, BLOCK_K)
            acc_r, acc_z, acc_hn = _gate_dots(acc_r, acc_z, acc_hn, h_prev, w_hh_ptr, rb, rh, B, H, H, stride_hp,
                                              stride_whh, BLOCK_K)
            r = _sigmoid(acc_r + _bias(b_ih_ptr, rh, 0, H) + _bias(b_hh_ptr, rh, 0, H))
            z = _sigmoid(acc_z + _bias(b_ih_ptr, rh, 1, H) + _bias(b_hh_ptr, rh, 1, H))
            n = _tanh(acc_xn + _bias(b_ih_ptr, rh, 2, H) + r * (acc_hn + _bias(b_hh_ptr, rh, 2, H)))
            mask = (rb[:, None] < B) & (rh[None, :] < H)
            h = tl.load(h_prev + rows * stride_hp + rh[None, :], mask=mask, other=0.0).to(tl.float32)
            h = ((1.0 - z) * n + z * h).to(y_ptr.dtype.element_ty)
            tl.store(y_t + rows * stride_yb + rh[None, :], h, mask=mask)
            if t == T - 1:
                tl.store(h_n_ptr + rows * stride_hnb + rh[None, :], h.to(h_n_ptr.dtype.element_ty), mask=mask)
        tl.debug_barrier()  # this step's h (in y[t]) is stored before the next step reads it


def make_inputs(shape, dtype, t):
    s, b, h, i = shape["T"], shape["B"], shape["H"], shape["I"]
    scale = h ** -0.5  # torch's GRU init range: gates stay out of saturation
    return {"x": t.randn(s, b, i, dtype=dtype), "h0": t.randn(b, h, dtype=dtype),
            "w_ih": t.randn(3 * h, i, dtype=dtype, scale=scale), "w_hh": t.randn(3 * h, h, dtype=dtype, scale=scale),
            "b_ih": t.randn(3 * h, dtype=dtype, scale=scale), "b_hh": t.randn(3 * h, dtype=dtype, scale=scale),
            "y": t.empty(s, b, h, dtype=dtype), "h_n": t.empty(b, h, dtype=dtype)}


def reference(inputs):
    """torch.nn.GRU's recurrence in float64 (tests/test_library_seq.py checks it against nn.GRU itself)."""
    x, h = inputs["x"].double(), inputs["h0"].double()
    w_ih, w_hh = inputs["w_ih"].double(), inputs["w_hh"].double()
    b_ih, b_hh = inputs["b_ih"].double(), inputs["b_hh"].double()
    ys = []
    for x_t in x:
        (xr, xz, xn), (hr, hz, hn) = (x_t @ w_ih.T + b_ih).chunk(3, 1), (h @ w_hh.T + b_hh).chunk(3, 1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        h = (1 - z) * torch.tanh(xn + r * hn) + z * h
        ys.append(h)
    return {"y": torch.stack(ys), "h_n": h}


def baseline(inputs):
    """What nn.GRU runs in eager mode (cuDNN's sequence kernel on CUDA)."""
    y, h_n = torch.gru(inputs["x"], inputs["h0"][None], [inputs["w_ih"], inputs["w_hh"], inputs["b_ih"],
                                                          inputs["b_hh"]], True, 1, 0.0, False, False, False)
    return y, h_n[0]


def launch(k, inputs, params):
    x, h0, y, h_n, w_ih, w_hh = (inputs[n] for n in ("x", "h0", "y", "h_n", "w_ih", "w_hh"))
    (s, b, i), hidden = x.shape, h0.shape[1]
    bb = params["BLOCK_B"]
    k.gru_seq_kernel[(triton.cdiv(b, bb),)](
        x, h0, w_ih, w_hh, inputs["b_ih"], inputs["b_hh"], y, h_n, s, b, hidden, i, x.stride(0), x.stride(1),
        h0.stride(0), w_ih.stride(0), w_hh.stride(0), y.stride(0), y.stride(1), h_n.stride(0),
        BLOCK_B=bb, BLOCK_H=params["BLOCK_H"], BLOCK_K=params["BLOCK_K"])


def flops(shape, dtype):
    s, b, h, i = shape["T"], shape["B"], shape["H"], shape["I"]
    return 2.0 * s * b * 3 * h * (i + h)


def bytes_moved(shape, dtype):
    s, b, h, i = shape["T"], shape["B"], shape["H"], shape["I"]
    weights = 3 * h * (i + h) + 6 * h
    return (weights + s * b * (i + h) + 2 * b * h) * dtype.itemsize  # x, h0 in; y, h_n out


def traffic(shape, dtype, params):
    """Every step reads the weights once per batch tile and x_t and h once per hidden chunk (L2 reuse ignored)."""
    s, b, h, i = shape["T"], shape["B"], shape["H"], shape["I"]
    weights = 3 * h * (i + h) * triton.cdiv(b, params["BLOCK_B"])
    activations = b * (i + h) * triton.cdiv(h, params["BLOCK_H"])
    return (s * (weights + activations + 2 * b * h + 6 * h) + 2 * b * h) * dtype.itemsize


def shape_of(inputs):
    (s, b, i), h = inputs["x"].shape, inputs["h0"].shape[1]
    return {"T": s, "B": b, "H": h, "I": i}
