"""The judge's element-wise comparison as one pass over the outputs on the device (verify.compare's rule).

The judge compares every output element of every candidate it sees with the reference while the device
is held for that candidate, so the comparison is on the device's critical path. Written as torch
operations it made about thirty passes over the output and its float64 reference (13.8 ms for a
32768 x 4096 output on an H100; benchmarks/experiments/judge_cost.py); here one kernel reads each
element of both once and leaves per-block figures (elements that fail, the worst excess and where it
is, the squared error and the squared reference of the finite elements), which torch sums on the device
for one transfer. The arithmetic is float64, as in verify's own float64 path, so verdicts do not depend
on which path judged. A row's RMS (the tolerance's rms term) takes a first, per-row pass.

verify.compare uses it for floating tensors on a device (not the CPU: there torch's operations are the
judge's, and Triton's CPU interpreter would be slower); tests hold it to the torch path under the
interpreter (tests/test_verdicts.py).

Loading the kernels is not on the device's critical path. A cold run's first comparison compiled them,
built their launchers with the host's C compiler and computed Triton's key: 1.4-2 s of the judge's 3-4 s
readying on an H100 host, which the run's first candidates waited for with the device idle
(docs/performance.md, thirteenth session). `loaded` starts that in a thread of the judge the first time
a pair of dtypes comes and says no until it is done; torch's operations judge meanwhile (the same rule
and figures, tests/test_verdicts.py), except outputs too large for their temporaries, which wait for it.
"""

from __future__ import annotations

import contextlib
import threading

import triton
import triton.language as tl

BLOCK = 4096
ROW_BLOCK = 1024
FLOAT64_MAX = tl.constexpr(1.7976931348623157e308)  # |x| <= this: x is finite (false for NaN and both infinities)
DTYPES = ("float16", "bfloat16", "float32", "float64")
# Outputs up to this many elements are judged with torch's operations while the kernels load (their
# temporaries take ~30 bytes an element); larger ones wait for the kernels.
TORCH_WHILE_LOADING_MAX = 1 << 26


# Sizes are not specialised (Triton would compile a variant per divisibility of each): the judge meets
# many shapes (verification's stand-ins), and each compile would hold the device.
@triton.jit(do_not_specialize=["row_len"])
def _row_rms(ref_ptr, rms_ptr, row_len, BLOCK: tl.constexpr):
    """RMS of one row of the reference over its finite elements (0 for a row with none)."""
    row = tl.program_id(0).to(tl.int64)
    squares = tl.zeros([BLOCK], tl.float64)
    count = tl.zeros([BLOCK], tl.int32)
    for start in range(0, row_len, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        inside = offs < row_len
        r = tl.load(ref_ptr + row * row_len + offs, mask=inside, other=0.0).to(tl.float64)
        finite = inside & (tl.abs(r) <= FLOAT64_MAX)
        squares += tl.where(finite, r * r, 0.0)
        count += finite.to(tl.int32)
    tl.store(rms_ptr + row, tl.sqrt(tl.sum(squares) / tl.maximum(tl.sum(count), 1).to(tl.float64)))


@triton.jit(do_not_specialize=["n", "row_len", "atol", "rtol", "rms_weight"])
def _judge_block(out_ptr, ref_ptr, rms_ptr, n, row_len, atol, rtol, rms_weight,
                 failed_ptr, worst_ptr, worst_at_ptr, error_ptr, size_ptr, HAS_RMS: tl.constexpr,
                 BLOCK: tl.constexpr):
    """One block's figures under |out - ref| <= atol + rtol |ref| (+ rms_weight RMS(ref's row)): NaN or
    Inf never pass, except where the reference holds the same non-finite value."""
    block = tl.program_id(0)
    offs = block.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    o = tl.load(out_ptr + offs, mask=inside, other=0.0).to(tl.float64)
    r = tl.load(ref_ptr + offs, mask=inside, other=0.0).to(tl.float64)
    o_finite = tl.abs(o) <= FLOAT64_MAX
    r_finite = tl.abs(r) <= FLOAT64_MAX
    alike = (~r_finite) & ((o == r) | ((o != o) & (r != r)))
    bound = atol + rtol * tl.abs(r)
    if HAS_RMS:
        bound += rms_weight * tl.load(rms_ptr + offs // row_len, mask=inside, other=0.0)
    diff = tl.abs(o - r)
    failed = inside & ~(diff <= bound) & ~alike
    ratio = tl.where(alike | ~inside, 0.0, diff / bound)
    ratio = tl.where(ratio != ratio, float("inf"), ratio)
    finite = inside & o_finite & r_finite
    error = tl.where(finite, o - r, 0.0)
    size = tl.where(finite, r, 0.0)
    worst_at = tl.argmax(ratio, 0, tie_break_left=True)
    tl.store(failed_ptr + block, tl.sum(failed.to(tl.int32)))
    tl.store(worst_ptr + block, tl.max(ratio, 0))
    tl.store(worst_at_ptr + block, block.to(tl.int64) * BLOCK + worst_at)
    tl.store(error_ptr + block, tl.sum(error * error))
    tl.store(size_ptr + block, tl.sum(size * size))


def _supported(out, ref) -> bool:
    return str(out.dtype).removeprefix("torch.") in DTYPES and str(ref.dtype).removeprefix("torch.") in DTYPES


def figures(out, ref, atol: float, rtol: float, rms: float, row_len: int):
    """(elements that fail, worst excess, its flat index, ||out - ref||, ||ref||) over the finite
    elements, as Python numbers after one transfer; None where the dtypes are not this kernel's."""
    import torch

    if not _supported(out, ref):
        return None
    o, r = out.detach().reshape(-1).contiguous(), ref.detach().reshape(-1).contiguous()
    failed, worst, worst_at, error, size = _launch(o, r, atol, rtol, rms, row_len)
    first_worst = worst.argmax()
    total = torch.stack([failed.sum().to(torch.float64), worst[first_worst], worst_at[first_worst].to(torch.float64),
                         error.sum().sqrt(), size.sum().sqrt()])
    n_failed, worst_excess, at, error_norm, size_norm = total.tolist()
    return int(n_failed), worst_excess, int(at), error_norm, size_norm


def _launch(o, r, atol: float, rtol: float, rms: float, row_len: int, launch=None) -> tuple:
    """The kernels run on flat `o` and `r` (`launch(kernel, grid, *args, **constants)`, by default a
    launch): the per-block buffers (failed, worst, worst_at, error, size) they fill."""
    import torch

    launch = launch or (lambda kernel, grid, *args, **constants: kernel[grid](*args, **constants))
    n = o.numel()
    blocks = triton.cdiv(n, BLOCK)
    rms_per_row = torch.empty(0, dtype=torch.float64, device=o.device)
    if rms and row_len:
        rms_per_row = torch.empty(n // row_len, dtype=torch.float64, device=o.device)
        launch(_row_rms, (n // row_len,), r, rms_per_row, row_len, BLOCK=ROW_BLOCK)
    failed = torch.empty(blocks, dtype=torch.int32, device=o.device)
    worst, error, size = (torch.empty(blocks, dtype=torch.float64, device=o.device) for _ in range(3))
    worst_at = torch.empty(blocks, dtype=torch.int64, device=o.device)
    launch(_judge_block, (blocks,), o, r, rms_per_row, n, max(row_len, 1), float(atol), float(rtol), float(rms),
           failed, worst, worst_at, error, size, HAS_RMS=bool(rms and row_len), BLOCK=BLOCK)
    return failed, worst, worst_at, error, size


_loaded: set = set()  # (out dtype, ref dtype, device, rms or not) whose kernels this process has loaded
_loading: dict = {}  # the same keys -> the thread loading them
_loading_lock = threading.Lock()


def loaded(out, ref, rms: bool) -> bool:
    """Whether this process has the kernels for `out` and `ref` (their dtypes and device, a row RMS
    term or not) compiled and loaded, so that figures() runs at once. If not, they start loading in a
    thread (once) and this says no, except for outputs beyond TORCH_WHILE_LOADING_MAX elements, which
    wait for them. False for dtypes the kernels do not take."""
    if not _supported(out, ref):
        return False
    key = (out.dtype, ref.dtype, out.device, bool(rms))
    with _loading_lock:
        if key in _loaded:
            return True
        thread = _loading.get(key)
        if thread is None:
            thread = _loading[key] = threading.Thread(target=_load, args=(key,), daemon=True)
            thread.start()
    if out.numel() > TORCH_WHILE_LOADING_MAX:
        thread.join()
    return key in _loaded


def _load(key: tuple) -> None:
    """Compile the kernels for `key` and load them (their module and launcher) without running them:
    no device work, so the judge need not hold the device. Best effort: where this fails (a vendor's
    Triton without `warmup`), torch's operations go on judging."""
    import torch

    out_dtype, ref_dtype, device, rms = key

    def load(kernel, grid, *args, **constants) -> None:
        compiled = kernel.warmup(*args, grid=grid, **constants)
        init = getattr(compiled, "_init_handles", None)  # the module and launcher, else loaded at first use
        if callable(init):
            init()

    module = getattr(torch, device.type, None)
    selected = module.device(device) if module is not None and hasattr(module, "device") else contextlib.nullcontext()
    try:
        with selected:
            o, r = torch.empty(1, dtype=out_dtype, device=device), torch.empty(1, dtype=ref_dtype, device=device)
            _launch(o, r, 0.0, 0.0, 1.0 if rms else 0.0, 1, load)
    except Exception:  # noqa: BLE001 - never loaded: torch judges
        return
    with _loading_lock:
        _loaded.add(key)
