"""Evaluate candidates in worker pools: cross-compile and check resources (CPU), verify under the
interpreter (CPU) or verify and time (the device), and turn what comes back into a TrialResult."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from typing import TYPE_CHECKING

from kt_cli.errors import BadInput
from kt_cli.types import Candidate, TargetSpec, TrialResult, point_key, shape_key
from kt_cli.evaluate.containment import collect_output, trial_output
from kt_cli.evaluate.early_exits import CompileDeadline, spill_breach
from kt_cli.evaluate.phases import PhaseClock
from kt_cli.evaluate.failure import RESTART_ON, WorkerFailure
from kt_cli.evaluate.isolated import IsolatedVerifier
from kt_cli.evaluate.interpreter_fixes import not_interpretable
from kt_cli.evaluate.cross_compile import WARM_ENV
from kt_cli.evaluate.pool import NICE_ENV, WorkerPool
from kt_cli.evaluate.pruning import MARGIN, Evidence, over_fastest
from kt_cli.evaluate.race import Bound, Race, ranked_seconds
from kt_cli.evaluate.tuned_shapes import tuned_problem_shapes

if TYPE_CHECKING:
    from kt_cli.recipe.parse import Recipe
    from kt_cli.search.plan import TargetPlan

RACE_MARGIN = 0.03  # a candidate races on while its interval reaches within 3% of the best one's; None: no racing
# Pruning (kt_cli/evaluate/pruning.py): a candidate the cost model says cannot come within PRUNE_MARGIN of
# its problem's fastest so far, allowing for the most the model over-estimated a measured candidate of that
# problem, is not sent to the device (kind `pruned`). 0: pruning off (benchmarks/run.py --no-prune).
PRUNE_MARGIN = MARGIN
# Where the vendor's model prunes, it also orders: the compiled candidates waiting for the device take it
# lowest estimate over their problem's fastest first (kt_cli.evaluate.device_turns); False: arrival order.
ORDER_BY_ESTIMATE = True
# Compiled candidates that may wait for the device beyond the compile pool's (Evaluator.in_flight), where the
# device takes them most promising first and pruning judges them against its best: with more of them in view the
# device times the promising ones first and prunes the rest against a better best. Replayed on every stored and
# held-out run, 8 waiting pruned 41.5% of matmul's and attention's candidates against 28.7% in arrival order;
# in real tunes on one H200 (results/s43/device_queue, two runs each) 28-39% and 37-48% against 25-29% and
# 30-41%, the bests and the walls alike. Elsewhere (static mode, vendors that do not prune) one.
DEVICE_QUEUE = 8


COMPILE_WORKER_BYTES = 1 << 30  # memory a compile worker may take (torch, Triton, a compile): a cap on the pool
# Past this, more compile workers only mean more trials in flight for one device: on a 32-core H200
# host (30 workers) the matmul recipe's trials waited 9.5 s each instead of 2.9 s, for no shorter run
# (46 and 58 s, against 41 s with 14 workers on a 16-core host; benchmarks/results/s13).
COMPILE_WORKERS_MAX = 16
# The compile pool fills the host's cores; its workers yield to kt's others (the device's worker, whose
# host thread launches what is timed and feeds the device, the judge, the search), which would otherwise
# wait for a core behind a compile.
COMPILE_NICENESS = 10


def compile_pool_size(processes_on_host: int = 1) -> int:
    """Compile workers of one kt process: since the device loads the pool's binaries from Triton's cache
    (kt_cli.evaluate.cross_compile), all compiling happens here, and a measured run keeps the device
    waiting on it when the pool is small (the matmul recipe on an H100 host with 8 workers: the pool
    4.3 of 8 busy, the device 56%; benchmarks/results/s11/wall_matmul.json). The host's cores less two
    (the CLI's search, the device's worker and judge) shared by the kt processes on the host (`kt tune
    --workers`), as many as its available memory holds at COMPILE_WORKER_BYTES each, at most
    COMPILE_WORKERS_MAX; at least 2, so that one slow compile (until its deadline) does not stop the
    others."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 2
    share = (cpus - 2) // max(1, processes_on_host)
    available = _available_memory_bytes()
    if available:
        share = min(share, available // COMPILE_WORKER_BYTES // max(1, processes_on_host))
    return max(2, min(COMPILE_WORKERS_MAX, share))


def _ahead_key(plan: TargetPlan, shape: dict, params: dict) -> tuple:
    return plan.spec.name, shape_key(shape), point_key(params)


def _available_memory_bytes() -> int:
    """MemAvailable from /proc/meminfo (Linux), 0 where it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


class Evaluator:
    """Runs candidates through worker pools: cross-compile (CPU), verify under the interpreter (CPU)
    or verify and time (the device). Several candidates are in flight at once, so the compile pool
    works ahead while the device measures."""

    def __init__(self, source, recipe: Recipe, verify_shapes: list, timeout: float, compile_workers: int = 0,
                 processes_on_host: int = 1):
        self.source, self.recipe, self.verify_shapes, self.timeout = source, recipe, verify_shapes, timeout
        self.compile_pool = WorkerPool(compile_workers or compile_pool_size(processes_on_host),
                                       {"TRITON_INTERPRET": "0", NICE_ENV: str(COMPILE_NICENESS),
                                        WARM_ENV: "compile"})
        self.compile_deadline = CompileDeadline(timeout, recipe.search.compile_timeout)
        self.interpreter = WorkerPool(1, {"TRITON_INTERPRET": "1"})  # the module's inspection, static mode's launches
        self.verifier = IsolatedVerifier(timeout, {"TRITON_INTERPRET": "1"})
        self.device_pools: dict[str, WorkerPool] = {}  # vendor name -> the worker that owns its device
        self.device_judges: dict[str, IsolatedVerifier] = {}  # vendor name -> the judge on its device
        self._verified: dict = {}
        self._refusals: dict = {}  # shape key of a stand-in -> why the module cannot make a run there ("": it can)
        self.race = Race()  # per (target, shape key): the best fully timed interval
        self.evidence: dict = {}  # (target, shape key) -> pruning.Evidence: what its measured candidates say
        self._device_queue = 1  # compiled candidates that may wait for a device (start_workers: DEVICE_QUEUE)
        self.counts: dict = {}  # shape key -> (flops, bytes moved, output bytes), from inspect_module
        self.peak_dtype = recipe.problem.dtype  # which peak the kernel's FLOPs run at, from inspect_module
        self.kernel_arguments: frozenset = frozenset()  # every @triton.jit argument name, from inspect_module
        self._readying: threading.Thread | None = None  # ready_devices(), until it is done
        self._ahead: dict = {}  # (target, shape key, params as JSON) -> InBackground: evaluate_ahead()
        self._ahead_lock = threading.Lock()

    @property
    def in_flight(self) -> int:
        """Candidates evaluated at once: enough to keep the compile pool busy ahead of the device, and, once
        start_workers has seen a measured target whose model orders and prunes, DEVICE_QUEUE that wait
        compiled for its device (taken most promising first: device_turns)."""
        return len(self.compile_pool.workers) + self._device_queue

    @property
    def device_busy_seconds(self) -> float:
        return sum(pool.busy_seconds for pool in self.device_pools.values())

    def device_pool(self, vendor_name: str, spec: TargetSpec | None = None) -> WorkerPool:
        """The worker of `vendor_name`'s device, started with the environment the vendor asks for; made with
        `spec` (the plan's target: start_workers), its start takes over `kt serve`'s spare where one is ready."""
        if vendor_name not in self.device_pools:
            from kt_cli import plugins

            self.device_pools[vendor_name] = WorkerPool(1, plugins.vendor(vendor_name).worker_env(),
                                                        spare=("device", spec) if spec is not None else None)
        return self.device_pools[vendor_name]

    def device_judge(self, spec: TargetSpec) -> IsolatedVerifier:
        """The judge worker on `spec`'s device: it holds every problem's inputs and reference outputs there."""
        if spec.vendor not in self.device_judges:
            from kt_cli import plugins

            self.device_judges[spec.vendor] = IsolatedVerifier(self.timeout, plugins.vendor(spec.vendor).worker_env(),
                                                               spec)
        return self.device_judges[spec.vendor]

    def close(self) -> None:
        if self._readying is not None:  # its calls end within the timeout; their pipes are not closed under them
            self._readying.join(self.timeout)
        for pool in (self.compile_pool, self.interpreter, *self.device_pools.values()):
            pool.stop()
        for judge in (self.verifier, *self.device_judges.values()):
            judge.stop()

    def start_workers(self, plans: list) -> None:
        """Start the processes `plans` will need now, side by side and in the background: the compile
        pool, and per measured target its device worker and judge (per estimated one the interpreter's
        judge). Started one at a time on first use, they held back the first trials by seconds each. The
        device's come first: the fork server forks one worker at a time, and readying the device's worker
        and judge (about a second) is what the first candidate waits for, where the first compile takes a
        fraction of that (forked after 16 compile workers from a resident server, the device's worker started
        0.17 s later on an H200 host: results/s37/call3)."""
        for plan in plans:
            if plan.mode == "measured":
                self.device_pool(plan.spec.vendor, plan.spec).start_in_background()
                self.device_judge(plan.spec).judge_pool.start_in_background()
                if ORDER_BY_ESTIMATE and PRUNE_MARGIN and self._prunes(plan.spec):
                    self._device_queue = DEVICE_QUEUE
            else:
                self.verifier.judge_pool.start_in_background()
        self.compile_pool.start_in_background()

    def ready_devices(self, problems: list) -> None:
        """Ready the device's worker and judge of every measured (target plan, shape) of `problems`, in
        a thread from now (IsolatedVerifier.ready): what the run's first candidates would wait for."""
        measured = [(plan, shape) for plan, shape in problems if plan.mode == "measured"]
        if measured:
            self._readying = threading.Thread(target=self._ready, args=(measured,), daemon=True)
            self._readying.start()

    def _ready(self, measured: list) -> None:
        for plan, shape in measured:
            self.device_judge(plan.spec).ready(self.device_pool(plan.spec.vendor), self.source, self._device_shapes(shape),
                                               self.recipe.problem.dtype, self.recipe.search.seed)

    def _device_shapes(self, shape: dict) -> list:
        """The shapes a candidate is verified on in measured mode: the problem itself and a small odd shape."""
        return [shape] + list(self.verify_shapes[:1])

    def use(self, source) -> None:
        """Evaluate another kernel module; a generator that searches over modules calls this, then
        inspect_module(), once per module. The processes that run a module's code (interpreter and
        device workers) start afresh, so nothing one module did (a patch of torch or of kt) survives
        into another's verdict; the compile pool only compiles and the judge never loads candidates."""
        for pool in (self.interpreter, *self.device_pools.values()):
            pool.stop()
        self.source, self._verified, self.counts, self._refusals = source, {}, {}, {}
        self.verify_shapes = list(self.recipe.problem.verify_shapes)
        with self._ahead_lock:
            self._ahead = {}  # another module's points: never its results

    def inspect_module(self, shapes: list) -> dict:
        try:
            info = self.interpreter.call("inspect_module", {"source": self.source, "dtype": self.recipe.problem.dtype,
                                                   "shapes": shapes, "verify_shapes": self.verify_shapes},
                                         self.timeout)
        except WorkerFailure as exc:
            raise BadInput(exc.message if exc.kind == "bad_input" else
                           f"{self.source.path}: checking the kernel module failed: {exc.kind}: {exc.message}") from None
        self.verify_shapes = info["verify_shapes"]
        self.counts = {shape_key(s): counts for s, *counts in zip(shapes, info["flops"], info["bytes"],
                                                                  info["output_bytes"])}
        self.peak_dtype = info.get("peak_dtype") or self.recipe.problem.dtype
        self.kernel_arguments = frozenset(info.get("kernel_arguments", ()))
        return info

    def _module_accepts(self, stand_in: dict) -> bool:
        """Whether the module makes a verification run at this stand-in for the tuned problem (asked of
        the judge once per shape; kt_cli.evaluate.tuned_shapes)."""
        key = shape_key(stand_in)
        if key not in self._refusals:
            with self.verifier.lock:
                self._refusals[key] = self.verifier.refuses(self.source, stand_in, self.recipe.problem.dtype,
                                                            self.recipe.search.seed)
        return not self._refusals[key]

    def knobs_read(self, params: dict) -> dict:
        """What the module's launch makes of these kernel knobs at the first verification shape, on meta
        tensors in the interpreter worker (kt_cli.kernel.knobs_read); {} when the check itself fails."""
        try:
            return self.interpreter.call("knobs_read", {"source": self.source, "shape": self.verify_shapes[0],
                                                        "dtype": self.recipe.problem.dtype, "params": params},
                                         self.timeout)
        except WorkerFailure:
            return {}

    def evaluate_ahead(self, plan: TargetPlan, shape: dict, params: dict) -> None:
        """Begin evaluating a point its study will ask for first, in a thread from now: evaluate() of that
        point then takes this result (kt_cli.search.studies: a new study's first seed, while the studies'
        storage opens and they enqueue their seeds: 0.8-1.2 s of a command-line run on an H200 host)."""
        from kt_cli.background import InBackground

        with self._ahead_lock:
            self._ahead[_ahead_key(plan, shape, params)] = InBackground(self._evaluate, plan, shape, params)

    def evaluate(self, plan: TargetPlan, shape: dict, params: dict) -> TrialResult:
        with self._ahead_lock:
            ahead = self._ahead.pop(_ahead_key(plan, shape, params), None)
        return ahead.result() if ahead is not None else self._evaluate(plan, shape, params)

    def _evaluate(self, plan: TargetPlan, shape: dict, params: dict) -> TrialResult:
        candidate = Candidate(self.source.path, params, plan.spec.name, shape, self.recipe.problem.dtype, plan.mode,
                              tuple(self.verify_shapes))
        started, clock = time.perf_counter(), PhaseClock()
        base = dict(params=params, target=plan.spec.name, shape=shape, mode=plan.mode)
        with collect_output() as printed:
            try:
                if plan.mode == "estimated":
                    out = self._estimate(candidate, plan.spec, clock)
                else:
                    out = self._time_on_device(candidate, plan, clock)
            except WorkerFailure as exc:
                if exc.kind == "bad_input":
                    exc = WorkerFailure("crash", exc.message)
                return TrialResult(exc.kind, message=exc.message, seconds=time.perf_counter() - started,
                                   resources=getattr(exc, "resources", {}), output=trial_output(printed),
                                   phase_seconds=dict(clock.seconds), **base)
        result = self._with_rates(TrialResult("ok", seconds=time.perf_counter() - started, output=trial_output(printed),
                                              phase_seconds=dict(clock.seconds), **base, **out), plan)
        self._learn(result)
        return result

    def observe(self, plan: TargetPlan, result: TrialResult) -> None:
        """A result another process sharing the study measured: on a device of the same model as this
        process's, its interval races and its estimate prunes this process's candidates too (each
        worker of `kt tune --workers N` would otherwise time fully what another already beat)."""
        if plan.device is not None and device_model(result) == plan.device.name:
            self._learn(result)

    def _learn(self, result: TrialResult) -> None:
        """Learn from a candidate the device measured, raced out at its screen or timed fully (the
        candidates benchmarks/rank.py replays the pruning rule with: counting only the fully timed ones,
        as until 2026-11-27, left pruning off while screens raced candidates out): its estimate against its
        time, and, where it is the new best fully timed interval (its upper end the race's bound), the
        pruning's reference."""
        if result.failure_kind != "ok" or result.mode != "measured":
            return
        key = (result.target, shape_key(result.shape))
        seconds, _, high = self.race.interval(key, result.stats)
        fastest = not result.stats.get("raced_out") and self.race.timed(key, high)
        self._evidence(key).add(result.stats.get("estimate", {}), seconds, fastest)

    def _evidence(self, key: tuple) -> Evidence:
        return self.evidence.setdefault(key, Evidence())

    @staticmethod
    def _prunes(spec: TargetSpec) -> bool:
        from kt_cli import plugins

        return plugins.vendor(spec.vendor).model_prunes(spec)

    def _predicted_far_slower(self, key: tuple, estimate: dict) -> str:
        """Why the cost model says this candidate cannot win (kt_cli.evaluate.pruning), or "" to time it."""
        evidence = self._evidence(key)
        over = evidence.pruned_at(estimate, PRUNE_MARGIN)
        if over is None:
            return ""
        return (f"the cost model estimates {estimate['seconds']:.3g} s; its estimates of this problem's measured "
                f"candidates ran up to {evidence.overestimate:.2f}x their times, so at best {over:.2f}x the fastest "
                f"measured so far (pruned above {evidence.margin(PRUNE_MARGIN):g}x)")

    def _device_priority(self, key: tuple, estimate: dict, prunes: bool):
        """Where this candidate stands among those waiting for the device (kt_cli.evaluate.device_turns),
        read when the device is handed on: its estimate over its problem's fastest so far where the vendor's
        model prunes (and so orders), else 0 for all (arrival order)."""
        if not (prunes and ORDER_BY_ESTIMATE):
            return lambda: 0.0
        evidence = self._evidence(key)
        return lambda: over_fastest(estimate.get("seconds"), evidence.fastest_estimate)

    def _with_rates(self, result: TrialResult, plan: TargetPlan) -> TrialResult:
        """Add FLOP/s, bytes/s and the fraction of peak. A measured time the hardware cannot reach
        (zero, below the time to write the outputs at peak bandwidth, or above 100% of a declared
        peak) is a measurement error or a kernel that skips work: `wrong`, never a win."""
        flops, moved, written = self.counts.get(shape_key(result.shape), (0.0, 0.0, 0.0))
        peaks = plan.peaks
        if not result.value > 0:
            return _impossible(result, f"timed at {result.value!r} s: a zero or negative time is a measurement "
                                       "error or a kernel that did no work")
        rates = {"flops_per_s": flops / result.value, "bytes_per_s": moved / result.value}
        rates["fraction_of_peak"] = peak_fraction(rates, peaks, self.peak_dtype)
        stats = {**result.stats, **rates}
        if plan.mode != "measured":
            return dataclasses.replace(result, stats=stats)
        floor = written / peaks["dram_bytes_per_s"] if written and peaks.get("dram_bytes_per_s") else 0.0
        if result.value < floor:
            return _impossible(result, f"faster than the hardware allows: {result.value:.3g} s, but writing its "
                                       f"{written:.0f} output bytes at peak bandwidth takes {floor:.3g} s", stats)
        above = above_peak(rates["fraction_of_peak"])
        if above:
            return _impossible(result, above, stats)
        return dataclasses.replace(result, stats=stats)

    def compile(self, candidate: Candidate, spec: TargetSpec, clock: PhaseClock, verify_shapes: tuple = ()) -> dict:
        """Cross-compile in the CPU pool under the compile deadline (the launches at `verify_shapes`
        too); a candidate that spills more than the recipe allows ends here as `spills`, its resources
        recorded."""
        written = self.counts.get(shape_key(candidate.shape), (None, None, None))[2]
        compiled = self._in_compile_pool("compile", {"source": self.source, "candidate": candidate, "target": spec,
                                                     "verify_shapes": verify_shapes, "written_bytes": written,
                                                     "max_spill_bytes": self.recipe.search.max_spill_bytes}, clock)
        self.compile_deadline.record(compiled["compile_seconds"])
        breach = spill_breach(compiled["resources"], self.recipe.search.max_spill_bytes)
        if breach:
            exc = WorkerFailure("spills", breach)
            exc.resources = compiled["resources"]
            raise exc
        return compiled

    def compile_shapes(self, candidate: Candidate, spec: TargetSpec, clock: PhaseClock, shapes: tuple) -> None:
        """Cross-compile the candidate's launches at `shapes` alone, in the CPU pool under the compile
        deadline (a screened candidate's verification shapes, once its screen said it can still win)."""
        self._in_compile_pool("compile_shapes", {"source": self.source, "candidate": candidate, "target": spec,
                                                 "shapes": shapes}, clock)

    def _in_compile_pool(self, op: str, payload: dict, clock: PhaseClock) -> dict:
        deadline = self.compile_deadline.seconds()
        called, busy = time.perf_counter(), clock.seconds.get("compile", 0.0)
        try:
            return self.compile_pool.call(op, payload, deadline, restart_on=RESTART_ON, limit=self.timeout,
                                          busy=lambda seconds: clock.add("compile", seconds))
        except WorkerFailure as exc:
            raise self.compile_deadline.verdict(exc, deadline) from None
        finally:  # the call's wall beyond the compile itself: waiting for a free compile worker, the transfers
            clock.add("wait.compile", time.perf_counter() - called - (clock.seconds.get("compile", 0.0) - busy))

    def _estimate(self, candidate: Candidate, spec: TargetSpec, clock: PhaseClock) -> dict:
        compiled = self.compile(candidate, spec, clock)
        from kt_cli.evaluate.requests import split_params

        kernel_params, options = split_params(candidate.params, spec.launch_options)
        # A launch option that is also a kernel argument (a kernel's own `num_stages`) changes what the
        # kernel computes, so it is verified with it; other options only change how it is compiled.
        bound = {k: v for k, v in options.items() if k in self.kernel_arguments}
        # Verified on the small shapes and on stand-ins for the tuned problem that keep its relation to
        # the tile sizes (kt_cli.evaluate.tuned_shapes): right only at small sizes is `wrong` here too.
        stand_ins, refused = tuned_problem_shapes(candidate.shape, self.verify_shapes, kernel_params,
                                                  self._module_accepts)
        shapes = self.verify_shapes + stand_ins
        if compiled.get("uninterpretable"):  # cross-compiled (resources read), but never `ok` unverified
            exc = WorkerFailure("interpreter", not_interpretable(compiled["uninterpretable"]))
            exc.resources = compiled["resources"]
            raise exc
        key = (tuple(sorted({**kernel_params, **bound}.items())), tuple(shape_key(s) for s in shapes))
        if key not in self._verified:
            try:
                with self.verifier.lock, clock.phase("verify"):
                    self._verified[key] = self.verifier.verify(self.interpreter, self.source, kernel_params, bound,
                                                               shapes, candidate.dtype, self.recipe.search.seed,
                                                               self.recipe.problem.tolerance, clock)
            except WorkerFailure as exc:
                exc.resources = compiled["resources"]
                self._verified[key] = exc
        verified = self._verified[key]
        if isinstance(verified, WorkerFailure):
            raise verified
        if refused:
            verified = {**verified, "stand_ins_refused": [{"shape": r, "why": self._refusals[shape_key(r)]}
                                                          for r in refused]}
        estimate = compiled["estimate"]
        return {"value": estimate["seconds"], "stats": {"estimate": estimate, "programs": compiled["programs"]},
                "resources": compiled["resources"], "verification": verified}

    def _time_on_device(self, candidate: Candidate, plan: TargetPlan, clock: PhaseClock) -> dict:
        # Cross-compiling first (in the CPU pool, ahead of the device) rejects over-limit candidates before
        # they reach the GPU and records their registers, shared memory and spills.
        shapes = self._device_shapes(candidate.shape)
        key = (plan.spec.name, shape_key(candidate.shape))
        # A candidate that will be screened (a best to race against exists: the bound only tightens) has
        # the shapes it is verified on besides the problem compiled only once its screen says it can
        # still win, with the device free for the others meanwhile: most candidates end before
        # verification (raced out, pruned, spilling or refused: 83 of 108 on the matmul recipe on an
        # H100, s20/scale_cold), and their second compile was a third of the pool's work. A problem's
        # first candidates (no bound yet) are compiled with them and timed fully: racing them against
        # each other's screens instead (the eleventh session) timed more of them fully and cut four
        # workers' rate by a fifth on a 4x H100 host (docs/performance.md, thirteenth session).
        screened = self.race.bound(key, RACE_MARGIN).seconds is not None
        compiled = self.compile(candidate, plan.spec, clock, () if screened else tuple(shapes[1:]))
        prunes, estimate = self._prunes(plan.spec), compiled.get("estimate", {})
        # Read once the device is this candidate's, after the candidates timed before it (those that took
        # the device while it waited included): pruning, where the cost model estimates it far slower
        # than the best so far (it never reaches the device), then racing: a candidate whose first
        # samples lie wholly above the best one's interval (plus RACE_MARGIN) is raced out before it is
        # verified; only one that can still win gets the full protocol (IsolatedVerifier.verify_and_time),
        # and its sampling stops as soon as it cannot. A candidate already pruned does not wait for the
        # device first: taken most promising first, it would wait behind every other.

        def prune() -> None:
            pruned = self._predicted_far_slower(key, estimate) if prunes else ""
            if pruned:
                raise WorkerFailure("pruned", pruned)

        def race() -> Bound:
            prune()
            return self.race.bound(key, RACE_MARGIN)

        try:
            prune()
            verification, out = self.device_judge(plan.spec).verify_and_time(
                self.device_pool(plan.spec.vendor), self.source, candidate, shapes, self.recipe.search.seed, clock,
                self.recipe.problem.tolerance, race,
                (lambda: self.compile_shapes(candidate, plan.spec, clock, tuple(shapes[1:]))) if screened else None,
                self._device_priority(key, estimate, prunes))
        except WorkerFailure as exc:
            exc.resources = compiled["resources"]
            raise
        stats, base = out["stats"], out["baseline"]  # no baseline for a candidate raced out at its screen
        speedup = base["median"] / stats["median"] if base and stats["median"] > 0 else None
        # ranked by its ratio to the baseline timed beside it, in seconds at the problem's reference
        # (kt_cli.evaluate.race); its own samples' figures stay as they were (median, interval)
        stats = self.race.ranked(key, out)
        return {"value": ranked_seconds(stats), "resources": compiled["resources"],
                "stats": {**stats, "timer": out["timer"], "speedup": speedup,
                          "device": plan.device.name,  # what observe() matches in other processes
                          "estimate": compiled.get("estimate", {}),
                          "features": static_features(compiled),
                          "throttled": throttled(stats.get("device_state", {}))},
                "verification": verification}


def static_features(compiled: dict) -> dict:
    """What the cost model read from the binary the device then ran (its resources, programs, launches,
    instruction mix and the kernel's work): kept with the measured time, so that benchmarks/rank_dataset.py
    holds the model against the features of the very binary timed. Cross-compiled again later, on another
    host's Triton, a point can compile otherwise (an H200's Triton 3.6 gave 80 registers a thread where 3.9
    gives 63 for a layernorm config, three programs a unit instead of four)."""
    return {k: compiled[k] for k in ("resources", "programs", "launches", "instructions", "work") if k in compiled}


def device_model(result: TrialResult) -> str | None:
    """The device model a measured result was timed on: its stats' `device`, or, for results stored
    before kt kept it there, the name in its worker record ("NAME #INDEX", kt_cli.search.scale.whoami).
    Until 2026-11-26 observe() read only the first, which no result carried: a `kt tune --workers N`
    worker, or a resumed run, never raced its candidates against another process's best."""
    if result.stats.get("device"):
        return result.stats["device"]
    where = (result.worker or {}).get("device") or ""
    return where.rsplit(" #", 1)[0] if " #" in where else None


def peak_fraction(rates: dict, peaks: dict, peak_dtype: str) -> float | None:
    """The larger of a measured time's DRAM rate over the device's bandwidth and its FLOP rate over the
    peak of `peak_dtype` (None where neither rate or peak is known)."""
    fractions = []
    if rates.get("bytes_per_s") and peaks.get("dram_bytes_per_s"):
        fractions.append(rates["bytes_per_s"] / peaks["dram_bytes_per_s"])
    if rates.get("flops_per_s") and peaks.get(peak_dtype):
        fractions.append(rates["flops_per_s"] / peaks[peak_dtype])
    return max(fractions) if fractions else None


def above_peak(fraction: float | None) -> str:
    """Why a measured time is impossible because its rate is past 100% of a declared peak, or ""."""
    if fraction and fraction > 1.0:
        return f"measured {fraction:.0%} of the device's peak: a measurement error, not a win"
    return ""


def throttled(device_state: dict) -> bool:
    """The device slowed itself down during a measurement: it said so, or its clock fell by > 10%."""
    before, after = device_state.get("before") or {}, device_state.get("after") or {}
    if before.get("throttled") or after.get("throttled"):
        return True
    clocks = before.get("sm_clock_mhz"), after.get("sm_clock_mhz")
    return bool(all(clocks) and clocks[1] < 0.9 * clocks[0])


def _impossible(result: TrialResult, why: str, stats: dict | None = None) -> TrialResult:
    return dataclasses.replace(result, failure_kind="wrong", value=None, message=why,
                               stats=result.stats if stats is None else stats)
