"""The judge's worker: it makes each verification run's inputs and reference outputs from the problem's
module alone, holds them (on the device in measured mode) for every candidate of the problem, lends the
inputs and the poisoned outputs to a candidate's worker as shared memory, and judges what the
candidate's launches left there. No candidate code runs in this process, and the reference outputs and
the pristine inputs never leave it, so a candidate can neither patch the judge nor reach its copy.

Shared memory is torch's own (torch.multiprocessing's reductions through multiprocessing's pickler):
device memory handles on a GPU, shared pages on the CPU (file descriptors through a Unix socket under
the short directory kt_cli.evaluate.pool gives every worker). The bytes a judge hands out are opened once,
in the candidate's worker; the CLI process only relays them."""

from __future__ import annotations

import os
import pickle
from collections import OrderedDict
from dataclasses import dataclass

from kt_cli.evaluate.verify import Case, Judge, case_seed, make_case, poison
from kt_cli.types import shape_key

CPU_BUDGET_BYTES = 2 << 30  # held cases' bytes in a judge on the CPU before the least recent is dropped
DEVICE_BUDGET_FRACTION = 0.25  # of the device memory free when the judge made its first case


def share(value) -> bytes:
    """`value` (tensors in dicts and lists) as bytes that another process opens onto the same memory."""
    import torch.multiprocessing  # noqa: F401  (registers torch's tensor reductions with the pickler)
    from multiprocessing.reduction import ForkingPickler

    return bytes(ForkingPickler.dumps(value))


def open_shared(data: bytes):
    return pickle.loads(data)  # noqa: S301  (bytes made by share() in kt's own judge worker)


def run_keys(runs: list) -> list[tuple]:
    """A key per run: (shape key, trial, occurrence). A run listed twice (the repeat of the first)
    gets buffers of its own, so the second launch cannot simply leave the first one's result."""
    seen: dict = {}
    keys = []
    for shape, trial in runs:
        base = (shape_key(shape), trial)
        seen[base] = seen.get(base, -1) + 1
        keys.append((*base, seen[base]))
    return keys


@dataclass
class HeldCase:
    case: Case
    pristine: dict  # clones of the inputs as made: what the launch must leave unchanged
    nbytes: int
    lent: bool = False  # lent to a candidate (hold_cases) and not judged since

    def lend(self) -> None:
        """The case as a candidate must find it: restored first where the candidate it was last lent to
        was never judged. That candidate's worker may have written every output and then crashed, timed
        out or been refused (no verdict follows a failed request); left as it was, its outputs passed for
        the next candidate's, and a candidate that wrote nothing at the verification shapes was verified
        (tests/test_adversarial.py)."""
        if self.lent:
            self.restore()
        self.lent = True

    def restore(self) -> None:
        """Undo what a candidate did: inputs back as made, outputs poisoned again."""
        for name, original in self.pristine.items():
            self.case.inputs[name].copy_(original)
        for name in self.case.outputs:
            poison(self.case.inputs[name])
        self.lent = False


class HeldCases:
    """The cases of every problem a judge has seen, least recently used dropped past a byte budget."""

    def __init__(self):
        self._held: OrderedDict = OrderedDict()
        self._budget: int | None = None

    def get(self, problem, problem_id: tuple, runs: list, dtype: str, seed: int, device: str,
            free_bytes=None) -> list[HeldCase]:
        """The held cases of `runs`, made where missing (then `problem` is a Kernel: make_inputs and
        reference are used; with problem None, a missing case is an error)."""
        keys = [(*problem_id, dtype, seed, *key) for key in run_keys(runs)]
        for (shape, trial), key in zip(runs, keys):
            if key not in self._held:
                if problem is None:
                    raise KeyError(f"no held case {key}")
                self._make_room(free_bytes, keep=set(keys))
                self._held[key] = _hold(make_case(problem, shape, dtype, device, case_seed(seed, trial)))
            self._held.move_to_end(key)
        return [self._held[key] for key in keys]

    def _make_room(self, free_bytes, keep: set) -> None:
        """Drop the least recently used cases (never those of the request being served) past the budget."""
        if self._budget is None:
            self._budget = int(free_bytes() * DEVICE_BUDGET_FRACTION) if free_bytes else CPU_BUDGET_BYTES
        for key in [k for k in self._held if k not in keep]:
            if sum(h.nbytes for h in self._held.values()) <= self._budget:
                return
            del self._held[key]


def _hold(case: Case) -> HeldCase:
    pristine = {k: v.clone() for k, v in case.inputs.items() if k not in case.outputs and hasattr(v, "clone")}
    tensors = [*case.inputs.values(), *case.expected.values(), *pristine.values()]
    nbytes = sum(t.numel() * t.element_size() for t in tensors if hasattr(t, "element_size"))
    return HeldCase(case, pristine, nbytes)


def judge_held(held: list[HeldCase], tolerance) -> dict:
    """Judge the runs in order (each run's outputs, untouched inputs, outputs that follow new inputs),
    then restore every case for the next candidate. Raises WrongResult."""
    judge = Judge(tolerance)
    try:
        for item in held:
            judge.judge(item.case, item.case.inputs, {**item.case.inputs, **item.pristine})
    finally:
        for item in held:
            item.restore()
    return judge.verification().to_json()

