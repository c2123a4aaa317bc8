"""A whole GRU sequence in one kernel launch, as torch.nn.GRU (one layer, one direction, biases,
batch_first=False) computes it, gate order r, z, n: for t = 0..T-1,
r = sigmoid(x_t W_ir^T + b_ir + h W_hr^T + b_hr), z likewise, n = tanh(x_t W_in^T + b_in + r (h W_hn^T + b_hn)),
h = (1 - z) n + z h; y[t] = h.

The time loop runs inside the kernel (FlashRNN-style fusion of the sequence), in one of two designs; the knob
GRID picks one per problem.

- GRID = 0, batch tiles: one program per BLOCK_B rows of the batch owns all of the hidden state of those rows,
  so no program needs another's h and there is no grid-wide barrier. Each step walks H in chunks of BLOCK_H: a
  chunk's fp32 gate tiles (BLOCK_B x BLOCK_H) are accumulated over I and H in BLOCK_K slices (the input
  projection inside the loop), then the pointwise math writes y[t]. The previous h is read back from y[t-1]
  (h0 at t = 0), rounded to the tensors' dtype as torch keeps it; a CTA barrier between steps orders one
  step's stores before the next step's loads. The weights are streamed from L2 every step and only cdiv(B,
  BLOCK_B) programs run: a small batch occupies one SM.
- GRID = 1, the whole GPU: one GEMM first computes the input projection of every step at once (gx = x W_ih^T +
  b_ih, plus b_hh for r and z, fp32, T*B x 3H; b_hn stays inside r (...)), the part of the gates that does not
  wait for h. Then cdiv(H, BLOCK_H) x cdiv(B, BLOCK_B) programs, all resident at once, each own BLOCK_H hidden
  units of BLOCK_B batch rows for the whole sequence (launch refuses more programs than the device has
  SMs/CUs: a program that never got one would leave the others waiting for ever). A program loads its slice of
  W_hh (gates r, z, n of its units and a zero fourth gate so that the tile splits in halves: H x 4 BLOCK_H)
  once; Triton keeps it in shared memory. Each step it reads all of h[t-1], which other programs wrote (.cg
  loads: from L2, past the non-coherent L1), multiplies it by its slice (K in H_PAD / BLOCK_K slices that the
  warps take side by side: a batched tl.dot, then summed), adds gx[t], stores its units of y[t] and meets the
  other programs at a grid barrier: an atomic add with release semantics counts it in, the next step's gx is
  loaded, and it spins on an acquire read of the counter until every program has arrived. Under Triton's
  interpreter (TRITON_INTERPRET=1, how kt verifies on a CPU), which runs programs one after another, the first
  program would spin for ever: there launch runs one launch per step with the barrier compiled out (the launch
  boundary is the barrier), the same code otherwise. The barrier itself is verified on a GPU only
  (tests/test_gpu.py: 1024 steps, 32-128 programs).

Shape: T (steps), B (batch), H (hidden), I (input features). Rows of x, h0 and the weights must be
contiguous (as nn.GRU keeps them). The module is self-contained (an artifact keeps one source file),
hence its own sigmoid and tanh.
"""

import functools

import torch
import triton
import triton.language as tl

OUTPUTS = ("y", "h_n")
# the projection of every step's input runs first; the recurrence does the work (the cost model reads it)
SETUP_KERNELS = ("_input_projection_kernel",)
SPACE = {
    "GRID": [0, 1],
    "BLOCK_B": [16, 32, 64],
    "BLOCK_H": [8, 16, 32, 64, 128],
    "BLOCK_K": [32, 64, 128],
    "num_warps": [2, 4, 8],
    "num_stages": [1, 2, 3],
}
CONSTRAINTS = [
    "BLOCK_B <= max(16, 2 * B) and BLOCK_H <= 2 * H",  # 16: tl.dot's fewest rows
    # GRID = 0: four fp32 accumulator tiles per thread; the staged x/h and weight slices fit in shared memory
    "GRID == 1 or (BLOCK_H >= 16 and 4 * BLOCK_B * BLOCK_H // (warp_size * num_warps) <= 256)",
    "GRID == 1 or (BLOCK_B + 3 * BLOCK_H) * BLOCK_K * dtype_bytes * max(num_stages - 1, 1) <= smem_bytes",
    # GRID = 1: every program resident at once (at most one per SM/CU); its slice of W_hh (H x 4 BLOCK_H,
    # Triton keeps it in shared memory / LDS across the sequence) fits there. h is staged there too, but
    # not always beside it (gfx942 at H = 1024, BLOCK_H = 8: 64 KiB in all; sm_90: 96 KiB): a point past
    # the limit fails its compile, which kt records as that point's failure
    "GRID == 0 or ((H + BLOCK_H - 1) // BLOCK_H) * ((B + BLOCK_B - 1) // BLOCK_B) <= units",
    "GRID == 0 or 4 * BLOCK_H * H * dtype_bytes <= smem_bytes",
    "GRID == 0 or BLOCK_K <= H",
]
# a GRID = 1 point within 11% of the fastest one of benchmarks/experiments/rnn_grid_sweep.py at each problem of
# the benchmark (T = 1024, B 16, H 256 and 1024, bf16; H200, 2026-11-26): a new study evaluates it first
SEEDS = [{"GRID": 1, "BLOCK_B": 16, "BLOCK_H": 8, "BLOCK_K": 128, "num_warps": 4, "num_stages": 2}]
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
def _previous_h(t, h0_ptr, stride_h0b, y_ptr, stride_yt, stride_yb):
    """Where step t reads the previous h (and the stride of its rows): h0 at t = 0, else y[t - 1]."""
    if t == 0:
        h_prev = h0_ptr
        stride_hp = stride_h0b
    else:
        h_prev = y_ptr + stride_yt.to(tl.int64) * (t - 1)
        stride_hp = stride_yb
    return h_prev, stride_hp


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
        h_prev, stride_hp = _previous_h(t, h0_ptr, stride_h0b, y_ptr, stride_yt, stride_yb)
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


@triton.jit
def _input_projection_kernel(x_ptr, w_ptr, b_ih_ptr, b_hh_ptr, gx_ptr, M, N, K, HH_BIAS_N, stride_xm, stride_wn,
                             stride_gm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """gx = x @ W_ih^T + b_ih (+ b_hh on the first HH_BIAS_N columns) in fp32, for every step at once: the
    part of the gates that does not wait for h."""
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
    acc += tl.load(b_hh_ptr + rn, mask=n_ok & (rn < HH_BIAS_N), other=0.0).to(tl.float32)[None, :]
    tl.store(gx_ptr + rm[:, None].to(tl.int64) * stride_gm + rn[None, :], acc, mask=(rm[:, None] < M) & n_ok[None, :])


@triton.jit
def _grid_arrive(sync_ptr):
    """Count this program in at sync_ptr once every thread of it has stored its part of this step (a CTA
    barrier, then an atomic add with release semantics: the stores are visible before the count is)."""
    tl.debug_barrier()
    tl.atomic_add(sync_ptr, 1, sem="release")


@triton.jit
def _grid_wait(sync_ptr, target):
    """Spin until `target` programs have arrived at sync_ptr (acquire: their stores are visible to the loads
    that follow), then a CTA barrier so that every thread of the program goes on together. Split from the
    arrival so that loads which do not depend on the other programs are in flight while it waits."""
    arrived = tl.atomic_add(sync_ptr, 0, sem="acquire")
    while arrived < target:
        arrived = tl.atomic_add(sync_ptr, 0, sem="acquire")
    tl.debug_barrier()


@triton.jit
def _recurrent_gates(h_ptr, stride_hb, w, rb, B, H, BLOCK_B: tl.constexpr, BLOCK_K: tl.constexpr,
                     SPLITS: tl.constexpr):
    """h[rb, :] @ W^T for the resident weight tile w (SPLITS, BLOCK_K, N): K split in SPLITS slices that
    the warps take side by side (a batched dot), summed after. h is read from L2 (.cg): other programs
    wrote it."""
    kh = tl.arange(0, SPLITS)[:, None, None] * BLOCK_K + tl.arange(0, BLOCK_K)[None, None, :]
    rows = rb[None, :, None]
    h = tl.load(h_ptr + rows.to(tl.int64) * stride_hb + kh, mask=(rows < B) & (kh < H), other=0.0,
                cache_modifier=".cg")
    return tl.sum(tl.dot(h, w), axis=0)


@triton.jit
def _split4(acc, BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr):
    """The four gate tiles (BLOCK_B, BLOCK_H) of a tile whose column u * 4 + g is gate g of unit u."""
    even, odd = tl.split(tl.reshape(acc, (BLOCK_B, BLOCK_H, 2, 2)))
    g0, g2 = tl.split(even)
    g1, g3 = tl.split(odd)
    return g0, g1, g2, g3


@triton.jit
def gru_seq_grid_kernel(gx_ptr, h0_ptr, w_hh_ptr, b_hh_ptr, y_ptr, h_n_ptr, sync_ptr, t_first, t_last, T, B, H,
                        stride_h0b, stride_whh, stride_yt, stride_yb, stride_hnb, BLOCK_B: tl.constexpr,
                        BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr, H_PAD: tl.constexpr, GRID_SYNC: tl.constexpr):
    SPLITS: tl.constexpr = H_PAD // BLOCK_K
    programs = tl.num_programs(0) * tl.num_programs(1)
    rb = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    rh = tl.program_id(0) * BLOCK_H + tl.arange(0, BLOCK_H)
    # this program's slice of W_hh, loaded once: column u * 4 + g is row g * H + unit u of W_hh for the
    # gates r, z, n (g = 0, 1, 2); g = 3 is padding (zeros) so that the gates split in halves
    cols = tl.arange(0, 4 * BLOCK_H)
    unit = tl.program_id(0) * BLOCK_H + cols // 4
    gate = cols % 4
    w_row = gate * H + unit
    col_ok = (unit < H) & (gate < 3)
    kw = tl.arange(0, SPLITS)[:, None, None] * BLOCK_K + tl.arange(0, BLOCK_K)[None, :, None]
    w = tl.load(w_hh_ptr + w_row[None, None, :].to(tl.int64) * stride_whh + kw, mask=(kw < H) & col_ok[None, None, :],
                other=0.0)
    rows = rb[:, None].to(tl.int64)
    mask = (rb[:, None] < B) & (rh[None, :] < H)
    b_hn = tl.load(b_hh_ptr + 2 * H + rh, mask=rh < H, other=0.0).to(tl.float32)[None, :]
    gx_mask = (rb[:, None] < B) & col_ok[None, :]
    gx_ptrs = gx_ptr + rows * (3 * H) + w_row[None, :]
    gx = tl.load(gx_ptrs + t_first * B * (3 * H), mask=gx_mask, other=0.0)
    for t in range(t_first, t_last):
        h_prev, stride_hp = _previous_h(t, h0_ptr, stride_h0b, y_ptr, stride_yt, stride_yb)
        hr, hz, hn, _ = _split4(_recurrent_gates(h_prev, stride_hp, w, rb, B, H, BLOCK_B, BLOCK_K, SPLITS), BLOCK_B,
                                BLOCK_H)
        xr, xz, xn, _ = _split4(gx, BLOCK_B, BLOCK_H)
        r = _sigmoid(xr + hr)
        z = _sigmoid(xz + hz)
        n = _tanh(xn + r * (hn + b_hn))
        h_own = tl.load(h_prev + rows * stride_hp + rh[None, :], mask=mask, other=0.0, cache_modifier=".cg")
        h = ((1.0 - z) * n + z * h_own.to(tl.float32)).to(y_ptr.dtype.element_ty)
        tl.store(y_ptr + stride_yt.to(tl.int64) * t + rows * stride_yb + rh[None, :], h, mask=mask)
        if t == T - 1:
            tl.store(h_n_ptr + rows * stride_hnb + rh[None, :], h.to(h_n_ptr.dtype.element_ty), mask=mask)
        if GRID_SYNC:
            _grid_arrive(sync_ptr)
        # the next step's input projection does not wait for the other programs: load it while they finish
        t_next = t + 1
        if t_next == t_last:  # nothing left to prefetch: reload this step's (in bounds, unused)
            t_next = t
        gx = tl.load(gx_ptrs + t_next * B * (3 * H), mask=gx_mask, other=0.0)
        if GRID_SYNC:
            _grid_wait(sync_ptr, programs * (t + 1 - t_first))


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
    if params["GRID"]:
        _launch_grid(k, inputs, params)
        return
    x, h0, y, h_n, w_ih, w_hh = (inputs[n] for n in ("x", "h0", "y", "h_n", "w_ih", "w_hh"))
    (s, b, i), hidden = x.shape, h0.shape[1]
    bb = params["BLOCK_B"]
    k.gru_seq_kernel[(triton.cdiv(b, bb),)](
        x, h0, w_ih, w_hh, inputs["b_ih"], inputs["b_hh"], y, h_n, s, b, hidden, i, x.stride(0), x.stride(1),
        h0.stride(0), w_ih.stride(0), w_hh.stride(0), y.stride(0), y.stride(1), h_n.stride(0),
        BLOCK_B=bb, BLOCK_H=params["BLOCK_H"], BLOCK_K=params["BLOCK_K"])


def _launch_grid(k, inputs, params):
    x, h0, y, h_n, w_ih, w_hh = (inputs[n] for n in ("x", "h0", "y", "h_n", "w_ih", "w_hh"))
    (s, b, i), hidden = x.shape, h0.shape[1]
    x2 = x.reshape(s * b, i)
    gx = torch.empty(s * b, 3 * hidden, dtype=torch.float32, device=x.device)
    k._input_projection_kernel[(triton.cdiv(s * b, 64), triton.cdiv(3 * hidden, 128))](
        x2, w_ih, inputs["b_ih"], inputs["b_hh"], gx, s * b, 3 * hidden, i, 2 * hidden, x2.stride(0),
        w_ih.stride(0), gx.stride(0), BLOCK_M=64, BLOCK_N=128, BLOCK_K=32)
    bb, bh, h_pad = params["BLOCK_B"], params["BLOCK_H"], triton.next_power_of_2(hidden)
    grid = (triton.cdiv(hidden, bh), triton.cdiv(b, bb))
    _check_resident(x.device, grid)
    sync = torch.zeros(1, dtype=torch.int32, device=x.device)
    args = (gx, h0, w_hh, inputs["b_hh"], y, h_n, sync)
    sizes_and_strides = (s, b, hidden, h0.stride(0), w_hh.stride(0), y.stride(0), y.stride(1), h_n.stride(0))
    meta = dict(BLOCK_B=bb, BLOCK_H=bh, BLOCK_K=min(params["BLOCK_K"], h_pad), H_PAD=h_pad)
    if x.device.type == "cpu":  # the interpreter runs programs one after another: a launch per step instead
        for t in range(s):
            k.gru_seq_grid_kernel[grid](*args, t, t + 1, *sizes_and_strides, **meta, GRID_SYNC=False)
    else:
        k.gru_seq_grid_kernel[grid](*args, 0, s, *sizes_and_strides, **meta, GRID_SYNC=True)


def _check_resident(device, grid):
    """A grid-synchronised kernel waits on every one of its programs each step: they must all be resident at
    once, one per SM/CU at most, or it never finishes."""
    if device.type == "cuda":
        units = _units(device.index if device.index is not None else torch.cuda.current_device())
        if grid[0] * grid[1] > units:
            raise ValueError(f"GRID = 1 needs every program resident at once: {grid[0] * grid[1]} programs, "
                             f"{units} SMs/CUs on this device; take a larger BLOCK_H or BLOCK_B")


@functools.cache
def _units(index):
    return torch.cuda.get_device_properties(index).multi_processor_count


def flops(shape, dtype):
    s, b, h, i = shape["T"], shape["B"], shape["H"], shape["I"]
    return 2.0 * s * b * 3 * h * (i + h)


def bytes_moved(shape, dtype):
    s, b, h, i = shape["T"], shape["B"], shape["H"], shape["I"]
    weights = 3 * h * (i + h) + 6 * h
    return (weights + s * b * (i + h) + 2 * b * h) * dtype.itemsize  # x, h0 in; y, h_n out


def traffic(shape, dtype, params):
    """GRID = 1: the projection GEMM (x once per 128 gate columns, W_ih once per 64 rows, gx written
    in fp32), W_hh once, and per step every program reads all of h of its batch rows, gx[t] and writes its
    part of y. GRID = 0: every step reads the weights once per batch tile and x_t and h once per hidden
    chunk (L2 reuse ignored)."""
    s, b, h, i = shape["T"], shape["B"], shape["H"], shape["I"]
    if params.get("GRID", 0):
        rows, db, gates = s * b, dtype.itemsize, 3 * h
        projection = (rows * i * triton.cdiv(gates, 128) + gates * i * triton.cdiv(rows, 64)) * db + rows * gates * 4
        programs = triton.cdiv(h, params["BLOCK_H"]) * triton.cdiv(b, params["BLOCK_B"])
        per_step = programs * min(b, params["BLOCK_B"]) * h * db + b * gates * 4 + b * h * db
        return projection + gates * h * db + s * per_step + b * h * db
    weights = 3 * h * (i + h) * triton.cdiv(b, params["BLOCK_B"])
    activations = b * (i + h) * triton.cdiv(h, params["BLOCK_H"])
    return (s * (weights + activations + 2 * b * h + 6 * h) + 2 * b * h) * dtype.itemsize


def grid_syncs(shape, dtype, params):
    """GRID = 1 meets every program at a grid barrier once a step (the cost model's latency chain)."""
    return shape["T"] if params.get("GRID", 0) else 0


def shape_of(inputs):
    (s, b, i), h = inputs["x"].shape, inputs["h0"].shape[1]
    return {"T": s, "B": b, "H": h, "I": i}
