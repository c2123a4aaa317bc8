"""A multi-head LSTM sequence, FlashRNN-style: the hidden state is NH heads of DH units and each head's
gates read only its own part of h (its recurrent weights are a DH x 4 DH block of a block-diagonal W_hh), so
one program can hold a head's whole recurrence on chip (its weights, h and c) for all T steps, and no
program ever waits for another. With NH = 1 it is torch.nn.LSTM; in general, nn.LSTM with a block-diagonal
W_hh (tests/test_library_seq.py checks both).

For t = 0..T-1 and each head n: gates = x_t W_ih[n]^T + b_ih[n] + b_hh[n] + h_n R_n^T, split into i, f, g, o
(torch's order); c_n = sigmoid(f) c_n + sigmoid(i) tanh(g); h_n = sigmoid(o) tanh(c_n); y[t, :, head n] = h_n.

Layout: x [T, B, I]; h0, c0 [B, H] with H = NH * DH, head n owning units n * DH .. (n + 1) * DH - 1; W_ih
[4H, I] and the biases [4H] in torch's gate-major order (row g * H + unit); W_hh [NH, 4 * DH, DH]: head n's
recurrent weights, row g * DH + u for gate g of its unit u. Outputs y [T, B, H], h_n and c_n [B, H]. Rows of
x, h0, c0 and the weights must be contiguous.

Design (two launches): one GEMM computes the input projection of every step at once (gx = x W_ih^T + b_ih +
b_hh in fp32, T * B x 4H), the part of the gates that does not wait for h. Then one program per (head,
BLOCK_B batch rows): it loads its head's four DH x DH gate slices of W_hh once, keeps h (in the input dtype,
as torch feeds it back) and c (fp32) in registers, and each step computes the four gate tiles as tl.dot of h
with the slices onto gx[t], applies the pointwise math and stores y[t]. Only y goes through memory between
steps: no barrier, and Triton's CPU interpreter runs the kernel as it is. A head size that is not a power
of two is padded (masked loads: the padded units' weights and h stay 0).

Knobs: BLOCK_B (batch rows a program; 16 is the fewest rows tl.dot takes), num_warps, num_stages (the
pipelining of the loads the time loop does not wait on: gx of the next steps). The constraint keeps a
head's four weight slices within 64 registers a thread (4 DH^2 elements over the program's threads); past
it they spill, which kt records as the point's failure. SEEDS: 16 rows on 4 warps.

Baseline: torch.lstm (cuDNN on CUDA) with the block-diagonal W_hh the heads make: what a user without this
kernel runs (its recurrence does NH times the heads' FLOPs). Not yet run on a GPU (docs/library.md).
"""

import torch
import triton
import triton.language as tl

OUTPUTS = ("y", "h_n", "c_n")
# the projection of every step's input runs first; the recurrence does the work (the cost model reads it)
SETUP_KERNELS = ("_input_projection_kernel",)
SPACE = {
    "BLOCK_B": [16, 32, 64],
    "num_warps": [2, 4, 8, 16],
    "num_stages": [1, 2, 3],
}
CONSTRAINTS = [
    "BLOCK_B <= max(16, 2 * B)",  # 16: tl.dot's fewest rows
    # a head's four gate slices of W_hh, held for the whole sequence: at most 64 registers a thread
    "4 * DH * DH * dtype_bytes <= 256 * warp_size * num_warps",
    # four fp32 gate tiles and c a thread
    "5 * BLOCK_B * DH // (warp_size * num_warps) <= 128",
]
SEEDS = [{"BLOCK_B": 16, "num_warps": 4, "num_stages": 2}]
# ragged: a head of 24 units (padded to 32), batch rows masked (3 of 16; 19: two batch tiles); a batch of
# one (a size Triton compiles as the constant 1)
VERIFY_SHAPES = [{"T": 5, "B": 3, "NH": 3, "DH": 24, "I": 20}, {"T": 3, "B": 19, "NH": 2, "DH": 16, "I": 40},
                 {"T": 3, "B": 1, "NH": 2, "DH": 16, "I": 8}]
_FEEDBACK = ("h is rounded to the dtype every step and fed back (as torch keeps it), so rounding and fp32 "
             "accumulation errors carry across steps and scale with the state's typical size: lstm_seq's bound, "
             "8 units of rounding of the dtype (c stays in fp32 here, nearer the float64 reference)")
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
def _input_projection_kernel(x_ptr, w_ptr, b_ih_ptr, b_hh_ptr, gx_ptr, M, N, K, stride_xm, stride_wn, stride_gm,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """gx = x @ W_ih^T + b_ih + b_hh in fp32, for every step at once: the part of the gates that does not
    wait for h."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rm[:, None].to(tl.int64) * stride_xm + rk[None, :]
    w_ptrs = w_ptr + rn[None, :].to(tl.int64) * stride_wn + rk[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_ok = rk < K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=(rm[:, None] < M) & k_ok[None, :], other=0.0)
        acc = tl.dot(a, tl.load(w_ptrs, mask=k_ok[:, None] & (rn[None, :] < N), other=0.0), acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    n_ok = rn < N
    acc += tl.load(b_ih_ptr + rn, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    acc += tl.load(b_hh_ptr + rn, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(gx_ptr + rm[:, None].to(tl.int64) * stride_gm + rn[None, :], acc, mask=(rm[:, None] < M) & n_ok[None, :])


@triton.jit
def lstm_heads_kernel(gx_ptr, h0_ptr, c0_ptr, w_hh_ptr, y_ptr, h_n_ptr, c_n_ptr, T, B, H, DH, stride_h0b,
                      stride_c0b, stride_wn, stride_wr, stride_yt, stride_yb, stride_hnb, stride_cnb,
                      BLOCK_B: tl.constexpr, DH_PAD: tl.constexpr):
    head = tl.program_id(0)
    rb = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    ru = tl.arange(0, DH_PAD)  # a unit of this head (the dot's N)
    rk = tl.arange(0, DH_PAD)  # an element of this head's h (the dot's K)
    unit = head * DH + ru
    rows = rb[:, None].to(tl.int64)
    mask = (rb[:, None] < B) & (ru[None, :] < DH)
    # gate g's slice, K x N: element (k, u) is W_hh[head, g * DH + u, k]; loaded once for the sequence
    w_ptrs = w_hh_ptr + head.to(tl.int64) * stride_wn + ru[None, :].to(tl.int64) * stride_wr + rk[:, None]
    w_mask = (rk[:, None] < DH) & (ru[None, :] < DH)
    gate_rows = DH * stride_wr
    w_i = tl.load(w_ptrs, mask=w_mask, other=0.0)
    w_f = tl.load(w_ptrs + gate_rows, mask=w_mask, other=0.0)
    w_g = tl.load(w_ptrs + 2 * gate_rows, mask=w_mask, other=0.0)
    w_o = tl.load(w_ptrs + 3 * gate_rows, mask=w_mask, other=0.0)
    h = tl.load(h0_ptr + rows * stride_h0b + unit[None, :], mask=mask, other=0.0).to(y_ptr.dtype.element_ty)
    c = tl.load(c0_ptr + rows * stride_c0b + unit[None, :], mask=mask, other=0.0).to(tl.float32)
    # step t's gate g: gx_t + g * H, then y_t; both advance a step at a time (no scalar argument is cast:
    # Triton makes one equal to 1, a batch of 1, a constant)
    gx_t = gx_ptr + rows * (4 * H) + unit[None, :]
    y_t = y_ptr + rows * stride_yb + unit[None, :]
    for t in range(0, T):
        i = _sigmoid(tl.dot(h, w_i, tl.load(gx_t, mask=mask, other=0.0)))
        f = _sigmoid(tl.dot(h, w_f, tl.load(gx_t + H, mask=mask, other=0.0)))
        g = _tanh(tl.dot(h, w_g, tl.load(gx_t + 2 * H, mask=mask, other=0.0)))
        o = _sigmoid(tl.dot(h, w_o, tl.load(gx_t + 3 * H, mask=mask, other=0.0)))
        c = f * c + i * g
        h = (o * _tanh(c)).to(y_ptr.dtype.element_ty)
        tl.store(y_t, h, mask=mask)
        gx_t += B * (4 * H)
        y_t += stride_yt
    tl.store(h_n_ptr + rows * stride_hnb + unit[None, :], h.to(h_n_ptr.dtype.element_ty), mask=mask)
    tl.store(c_n_ptr + rows * stride_cnb + unit[None, :], c.to(c_n_ptr.dtype.element_ty), mask=mask)


def make_inputs(shape, dtype, t):
    s, b, i = shape["T"], shape["B"], shape["I"]
    nh, dh = shape["NH"], shape["DH"]
    h = nh * dh
    # torch's LSTM init range for the projection and biases; a head's gates sum DH recurrent terms
    scale, head_scale = h ** -0.5, dh ** -0.5
    return {"x": t.randn(s, b, i, dtype=dtype), "h0": t.randn(b, h, dtype=dtype), "c0": t.randn(b, h, dtype=dtype),
            "w_ih": t.randn(4 * h, i, dtype=dtype, scale=scale),
            "w_hh": t.randn(nh, 4 * dh, dh, dtype=dtype, scale=head_scale),
            "b_ih": t.randn(4 * h, dtype=dtype, scale=scale), "b_hh": t.randn(4 * h, dtype=dtype, scale=scale),
            "y": t.empty(s, b, h, dtype=dtype), "h_n": t.empty(b, h, dtype=dtype), "c_n": t.empty(b, h, dtype=dtype)}


def reference(inputs):
    """The heads' recurrence in float64 (tests/test_library_seq.py checks it against nn.LSTM with the
    block-diagonal W_hh)."""
    x, h, c = (inputs[n].double() for n in ("x", "h0", "c0"))
    w_ih, w_hh = inputs["w_ih"].double(), inputs["w_hh"].double()
    bias = inputs["b_ih"].double() + inputs["b_hh"].double()
    nh, _, dh = w_hh.shape
    b = h.shape[0]
    ys = []
    for x_t in x:
        # head n's gates from its own h: [B, NH, 4 DH] (column g * DH + u), then torch's gate-major columns
        recurrent = torch.einsum("bnk,nrk->bnr", h.reshape(b, nh, dh), w_hh)
        recurrent = recurrent.reshape(b, nh, 4, dh).transpose(1, 2).reshape(b, 4 * nh * dh)
        i, f, g, o = (x_t @ w_ih.T + bias + recurrent).chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        ys.append(h)
    return {"y": torch.stack(ys), "h_n": h, "c_n": c}


def block_diagonal(w_hh):
    """nn.LSTM's W_hh [4H, H] of the heads: row g * H + n * DH + u, column n * DH + k holds W_hh[n, g * DH +
    u, k]; every other element is 0."""
    nh, _, dh = w_hh.shape
    full = w_hh.new_zeros(4, nh, dh, nh, dh)
    heads = torch.arange(nh, device=w_hh.device)
    full[:, heads, :, heads, :] = w_hh.reshape(nh, 4, dh, dh)
    return full.reshape(4 * nh * dh, nh * dh)


def baseline(inputs):
    """nn.LSTM with the heads' block-diagonal W_hh (cuDNN's sequence kernel on CUDA)."""
    y, h_n, c_n = torch.lstm(inputs["x"], (inputs["h0"][None], inputs["c0"][None]),
                             [inputs["w_ih"], block_diagonal(inputs["w_hh"]), inputs["b_ih"], inputs["b_hh"]],
                             True, 1, 0.0, False, False, False)
    return y, h_n[0], c_n[0]


def launch(k, inputs, params):
    x, h0, c0, y, h_n, c_n = (inputs[n] for n in ("x", "h0", "c0", "y", "h_n", "c_n"))
    w_ih, w_hh = inputs["w_ih"], inputs["w_hh"]
    (s, b, i), (nh, _, dh) = x.shape, w_hh.shape
    hidden = nh * dh
    x2 = x.reshape(s * b, i)
    gx = torch.empty(s * b, 4 * hidden, dtype=torch.float32, device=x.device)
    k._input_projection_kernel[(triton.cdiv(s * b, 64), triton.cdiv(4 * hidden, 128))](
        x2, w_ih, inputs["b_ih"], inputs["b_hh"], gx, s * b, 4 * hidden, i, x2.stride(0), w_ih.stride(0),
        gx.stride(0), BLOCK_M=64, BLOCK_N=128, BLOCK_K=32)
    bb = params["BLOCK_B"]
    k.lstm_heads_kernel[(nh, triton.cdiv(b, bb))](
        gx, h0, c0, w_hh, y, h_n, c_n, s, b, hidden, dh, h0.stride(0), c0.stride(0), w_hh.stride(0),
        w_hh.stride(1), y.stride(0), y.stride(1), h_n.stride(0), c_n.stride(0),
        BLOCK_B=bb, DH_PAD=max(16, triton.next_power_of_2(dh)))


def flops(shape, dtype):
    s, b, i, dh = shape["T"], shape["B"], shape["I"], shape["DH"]
    h = shape["NH"] * dh
    return 2.0 * s * b * 4 * h * (i + dh)


def bytes_moved(shape, dtype):
    s, b, i, nh, dh = shape["T"], shape["B"], shape["I"], shape["NH"], shape["DH"]
    h = nh * dh
    weights = 4 * h * i + 4 * nh * dh * dh + 8 * h
    return (weights + s * b * (i + h) + 4 * b * h) * dtype.itemsize  # x, h0, c0 in; y, h_n, c_n out


def traffic(shape, dtype, params):
    """The projection GEMM (x once per 128 gate columns, W_ih once per 64 rows, gx written in fp32), then
    each program's head slice of W_hh once, gx read once (fp32) and y written once."""
    s, b, i, nh, dh = shape["T"], shape["B"], shape["I"], shape["NH"], shape["DH"]
    rows, db, gates = s * b, dtype.itemsize, 4 * nh * dh
    projection = (rows * i * triton.cdiv(gates, 128) + gates * i * triton.cdiv(rows, 64)) * db + rows * gates * 4
    recurrence = 4 * nh * dh * dh * db * triton.cdiv(b, params["BLOCK_B"]) + rows * gates * 4 + rows * nh * dh * db
    return projection + recurrence + 4 * b * nh * dh * db


def shape_of(inputs):
    (s, b, i), (nh, _, dh) = inputs["x"].shape, inputs["w_hh"].shape
    return {"T": s, "B": b, "NH": nh, "DH": dh, "I": i}
