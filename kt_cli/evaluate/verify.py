"""The correctness protocol: fresh seeded inputs, poisoned outputs, every element within
atol + rtol·|ref| of the reference (torch.testing.assert_close's rule and defaults; a kernel whose
rounding error scales with the output's typical size, such as an accumulation over K, may add
rms·RMS of the reference's row with its reason), NaN/Inf never
pass, an output that ignores its input fails. Runs in a worker. The norm-wise error
‖out − ref‖/‖ref‖ is kept for reports; it decides nothing (a zeroed row of a 32768-row output moves it
by 0.6%)."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Callable

# torch.testing.assert_close's defaults (rtol, atol) per dtype; float8 e4m3 has 3 mantissa bits, so one
# unit in the last place is 2^-3 of the value.
DEFAULTS = {"float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
            "float8_e4m3": (1.25e-1, 1e-5)}


class WrongResult(Exception):
    """The candidate computed a wrong answer; the message says where and how wrong."""


@dataclass(frozen=True)
class Tolerance:
    """|out − ref| ≤ atol + rtol·|ref| + rms·RMS(ref's row) for every element; `why` says where a bound
    looser than assert_close's comes from. The rms term is for rounding that grows with the typical
    magnitude of the outputs in the element's row (the last dimension) rather than the element's own (a
    sum of K products: near-zero results of large cancelling terms); an element a kernel leaves zero is
    off by its whole |ref| and still fails."""

    rtol: float
    atol: float
    why: str
    rms: float = 0.0

    def to_json(self) -> dict:
        return {"rtol": self.rtol, "atol": self.atol, "rms": self.rms, "why": self.why}

    def describe(self) -> str:
        return f"{self.atol:g} + {self.rtol:g}*|ref|" + (f" + {self.rms:g}*rms(ref)" if self.rms else "")


def tolerance_for(dtype: str, kernel_tolerance=None, recipe_tolerance=None) -> Tolerance:
    """The recipe's tolerance, else the kernel module's TOLERANCE[dtype], else assert_close's default.
    Each may be a table {rtol, atol, why} or a number: a relative tolerance (atol stays the default),
    as kt's norm-wise tolerances were written before element-wise verification."""
    rtol, atol = DEFAULTS[dtype]
    default = Tolerance(rtol, atol, f"torch.testing.assert_close's default for {dtype}")
    for value, where in ((recipe_tolerance, "the recipe's problem.tolerance"),
                         (kernel_tolerance, "the kernel module's TOLERANCE")):
        if value is None:
            continue
        if isinstance(value, dict):
            return Tolerance(float(value.get("rtol", rtol)), float(value.get("atol", atol)),
                             str(value.get("why") or where), float(value.get("rms", 0.0)))
        return Tolerance(max(float(value), rtol), atol, f"{where} (relative {float(value):g})")
    return default


@dataclass(frozen=True)
class Verification:
    max_rel_error: float  # norm-wise, for reports
    worst_excess: float  # max over elements of |out − ref| / (atol + rtol·|ref|): 1 is the limit
    tolerance: Tolerance
    trials: int
    shapes: tuple

    def to_json(self) -> dict:
        return {"max_rel_error": self.max_rel_error, "worst_excess": self.worst_excess,
                "tolerance": self.tolerance.to_json(), "trials": self.trials, "shapes": list(self.shapes)}


def poison(tensor) -> None:
    """Fill an output so that any element the kernel does not write is caught."""
    import torch

    if tensor.dtype.is_floating_point:
        tensor.fill_(float("nan"))
    elif tensor.dtype == torch.bool:
        tensor.fill_(True)
    else:
        tensor.fill_(-0x5A5A5A5 if tensor.dtype in (torch.int32, torch.int64) else 123)


def compare(out, ref, tol: Tolerance) -> tuple[float, float]:
    """(norm-wise relative error, worst element's excess over its bound). Raises WrongResult naming the
    worst element (its index, both values) and how many elements fail.

    The judge runs this for every candidate on the device's critical path. On a device, floating
    outputs are judged in one pass by kt_cli.evaluate.judge_kernel (float64 arithmetic, the rule below)
    once the judge has it loaded (judge_kernel.loaded: it loads in the background); elsewhere, and until
    then, with torch's operations: floating outputs of at most 16 bits (bf16, fp16, fp8) in float32
    (the reference, float64 as made, rounded to float32 moves by 2^-24 of itself: a 2^-16th of the
    tightest such tolerance), synchronising once where they pass; float32 and integer outputs, and
    values whose float32 squares overflow (a row's RMS or the norm of values beyond ~1e17), in float64."""
    import torch

    if out.numel() != ref.numel():
        raise WrongResult(f"output has {out.numel()} elements, reference {ref.numel()}")
    if out.numel() == 0:
        return 0.0, 0.0
    shape = tuple(ref.shape)
    row = shape[-1] if shape else ref.numel()
    found = None
    if out.device.type != "cpu" and out.is_floating_point() and ref.is_floating_point():
        from kt_cli.evaluate import judge_kernel

        if judge_kernel.loaded(out, ref, bool(tol.rms and row)):
            try:
                found = judge_kernel.figures(out, ref, tol.atol, tol.rtol, tol.rms, row)
            except Exception:  # noqa: BLE001 - a device Triton cannot launch on (a third-party vendor's): torch judges
                found = None
    if found is None and out.is_floating_point() and out.element_size() <= 2 and ref.is_floating_point():
        found = _figures(out, ref, tol, row, torch.float32)
    if found is None:
        found = _figures(out, ref, tol, row, torch.float64)
    failed, worst_excess, worst, error, size = found
    norm = error / max(size, 1e-30)
    if failed:
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(worst), shape)) if shape else ()
        got, expected = float(out.reshape(-1)[worst]), float(ref.reshape(-1)[worst])
        kind = "unwritten or not finite" if not math.isfinite(got) else "off"
        raise WrongResult(
            f"{failed} of {out.numel()} elements fail |out - ref| <= {tol.describe()}; "
            f"worst at {list(index)}: got {got:.6g}, expected {expected:.6g} ({kind}); "
            f"norm-wise relative error {norm:.3g}")
    return norm, min(worst_excess, sys.float_info.max)


def _figures(out, ref, tol: Tolerance, row: int, dtype):
    """compare()'s figures with torch's operations in `dtype`: (elements that fail, worst excess, its
    flat index, ||out - ref||, ||ref|| over the finite elements); None where a float32 square overflowed."""
    import torch

    o = out.detach().reshape(-1).to(dtype)
    r = ref.detach().reshape(-1).to(dtype)
    both_nonfinite_alike = (~torch.isfinite(r)) & ((o == r) | (torch.isnan(o) & torch.isnan(r)))
    finite = torch.isfinite(o) & torch.isfinite(r)
    bound = tol.atol + tol.rtol * r.abs()
    if tol.rms:
        bound = bound + tol.rms * row_rms(r, row)
    diff = (o - r).abs()
    bad = ~(diff <= bound) & ~both_nonfinite_alike  # NaN compares False: a NaN or Inf output fails
    ratio = torch.where(both_nonfinite_alike, torch.zeros_like(diff), diff / bound).nan_to_num(math.inf, math.inf)
    zero = torch.zeros((), dtype=dtype, device=o.device)
    error = torch.linalg.vector_norm(torch.where(finite, o - r, zero))
    size = torch.linalg.vector_norm(torch.where(finite, r, zero))
    overflow = (torch.isinf(bound) & torch.isfinite(r)).any() | torch.isinf(error) | torch.isinf(size)
    failed, overflowed, worst_excess, worst, error, size = torch.stack(
        [bad.sum().to(torch.float64), overflow.to(torch.float64), ratio.max().to(torch.float64),
         ratio.argmax().to(torch.float64), error.to(torch.float64), size.to(torch.float64)]).tolist()
    if overflowed and dtype != torch.float64:
        return None
    return int(failed), worst_excess, int(worst), error, size


def row_rms(flat, row: int):
    """RMS of each row (the last dimension) of a flattened tensor over its finite elements, per element:
    the typical size of the outputs an element was reduced beside (a causal attention output's first
    rows average a few values and are far larger than its last ones)."""
    import torch

    if row == 0:
        return torch.zeros_like(flat)
    rows = flat.reshape(-1, row)
    finite = torch.isfinite(rows)
    squares = torch.where(finite, rows, torch.zeros_like(rows)).square().sum(-1, keepdim=True)
    rms = (squares / finite.sum(-1, keepdim=True).clamp(min=1)).sqrt()
    return rms.expand_as(rows).reshape(-1)


@dataclass
class Case:
    """One verification run: fresh seeded inputs with the outputs poisoned, and the reference outputs,
    made before any candidate code ran on them."""

    shape: dict
    inputs: dict
    expected: dict
    outputs: tuple


def case_seed(seed: int, trial: int) -> int:
    return seed + 7919 * trial


def case_plan(shapes: list[dict], trials: int = 3) -> list[tuple[dict, int]]:
    """(shape, trial) of every run: `trials` at least, every shape once and the first shape again on
    other inputs (a result cached per shape does not follow its new inputs)."""
    return [(shapes[t % len(shapes)], t) for t in range(max(trials, len(shapes) + 1))]


def expected_outputs(problem, inputs: dict, outputs: tuple) -> dict:
    """The outputs `inputs` must produce: the reference function's on the inputs that are not outputs,
    else (differential verification) the kernel's at its reference configuration, launched on a copy
    whose outputs are poisoned first."""
    if not problem.differential:
        return problem.reference({k: v for k, v in inputs.items() if k not in outputs})
    poisoned = dict(inputs)
    for name in outputs:
        poisoned[name] = inputs[name].clone()
        poison(poisoned[name])
    after = problem.run_reference_config(poisoned)
    return {name: after[name].double() for name in outputs}


def module_tolerance(problem, dtype: str):
    """The module's TOLERANCE for `dtype`; in differential verification, where the module gives none,
    twice assert_close's default (two roundings, two summation orders) and which configuration it is."""
    own = (problem.attr("TOLERANCE", {}) or {}).get(dtype)
    if own is not None or not problem.differential:
        return own
    rtol, atol = DEFAULTS[dtype]
    params, options = problem.reference_point()
    return {"rtol": 2 * rtol, "atol": 2 * atol, "rms": rtol,
            "why": f"differential: against this kernel at its reference configuration {{**{params}, **{options}}} "
                   "(no reference function); twice assert_close's default"}


def make_case(problem, shape: dict, dtype: str, device: str, seed: int) -> Case:
    """Inputs and reference outputs of `problem` (a Kernel whose make_inputs and reference are used)."""
    from kt_cli.kernel import Tensors

    inputs = problem.make_inputs(shape, dtype, Tensors(device, seed))
    outputs = problem.outputs(inputs)
    expected = expected_outputs(problem, inputs, outputs)
    for name in outputs:
        if name not in expected:
            raise WrongResult(f"reference returns no output {name!r}")
        poison(inputs[name])
    return Case(dict(shape), inputs, expected, outputs)


class Judge:
    """Judges the runs of one candidate in turn: every output element against the reference, inputs
    left as they were, and outputs that follow their inputs. Holds the original inputs of a case
    (`snapshot`) when the launch ran on the same tensors."""

    def __init__(self, tolerance: Tolerance):
        self.tolerance = tolerance
        self.worst_norm = self.worst_excess = 0.0
        self.previous: dict = {}
        self.shapes: list = []

    def judge(self, case: Case, after: dict, before: dict | None = None) -> None:
        """`after`: the case's tensors once the launch ran; `before`: the inputs as made (default:
        case.inputs, when the launch ran on copies)."""
        before = case.inputs if before is None else before
        self.shapes.append(dict(case.shape))
        for name, tensor in before.items():
            if name not in case.outputs and hasattr(tensor, "shape") and not _same(tensor, after[name]):
                raise WrongResult(f"the launch wrote into its input {name!r} (shape {case.shape}); "
                                  "only OUTPUTS may change")
        for name in case.outputs:
            try:
                norm, excess = compare(after[name], case.expected[name], self.tolerance)
            except WrongResult as exc:
                raise WrongResult(f"output {name!r} shape {case.shape}: {exc}") from None
            self.worst_norm, self.worst_excess = max(self.worst_norm, norm), max(self.worst_excess, excess)
            key = (tuple(case.shape.items()), name)
            if key in self.previous and _same(self.previous[key][0], after[name]) and \
                    not _same(self.previous[key][1], case.expected[name]):
                raise WrongResult(f"output {name!r} did not change when its inputs did (cached or constant result)")
            self.previous[key] = (after[name].detach().clone(), case.expected[name])

    def verification(self) -> Verification:
        return Verification(self.worst_norm, self.worst_excess, self.tolerance, len(self.shapes), tuple(self.shapes))


def launch_watched(kernel, inputs: dict, params: dict, options: dict, watched_names: tuple = (),
                   synchronize: Callable[[], None] = lambda: None) -> None:
    """Launch the candidate under kt_cli.evaluate.launch_watch; raises its rejection."""
    from kt_cli.evaluate.launch_watch import LaunchWatch

    watch = LaunchWatch(watched_names)
    with watch.watching():
        kernel.launch(inputs, params, options)
    synchronize()
    watch.verdict()


def _same(a, b) -> bool:
    """Equal shapes and values, NaN equal to NaN (inputs may hold NaN on purpose)."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    return a.is_floating_point() and bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())


def pack(value) -> bytes:
    """Tensors (in dicts and lists) as bytes for a pipe: torch.save, not shared memory."""
    import io

    import torch

    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def unpack(data: bytes):
    import io

    import torch

    return torch.load(io.BytesIO(data), weights_only=True)
