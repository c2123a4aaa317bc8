"""The correctness protocol: fresh seeded inputs, poisoned outputs, relative error under a dtype
tolerance, NaN/Inf never pass, an output that ignores its input fails. Runs in a worker."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

TOLERANCE = {"float32": 1e-5, "float16": 1e-2, "bfloat16": 1e-2, "float8_e4m3": 6e-2}


class WrongResult(Exception):
    """The candidate computed a wrong answer; the message says where and how wrong."""


@dataclass(frozen=True)
class Verification:
    max_rel_error: float
    tolerance: float
    trials: int
    shapes: tuple

    def to_json(self) -> dict:
        return {"max_rel_error": self.max_rel_error, "tolerance": self.tolerance, "trials": self.trials,
                "shapes": list(self.shapes)}


def poison(tensor) -> None:
    """Fill an output so that any element the kernel does not write is caught."""
    import torch

    if tensor.dtype.is_floating_point:
        tensor.fill_(float("nan"))
    elif tensor.dtype == torch.bool:
        tensor.fill_(True)
    else:
        tensor.fill_(-0x5A5A5A5 if tensor.dtype in (torch.int32, torch.int64) else 123)


def relative_error(out, ref) -> tuple[float, str]:
    """‖out − ref‖ / ‖ref‖ in float64, and where the worst element is."""
    import torch

    o, r = out.detach().to(torch.float64).reshape(-1), ref.detach().to(torch.float64).reshape(-1)
    if o.numel() != r.numel():
        raise WrongResult(f"output has {o.numel()} elements, reference {r.numel()}")
    bad = ~torch.isfinite(o)
    if bool(bad.any()) and not bool((~torch.isfinite(r))[bad].all()):
        index = int(bad.nonzero()[0])
        raise WrongResult(f"non-finite output {float(o[index])} at flat index {index} (unwritten or overflow)")
    diff = (o - r).nan_to_num(0.0)
    ref_norm = float(r.nan_to_num(0.0).norm())
    worst = int(diff.abs().argmax()) if diff.numel() else 0
    where = f"flat index {worst}: got {float(o[worst]):.6g}, expected {float(r[worst]):.6g}" if diff.numel() else ""
    return float(diff.norm()) / max(ref_norm, 1e-30), where


def verify_candidate(kernel, params: dict, options: dict, shapes: list[dict], dtype: str, device: str,
                     seed: int, tolerance: float | None = None, trials: int = 3,
                     synchronize: Callable[[], None] = lambda: None) -> Verification:
    """Run the candidate `trials` times on fresh inputs (cycling over `shapes`) on torch device type
    `device` and compare with the reference. Raises WrongResult on the first failure. `synchronize`
    waits for the device (the vendor runtime's; CPU work is synchronous)."""
    from kt_cli.kernel import Tensors

    tol = tolerance or kernel.attr("TOLERANCE", {}).get(dtype) or TOLERANCE[dtype]
    worst = 0.0
    previous: dict = {}
    used = []
    for trial in range(max(trials, len(shapes))):
        shape = shapes[trial % len(shapes)]
        used.append(dict(shape))
        inputs = kernel.make_inputs(shape, dtype, Tensors(device, seed + 7919 * trial))
        outputs = kernel.outputs(inputs)
        expected = kernel.reference({k: v for k, v in inputs.items() if k not in outputs})
        for name in outputs:
            poison(inputs[name])
        kernel.launch(inputs, params, options)
        synchronize()
        for name in outputs:
            if name not in expected:
                raise WrongResult(f"reference returns no output {name!r}")
            err, where = relative_error(inputs[name], expected[name])
            if err != err or err > tol:
                raise WrongResult(f"output {name!r} shape {shape}: relative error {err:.3g} > {tol:g} ({where})")
            worst = max(worst, err)
            key = (tuple(shape.items()), name)
            if key in previous and _same(previous[key][0], inputs[name]) and not _same(previous[key][1], expected[name]):
                raise WrongResult(f"output {name!r} did not change when its inputs did (cached or constant result)")
            previous[key] = (inputs[name].clone(), expected[name].clone())
    return Verification(worst, tol, max(trials, len(shapes)), tuple(used))


def _same(a, b) -> bool:
    import torch

    return a.shape == b.shape and bool(torch.equal(a, b))

