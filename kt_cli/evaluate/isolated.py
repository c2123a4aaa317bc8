"""Verification (and, in measured mode, timing) with the judge out of the candidate's reach.

Three processes take part. A judge worker loads only the module that defines the problem (the task's,
for generated code), makes each run's inputs and reference outputs once per problem and holds them (on
the device in measured mode); the candidate's worker (fresh for every kernel module) launches on the
judge's inputs and outputs, shared with it, under the launch watch; the judge then compares what the
launches left with its reference and checks the inputs against its pristine copies. This process only
relays. A candidate can patch torch, kt or the reference in its own process all it likes: the
verdict is not computed there, and the reference never enters it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Callable

from kt_cli.evaluate.device_turns import FIRST, DeviceTurns
from kt_cli.evaluate.failure import RESTART_ON, WorkerFailure
from kt_cli.evaluate.launch_watch import every_watched_name
from kt_cli.evaluate.phases import PhaseClock
from kt_cli.evaluate.pool import WorkerPool
from kt_cli.evaluate.race import Bound
from kt_cli.evaluate.verify import case_plan


class IsolatedVerifier:
    """The judge of one device: the CPU under Triton's interpreter (`target` None, static mode) or a
    vendor's device (measured mode). Hold `lock` around one candidate's calls: every candidate of a
    problem runs on the same held cases."""

    def __init__(self, timeout: float, env: dict, target=None):
        self.timeout, self.target = timeout, target
        # under the interpreter a candidate may still reach for any vendor's device objects
        self.watched_names = every_watched_name()
        self.judge_pool = WorkerPool(1, env, spare=("judge", target) if target is not None else None)
        self.lock = DeviceTurns()  # the device's turns: the most promising waiting candidate first
        self._interpreter_defects: list | None = None  # asked of the interpreter once, after a failure

    def stop(self) -> None:
        self.judge_pool.stop()

    def _judge(self, op: str, **payload):
        return self.judge_pool.call(op, {**payload, "target": self.target}, self.timeout, restart_on=RESTART_ON)

    def refuses(self, source, shape: dict, dtype: str, seed: int) -> str:
        """Why the problem's own module cannot make a verification run at `shape` (its make_inputs or
        reference fails there), or "" when it can; the run made is held for the verifications to come."""
        try:
            self._judge("hold_cases", source=source, runs=case_plan([shape], trials=1), dtype=dtype, seed=seed)
        except WorkerFailure as exc:
            return f"{exc.kind}: {exc.message.splitlines()[0][:200] if exc.message else ''}"
        return ""

    def ready(self, worker: WorkerPool, source, shapes: list, dtype: str, seed: int) -> None:
        """Before a problem's first candidate comes: the candidate's worker readies its device and loads
        the module, the judge makes and holds the cases verify() will ask for and starts loading its
        comparison kernels (they load in the background: judge_kernel.loaded).
        The first candidate of a run paid 1.5-2 s of this on the H100 hosts while the device waited. The
        two workers ready at once (one after the other, the judge's 3-4 s of a cold run began 0.8 s late
        on an H100 host and the first candidate waited for it). A failure here is left to that candidate,
        whose own requests say what is wrong. Readying holds the device (`lock`): the judge's cases and
        references are device work, and a later problem's (an 8192³ reference in float64) must not run
        beside an earlier problem's timed candidate."""
        def ready_device() -> None:
            with contextlib.suppress(WorkerFailure):  # (a module that patches torch leaves no worker it patched)
                worker.call("ready_device", {"source": source, "target": self.target}, self.timeout,
                            restart_on=RESTART_ON)

        with self.lock:
            beside = threading.Thread(target=ready_device, daemon=True)
            beside.start()
            try:
                with contextlib.suppress(WorkerFailure):
                    self._judge("ready_judge", source=source, runs=verification_runs(shapes), dtype=dtype, seed=seed)
            finally:
                beside.join()  # the device is not lent on before both are done

    def verify(self, worker: WorkerPool, source, params: dict, options: dict, shapes: list, dtype: str, seed: int,
               recipe_tolerance=None, clock: PhaseClock | None = None) -> dict:
        """Verification (as JSON) of `params` on `shapes`: runs on fresh inputs (every shape, the first
        again on other inputs), then the first run once more on buffers of its own (a launch must be
        repeatable). Raises WorkerFailure (`wrong`, `rejected`, `crash`, `timeout`). `clock` learns
        how long each step took."""
        clock = clock or PhaseClock()
        runs = verification_runs(shapes)
        try:
            with clock.phase("verify.inputs"):
                held = self._judge("hold_cases", source=source, runs=runs, dtype=dtype, seed=seed)
            started = time.perf_counter()
            steps = worker.call("launch_held", {"source": source, "params": params, "options": options,
                                                "shared": held["shared"], "watched_names": self.watched_names,
                                                "target": self.target}, self.timeout, restart_on=RESTART_ON)["steps"]
            clock.add("verify.load", steps["load"])
            clock.add("verify.launches", steps["launches"])
            clock.add("verify.relay", time.perf_counter() - started - steps["load"] - steps["launches"])
            with clock.phase("verify.judging"):
                return self._judge("judge_cases", source=source, runs=runs, dtype=dtype, seed=seed,
                                   tolerance=recipe_tolerance)
        except WorkerFailure as exc:
            raise self._interpreters_failure(worker, exc, dtype) or exc from None

    def _interpreters_failure(self, worker: WorkerPool, exc: WorkerFailure, dtype: str) -> WorkerFailure | None:
        """A failure under the interpreter that a defect it still has explains (interpreter_fixes), as
        an `interpreter` failure rather than the kernel's `wrong` or `crash`; None otherwise."""
        from kt_cli.evaluate.interpreter_fixes import blame

        if self.target is not None or exc.kind not in ("wrong", "crash"):
            return None
        if self._interpreter_defects is None:
            self._interpreter_defects = worker.call("interpreter_defects", {}, self.timeout, restart_on=RESTART_ON)
        message = blame(exc.kind, exc.message, dtype, self._interpreter_defects)
        return WorkerFailure("interpreter", message) if message else None

    def time(self, worker: WorkerPool, source, candidate, shapes: list, seed: int, recipe_tolerance=None,
             race: Bound | None = None, clock: PhaseClock | None = None, screen: bool = False) -> dict:
        """Measured mode, after verify(): time the candidate on the first run's held tensors (stopping
        early once it is surely slower than the `race` bound), then have the judge check what the last timed
        batch left (the judge poisoned them before timing). With `screen`: racing's first timing,
        before verify() (requests.time_held); the judge's verdict on its batch is returned as
        "verification". `clock`'s steps are named after the phase: time.* or screen.*."""
        clock = clock or PhaseClock()
        phase = "screen" if screen else "time"
        first = case_plan(shapes)[:1]
        with clock.phase(f"{phase}.inputs"):
            held = self._judge("hold_cases", source=source, runs=first, dtype=candidate.dtype, seed=seed)
        started = time.perf_counter()
        out = worker.call("time_held", {"source": source, "candidate": candidate, "target": self.target,
                                        "shared": held["shared"], "outputs": held["outputs"][0],
                                        "race": race, "screen": screen,
                                        "watched_names": self.watched_names if screen else ()},
                          self.timeout, restart_on=RESTART_ON)
        steps = out.pop("steps", {})
        for step, seconds in steps.items():
            clock.add(f"{phase}.{step}", seconds)
        clock.add(f"{phase}.relay", time.perf_counter() - started - sum(steps.values()))
        with clock.phase(f"{phase}.judging"):
            verdict = self._judge("judge_cases", source=source, runs=first, dtype=candidate.dtype, seed=seed,
                                  tolerance=recipe_tolerance,
                                  after="after its first timed calls: " if screen else "after the timed calls: ")
        return {**out, "verification": verdict} if screen else out

    def verify_and_time(self, worker: WorkerPool, source, candidate, shapes: list, seed: int, clock: PhaseClock,
                        recipe_tolerance=None, race: Callable[[], Bound | None] = lambda: None,
                        before_verify: Callable[[], None] | None = None,
                        priority: Callable[[], float] = lambda: 0.0) -> tuple[dict, dict]:
        """Measured mode: (verification, timing) of one candidate on the problem and `shapes`; `clock`
        learns how long each took (the wait for the device left out). Racing: where `race` (read once
        the device is this candidate's) gives a bound, the candidate is screened first (time(screen=
        True)); one whose first samples lie surely above the bound is raced out there, with the
        judge's verdict on the problem's outputs its screen left as its verification: it cannot win,
        so it gets neither the full verification nor the full timing. Any other is verified, then
        timed fully (racing on against the bound); `before_verify` (a screened candidate's compile of
        its verification shapes) runs between its screen and its verification with the device given
        up meanwhile. `race` may instead raise WorkerFailure: the candidate does not get the device at
        all (the evaluator's pruning). `priority` orders the candidates waiting for the device (lower first,
        read when the device is handed on: kt_cli.evaluate.device_turns)."""
        from kt_cli.evaluate.requests import split_params

        params, options = split_params(candidate.params, self.target.launch_options)
        self._take_device(clock, priority)
        try:
            bound = race()
            if bound is not None and bound.seconds is not None:
                with clock.phase("screen"):
                    screened = self.time(worker, source, candidate, shapes, seed, recipe_tolerance, bound, clock,
                                         screen=True)
                if screened["stats"]["raced_out"]:
                    verdict = screened.pop("verification")
                    return {**verdict, "scope": "raced out before verification: the timed problem's outputs "
                                                "after its first samples"}, screened
                if before_verify is not None:
                    self.lock.release()
                    try:
                        before_verify()
                    finally:
                        self._take_device(clock, lambda: FIRST)  # screened and can still win: it goes on
            with clock.phase("verify"):
                verification = self.verify(worker, source, params, options, shapes, candidate.dtype, seed,
                                           recipe_tolerance, clock)
            with clock.phase("time"):
                return verification, self.time(worker, source, candidate, shapes, seed, recipe_tolerance, bound,
                                               clock)
        finally:
            self.lock.release()

    def _take_device(self, clock: PhaseClock, priority: Callable[[], float]) -> None:
        waiting = time.perf_counter()
        self.lock.take(priority)
        clock.add("wait.device", time.perf_counter() - waiting)  # the candidates ahead of this one


def verification_runs(shapes: list) -> list:
    """The runs verify() asks for: every shape on fresh inputs, the first again on other inputs, then
    the first run once more on buffers of its own (a launch must be repeatable)."""
    runs = case_plan(shapes)
    return [*runs, runs[0]]


def device_workers(spec, timeout: float, device=None) -> tuple[WorkerPool, IsolatedVerifier]:
    """A candidate worker and a judge on `spec`'s device (`device`, a Device, when given), fresh."""
    from kt_cli import plugins

    vendor = plugins.vendor(spec.vendor)
    env = {**vendor.worker_env(), **(vendor.pin_env(device) if device is not None else {})}
    return WorkerPool(1, env, spare=("device", spec)), IsolatedVerifier(timeout, env, spec)
