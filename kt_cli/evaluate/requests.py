"""What a worker process does with one request. Imported only inside workers: it runs the kernel's
own code (and, for the llm generator, model-written code), never in the CLI process."""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

from kt_cli.kernel import (Kernel, KernelModuleError, NotInterpretable, autotune_space, interpretable,
                           record_launches)
from kt_cli.types import Resources, shape_key
from kt_cli.evaluate.failure import WorkerFailure
from kt_cli.evaluate.early_exits import spill_breach
from kt_cli.evaluate.launch_watch import PRISTINE, LaunchWatch, check_pristine, every_watched_name
from kt_cli.evaluate.race import Bound
from kt_cli.evaluate.timing import Reused

def prepare_worker() -> None:
    """Called once when a worker process starts, before it runs any candidate code. A compile worker
    (WARM_ENV set to "compile") also does what its first compile would do once (cross_compile.warm_up)."""
    import os

    from kt_cli.evaluate.cross_compile import WARM_ENV, warm_up

    PRISTINE.take(every_watched_name())
    if os.environ.get(WARM_ENV) == "compile":
        with contextlib.suppress(Exception):  # the first compile does it, and says what is wrong
            warm_up()


def detect_devices() -> list:
    """Every vendor's devices present (kt_cli.evaluate.detection: kt's own process does not import torch)."""
    from kt_cli import plugins

    return plugins.devices()


_kernels: dict = {}
_detected: dict = {}  # vendor name -> its devices, as this worker found them
_methods: dict = {}  # (kernel file, problem, dtype) -> the timing method chosen for that problem
_timers: dict = {}  # (vendor name, device index) -> the timer of that device in this worker


def dispatch(op: str, payload: dict):
    """Run one request. With KT_PROFILE_DIR and KT_PROFILE_REQUESTS=1 set (a diagnostic:
    benchmarks/experiments/wall_profile.py), it runs under cProfile and leaves OP-PID-N.prof there."""
    import os

    where = os.environ.get("KT_PROFILE_DIR")
    if not where or os.environ.get("KT_PROFILE_REQUESTS") != "1":
        return _handler(op)(**payload)
    import cProfile

    profiler = cProfile.Profile()
    try:
        return profiler.runcall(_handler(op), **payload)
    finally:
        _profiled[op] = _profiled.get(op, 0) + 1
        profiler.dump_stats(os.path.join(where, f"{op}-{os.getpid()}-{_profiled[op]}.prof"))


_profiled: dict = {}


def _handler(op: str):
    return {"inspect_module": inspect_module, "compile": compile_candidate,
            "compile_shapes": compile_shapes, "knobs_read": read_knobs,
            "hold_cases": hold_cases, "judge_cases": judge_cases, "launch_held": launch_held,
            "time_held": time_held, "ceilings": ceilings, "calibrate": calibrate, "recheck": recheck,
            "interpreter_defects": interpreter_defects, "launch_arguments": launch_arguments,
            "detect_devices": detect_devices, "ready_judge": ready_judge, "ready_device": ready_device}[op]


def _kernel(source) -> Kernel:
    key = (source.path, source.sha256())
    if key not in _kernels:
        try:
            kernel = Kernel.load(source)
        except KernelModuleError as exc:
            raise WorkerFailure("bad_input", str(exc)) from None
        check_pristine(f"importing {source.path}")  # (kept only once it passed: a rejected import stays rejected)
        _kernels[key] = kernel
    return _kernels[key]


def interpreter_defects() -> list[str]:
    """The known interpreter defects this worker's interpreter still has (interpreter_fixes.DEFECTS)."""
    from kt_cli.evaluate.interpreter_fixes import defects_left

    return defects_left()


def split_params(params: dict, launch_options: tuple) -> tuple[dict, dict]:
    """Kernel parameters (passed to the launch function) and launch options (added to each launch)."""
    kernel = {k: v for k, v in params.items() if k not in launch_options}
    options = {k: v for k, v in params.items() if k in launch_options}
    return kernel, options


def inspect_module(source, dtype: str, shapes: list, verify_shapes: list) -> dict:
    """Check that the module imports and its reference runs; return its defaults."""
    from kt_cli.evaluate.interpreter_fixes import apply as fix_interpreter
    from kt_cli.evaluate.verify import expected_outputs
    from kt_cli.kernel import Tensors

    fix_interpreter()  # without a reference, the reference configuration runs here, under the interpreter

    kernel = _kernel(source)
    checks = list(verify_shapes or kernel.attr("VERIFY_SHAPES", []) or []) or [derived_verify_shape(shapes[0])]
    for shape in checks[:1]:
        try:
            inputs = kernel.make_inputs(shape, dtype, Tensors("cpu", 0))
        except Exception as exc:
            raise WorkerFailure("bad_input", f"{source.path}: {source.fn_name('make_inputs')}({shape}) raised "
                                             f"{type(exc).__name__}: {exc}") from None
        try:
            outputs = kernel.outputs(inputs)
        except KernelModuleError as exc:
            raise WorkerFailure("bad_input", str(exc)) from None
        try:
            expected_outputs(kernel, inputs, outputs)
        except KernelModuleError as exc:
            raise WorkerFailure("bad_input", str(exc)) from None
        except Exception as exc:
            what = (f"the reference configuration {kernel.reference_point()}" if kernel.differential
                    else f"reference function {source.fn_name('reference')!r}")
            raise WorkerFailure("bad_input", f"{source.path}: {what} raised {type(exc).__name__}: {exc}") from None
    tuned_space, tuned_seeds = autotune_space(kernel.module)  # an @triton.autotune's configs, where it has one
    return {
        "space": dict(kernel.attr("SPACE", None) or tuned_space),
        "constraints": list(kernel.attr("CONSTRAINTS", []) or []),
        "verify_shapes": checks,
        "flops": [kernel.count("flops", s, dtype) for s in shapes],
        "bytes": [kernel.count("bytes_moved", s, dtype) for s in shapes],
        "output_bytes": [output_bytes(kernel, s, dtype) for s in shapes],
        "peak_dtype": kernel.peak_dtype(dtype),
        "seeds": [dict(seed) for seed in kernel.attr("SEEDS", None) or tuned_seeds],
        "kernel_arguments": sorted(kernel.jit_arguments),
    }


def launch_arguments(source, shape: dict, dtype: str, params: dict, options: dict) -> list[dict]:
    """What each kernel launch of `params` at `shape` gets (recorded on meta tensors, nothing runs):
    [{"kernel": name, "arguments": {argument: value} for those named in params, "computed": [constexpr
    arguments the launch sets itself], "options": {...}, "scalars": {every number argument: value},
    "grid": [...], "declared": the module's HEURISTICS and GRID for kt export}]."""
    from kt_cli.kernel import kernel_objects

    kernel = _kernel(source)
    by_jit = {id(k.jit): k for k in kernel_objects(kernel.module).values()}
    out = []
    for launch in record_launches(kernel, shape, dtype, params, options):
        k = by_jit.get(id(launch.fn))
        derived = {name for values in (k.heuristics if k else ()) for name in values}
        constexprs = [launch.fn.arg_names[i] for i in launch.fn.constexprs]
        plain = (int, float, str, bool)
        out.append({"kernel": launch.fn.__name__,
                    "arguments": {n: launch.args[n] for n in params if n in launch.args and n not in launch.options},
                    # constexpr arguments the launch function sets itself (per problem)
                    "computed": sorted(n for n in constexprs if n in launch.args and n not in params
                                       and n not in derived and n not in launch.options),
                    "options": {n: v for n, v in launch.options.items() if isinstance(v, plain)},
                    "scalars": {n: v for n, v in launch.args.items() if isinstance(v, plain) and n not in derived},
                    "grid": [int(g) for g in launch.grid],
                    "declared": {"heuristics": _plain(kernel.attr("HEURISTICS")), "grid": _plain(kernel.attr("GRID"))}})
    return out


def _plain(value):
    """A module's declaration as JSON carries it; one of a wrong type as a list, for export to refuse."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return dict(value)
    return [repr(value)]


VERIFY_SIZE_MAX = 128  # a derived verification shape's sizes: small enough for the interpreter


def derived_verify_shape(shape: dict) -> dict:
    """A small shape of the problem's kind for a module that names none: each size halved while it is
    above VERIFY_SIZE_MAX and even, so what it divides by stays (4096 -> 128, 1000 -> 125)."""
    small = {}
    for name, size in shape.items():
        while size > VERIFY_SIZE_MAX and size % 2 == 0:
            size //= 2
        small[name] = size
    return small


def read_knobs(source, shape: dict, dtype: str, params: dict) -> dict:
    """Which knobs the module's launch reads at `params` (kt_cli.kernel.knobs_read)."""
    from kt_cli.kernel import knobs_read

    return knobs_read(_kernel(source), shape, dtype, params)


def output_bytes(kernel, shape: dict, dtype: str) -> float:
    """Bytes of the outputs a launch must write for `shape` (from meta tensors: no data made)."""
    from kt_cli.kernel import Tensors

    inputs = kernel.make_inputs(shape, dtype, Tensors("meta", 0))
    return float(sum(inputs[n].numel() * inputs[n].element_size() for n in kernel.outputs(inputs)))


def _written_bytes(kernel, shape: dict, dtype: str) -> float:
    """The outputs' bytes, or 0 (not known) for a module whose outputs only running its reference
    configuration tells (this process has not run it)."""
    try:
        return output_bytes(kernel, shape, dtype)
    except KernelModuleError:
        return 0.0


def compile_candidate(source, candidate, target, verify_shapes: tuple = (),
                      written_bytes: float | None = None, max_spill_bytes: int | None = None) -> dict:
    """Cross-compile every launch of the candidate for `target`, read its resources and, in static
    mode, estimate its time; then the launches at `verify_shapes` (measured mode: the shapes the
    device verifies on besides the problem), so that the device's JIT finds every binary in Triton's
    cache instead of compiling one on the device's critical path. `written_bytes`: the problem's
    output bytes, as inspect_module found them (None: found here where they can be). A candidate whose
    problem launch spills more than `max_spill_bytes` (the evaluator ends it as `spills`) is answered
    with its resources at once: its other shapes (as slow to build as the first, where ptxas fights
    for registers) and its instruction mix are not worth reading.
    Raises WorkerFailure(invalid/compile_error)."""
    from kt_cli import plugins
    from kt_cli.evaluate import estimate as costmodel

    vendor = plugins.vendor(target.vendor)
    _refuse_unrunnable(vendor, candidate.params, target)
    kernel = _kernel(source)
    params, options = split_params(candidate.params, target.launch_options)
    started = time.perf_counter()
    try:
        launches = record_launches(kernel, candidate.shape, candidate.dtype, params, options)
    except Exception as exc:
        raise WorkerFailure("invalid", f"launch function rejected the params: {type(exc).__name__}: {exc}") from None
    check_pristine("the launch")  # recording ran the candidate's launch code in this (shared) worker
    if not launches:
        raise WorkerFailure("invalid", "launch function launched no kernel")
    main = kernel.main_launch(launches)  # by the kernel protocol the first, unless the module names it a setup launch
    resources, main_compiled, spilled = _compile_launches(vendor, launches, main, target)
    if max_spill_bytes is not None and spill_breach(spilled.to_json(), max_spill_bytes):
        return {"resources": spilled.to_json(), "programs": main.programs, "launches": len(launches),
                "compile_seconds": time.perf_counter() - started}
    read_mix = candidate.mode == "estimated" or vendor.model_prunes(target)  # read by the cost model
    with ThreadPoolExecutor(max_workers=1) as reader:  # the mix (a disassembler's run) beside the next compiles
        mix = reader.submit(vendor.instruction_mix, main_compiled, target) if read_mix else None
        for shape in verify_shapes:
            _compile_ahead(vendor, kernel, shape, candidate.dtype, params, options, target)
        instructions = mix.result() if mix else {}
    result = {"resources": resources.to_json(), "programs": main.programs, "launches": len(launches),
              "instructions": instructions, "compile_seconds": time.perf_counter() - started,
              # kernels of the tuned problem that Triton's CPU interpreter cannot run (static mode)
              "uninterpretable": sorted({launch.fn.__name__ for launch in launches if not interpretable(launch.fn)})}
    # static mode ranks by the estimate; measured mode prunes candidates it predicts far slower
    work = costmodel.Work(kernel.count("flops", candidate.shape, candidate.dtype),
                          kernel.count("bytes_moved", candidate.shape, candidate.dtype),
                          kernel.traffic(candidate.shape, candidate.dtype, candidate.params),
                          kernel.work_items(candidate.shape, candidate.dtype, candidate.params),
                          _written_bytes(kernel, candidate.shape, candidate.dtype) if written_bytes is None
                          else written_bytes,
                          kernel.grid_syncs(candidate.shape, candidate.dtype, candidate.params),
                          kernel.lockstep_reads(candidate.shape, candidate.dtype, candidate.params),
                          kernel.pipeline_stages(candidate.shape, candidate.dtype, candidate.params),
                          kernel.load_warps(candidate.shape, candidate.dtype, candidate.params))
    result["work"] = asdict(work)
    result["estimate"] = costmodel.estimate_seconds(work, candidate.dtype, target.peaks, target.properties,
                                                    resources, main.programs, len(launches), instructions)
    return result


def _compile_launches(vendor, launches: list, main, target) -> tuple[Resources, object, Resources]:
    """Compile every launch for `target` (each must fit its limits): the main launch's resources and
    binary, and the resources of the launch that spills the most (the main one where none spills more).
    Raises WorkerFailure(invalid/compile_error)."""
    others = []
    for launch in launches:
        try:
            compiled = vendor.compile(launch, target)
        except Exception as exc:
            raise WorkerFailure("compile_error", f"{launch.fn.__name__}: {type(exc).__name__}: {_error_lines(exc)}") from None
        resources = vendor.resources(compiled, target)
        problem = limit_breach(resources, target)
        if problem:
            raise WorkerFailure("invalid", f"{launch.fn.__name__}: {problem}")
        if launch is main:
            main_resources, main_compiled = resources, compiled
        else:
            others.append(resources)
    spilled = max([main_resources, *others], key=lambda r: r.spill_bytes)  # the main one on a tie (first)
    return main_resources, main_compiled, spilled


def compile_shapes(source, candidate, target, shapes: tuple) -> dict:
    """Compile the candidate's launches at `shapes` only (the shapes the device verifies on besides the
    problem, for a candidate whose screen said it can still win: compile_candidate left them out).
    Raises WorkerFailure(compile_error)."""
    from kt_cli import plugins

    vendor = plugins.vendor(target.vendor)
    params, options = split_params(candidate.params, target.launch_options)
    started = time.perf_counter()
    for shape in shapes:
        _compile_ahead(vendor, _kernel(source), shape, candidate.dtype, params, options, target)
    return {"compile_seconds": time.perf_counter() - started}


def _compile_ahead(vendor, kernel: Kernel, shape: dict, dtype: str, params: dict, options: dict, target) -> None:
    """Compile the launches of one more shape (other sizes can specialise the kernel differently)."""
    try:
        launches = record_launches(kernel, shape, dtype, params, options)
    except Exception:  # noqa: BLE001 - the device's verification at this shape says what is wrong
        return
    check_pristine("the launch")
    for launch in launches:
        try:
            vendor.compile(launch, target)
        except Exception as exc:
            raise WorkerFailure("compile_error", f"{launch.fn.__name__} at {shape_key(shape)}: "
                                                 f"{type(exc).__name__}: {_error_lines(exc)}") from None


def _refuse_unrunnable(vendor, params: dict, target) -> None:
    """A point the vendor says cannot run on this target is invalid before anything is compiled."""
    problem = vendor.why_unrunnable(dict(params), target)
    if problem:
        raise WorkerFailure("invalid", problem)


def limit_breach(resources: Resources, target) -> str:
    """Why a compiled kernel cannot run on `target`, or "" when it fits."""
    smem = target.properties.get("smem_bytes")
    if smem and resources.shared_bytes > smem:
        return f"needs {resources.shared_bytes} B of shared memory, {target.name} has {int(smem)}"
    if resources.programs_per_unit < 1:
        return f"does not fit on one unit of {target.name} ({resources.limiter or 'resources'})"
    return ""


_HELD = None  # the judge worker's HeldCases


def _judge_device(target) -> tuple[str, object]:
    """(torch device, free-bytes function) where the judge makes its cases: the vendor's device of
    `target`, or the CPU (under Triton's interpreter) when no target is given."""
    if target is None:
        from kt_cli.evaluate.interpreter_fixes import apply as fix_interpreter

        fix_interpreter()
        return "cpu", None
    from kt_cli import plugins

    _, runtime = _present(plugins.vendor(target.vendor), target)
    return runtime.torch_device, runtime.free_bytes


def _held(source, runs: list, dtype: str, seed: int, target, make: bool):
    global _HELD
    from kt_cli.evaluate.held_cases import HeldCases
    from kt_cli.evaluate.verify import WrongResult

    _HELD = _HELD or HeldCases()
    problem_source = source.problem()
    device, free_bytes = _judge_device(target)
    problem = _kernel(problem_source)
    try:
        return problem, _HELD.get(problem if make else None, (problem_source.path, problem_source.sha256()), runs,
                                  dtype, seed, device, free_bytes)
    except WrongResult as exc:
        raise WorkerFailure("bad_input", f"{problem_source.path}: {exc}") from None


def hold_cases(source, runs: list, dtype: str, seed: int, target=None) -> dict:
    """The judge's side, in a worker that loads only the problem's module: the inputs (outputs
    poisoned) of each (shape, trial) run, made once and held for every candidate, lent as shared
    memory (restored first where the last candidate they were lent to was never judged: HeldCase.lend);
    the reference outputs stay here."""
    from kt_cli.evaluate.held_cases import share

    _, held = _held(source, runs, dtype, seed, target, make=True)
    for item in held:
        item.lend()
    return {"shared": share([h.case.inputs for h in held]), "outputs": [list(h.case.outputs) for h in held]}


def judge_cases(source, runs: list, dtype: str, seed: int, tolerance, target=None, after: str = "") -> dict:
    """The judge's verdict on what a candidate's launches left in the held cases of `runs` (then
    restored for the next candidate): the verification as JSON, or WorkerFailure("wrong")."""
    from kt_cli.evaluate.held_cases import judge_held
    from kt_cli.evaluate.verify import WrongResult, module_tolerance, tolerance_for

    problem, held = _held(source, runs, dtype, seed, target, make=False)
    bound = tolerance_for(dtype, module_tolerance(problem, dtype), tolerance)
    try:
        return judge_held(held, bound)
    except WrongResult as exc:
        raise WorkerFailure("wrong", f"{after}{exc}") from None


def ready_judge(source, runs: list, dtype: str, seed: int, target=None) -> None:
    """The judge readied before a problem's first candidate (IsolatedVerifier.ready): the runs' cases
    made and held, and its comparison readied by judging the first with its reference outputs written in
    (a verdict that passes; judging the poisoned outputs took 4-6 s on the H100 hosts to say what is
    wrong): on a device that starts loading the judge's kernels in the background (judge_kernel.loaded),
    and this returns without waiting for them. judge_held restores the case for the candidates."""
    from kt_cli.evaluate.held_cases import judge_held
    from kt_cli.evaluate.verify import WrongResult, module_tolerance, tolerance_for

    problem, held = _held(source, runs, dtype, seed, target, make=True)
    first = held[0].case
    for name in first.outputs:
        first.inputs[name].copy_(first.expected[name])
    with contextlib.suppress(WrongResult):  # (a reference its own dtype cannot hold: still loaded)
        judge_held(held[:1], tolerance_for(dtype, module_tolerance(problem, dtype), None))


def ready_device(source, target=None) -> None:
    """A candidate's worker readied before a problem's first candidate (IsolatedVerifier.ready): its
    device selected (the vendor's runtime initialised), the kernel module loaded, and Triton's own key
    computed (cross_compile.warm_up: 0.35 s of a cold run's first launch on an H100 host, the device
    held, while this worker waited for the judge's readying anyway)."""
    from kt_cli.evaluate.cross_compile import warm_up

    _candidate_device(target)
    _kernel(source)
    with contextlib.suppress(Exception):  # best effort: a launch computes it where this could not
        warm_up()


def ready_spare(role: str, target) -> None:
    """What a device's worker (`role` "device") or judge ("judge") does first whatever the problem, done by
    `kt serve`'s spare before a kt process takes it over (kt_cli.resident.spare): the vendor's devices
    detected, the runtime selected on `target`'s device and its context made (synchronize and free_bytes
    reach the device), and for a candidate's worker Triton's own key (cross_compile.warm_up)."""
    from kt_cli import plugins
    from kt_cli.evaluate.cross_compile import warm_up

    _, runtime = _present(plugins.vendor(target.vendor), target)
    runtime.synchronize()
    runtime.free_bytes()
    if role == "device":
        with contextlib.suppress(Exception):
            warm_up()


def launch_held(source, params: dict, options: dict, shared: bytes, watched_names: tuple = (), target=None) -> dict:
    """The candidate's side of verification: launch on each run's held tensors under the launch watch,
    in order; the judge looks at what the launches left. Returns how long loading and launching took."""
    from kt_cli.evaluate.held_cases import open_shared
    from kt_cli.evaluate.verify import launch_watched

    started = time.perf_counter()
    device = _candidate_device(target)
    kernel = _kernel(source)
    runs = open_shared(shared)
    loaded = time.perf_counter()
    try:
        for run in runs:
            launch_watched(kernel, run, params, options, watched_names, device.synchronize if device else lambda: None)
        return {"steps": {"load": loaded - started, "launches": time.perf_counter() - loaded}}
    except WorkerFailure:
        raise
    except NotInterpretable as exc:
        from kt_cli.evaluate.interpreter_fixes import not_interpretable

        raise WorkerFailure("interpreter", not_interpretable([exc.kernel_name])) from None
    except Exception as exc:
        if device is None:
            raise
        raise _classify_launch_error(exc, device.vendor) from None
    finally:
        del runs


@dataclass
class _Device:
    vendor: object
    device: object
    runtime: object

    def synchronize(self) -> None:
        self.runtime.synchronize()


def _candidate_device(target) -> "_Device | None":
    """The vendor's device of `target` in a candidate's worker (None: the CPU, under the interpreter)."""
    if target is None:
        from kt_cli.evaluate.interpreter_fixes import apply as fix_interpreter

        fix_interpreter()
        return None
    from kt_cli import plugins

    vendor = plugins.vendor(target.vendor)
    return _Device(vendor, *_present(vendor, target))


def time_held(source, candidate, target, shared: bytes, outputs: list, race: Bound | None = None,
              screen: bool = False, watched_names: tuple = ()) -> dict:
    """Measured mode, after the judge accepted the candidate: time it interleaved with the baseline op
    on the first run's held tensors, by the one method chosen for this problem, re-poisoning the
    outputs before every batch, until the interval of what it is ranked by (`race.ranking`: its ratio
    to the baseline pair by pair, its own median, or either while the problem has not decided:
    kt_cli.evaluate.race) is tight; the judge then checks what the last batch left. Racing: sampling
    stops after any batch whose interval puts the candidate above the `race` bound (_race_stop).
    With `screen` (and a bound), before verification: racing's cheap first timing (EventTimer.screen,
    held against `race.ratio` where set, else `race.seconds`); its first call is watched as verification
    watches a launch (`watched_names` tripwired), and the judge checks what its batch left all the same."""
    from kt_cli.evaluate.held_cases import open_shared
    from kt_cli.evaluate.verify import launch_watched

    started = time.perf_counter()
    device = _candidate_device(target)
    kernel = _kernel(source)
    params, options = split_params(candidate.params, target.launch_options)
    timer = _timer(device)
    inputs = open_shared(shared)[0]
    launch = kernel.bound_launch(inputs, params, options)
    # the same op on the same held tensors for every candidate of the problem: its graph is kept
    baseline = Reused(lambda: kernel.baseline(inputs), ("baseline", source.path, shape_key(candidate.shape),
                                                        candidate.dtype, _addresses(inputs)))
    watch = LaunchWatch(())

    def watched_launch():
        with watch.watching_work():
            launch()

    def verified_launch():  # the screen's first call: as verification launches, its rejection raised
        launch_watched(kernel, inputs, params, options, watched_names, device.synchronize)

    method = _problem_method(timer, (source.path, tuple(candidate.shape.items()), candidate.dtype), baseline)
    before = device.vendor.device_state(device.device)
    setup = time.perf_counter() - started
    poison = lambda: _poison_outputs(inputs, outputs)  # noqa: E731
    try:
        if screen:
            stats = timer.screen(watched_launch, method, race.seconds, poison, verified_launch, baseline, race.ratio)
            base = ratio = None
        else:
            stats, base, ratio = timer.measure_interleaved([watched_launch, baseline], method, poison, judged=1,
                                                           stop=_race_stop(race),
                                                           ranked_by=race.ranking if race else "either")
    except WorkerFailure:  # a tripwire of the watch: the rejection as it is
        raise
    except Exception as exc:
        raise _classify_launch_error(exc, device.vendor) from None
    finally:
        device.synchronize()
    check_pristine("a timed launch")  # nothing patched kt (the watch included) while timed
    watch.verdict()  # the timed calls did their work in their kernels, on the timed stream
    after = device.vendor.device_state(device.device)
    del inputs, launch, baseline
    steps = {"setup": setup, **getattr(timer, "last_steps", {})}
    steps["checks"] = time.perf_counter() - started - sum(steps.values())
    return {"stats": {**stats.to_json(), "device_state": {"before": before, "after": after}},
            "baseline": base.to_json() if base else None, "ratio": ratio.to_json() if ratio and ratio.calls else None,
            "timer": timer.name, "steps": steps}


def _timer(device: "_Device"):
    """The vendor's timer of `device`, one per device in this worker: what it keeps between timings (its
    flush buffer, the graphs of the problems' baseline ops) serves every candidate timed here."""
    key = (device.vendor.name, device.device.index)
    if key not in _timers:
        _timers[key] = device.vendor.timer(device.device)
    return _timers[key]


def _addresses(inputs: dict) -> tuple:
    """What names the memory of a run's held tensors: each tensor's address, shape, strides and type
    (and each other argument's value), in order."""
    return tuple((name, value.data_ptr(), tuple(value.shape), tuple(value.stride()), str(value.dtype))
                 if hasattr(value, "data_ptr") else (name, repr(value)) for name, value in inputs.items())


def _race_stop(race: Bound | None):
    """A full timing's racing rule (its Stats: the candidate's, the baseline's, their ratio's): the
    ratio's interval above `race.ratio` where there is one, else its own above `race.seconds`; None: no
    race."""
    if race is not None and race.ratio is not None:
        return lambda s: s[-1].calls > 0 and s[-1].ci_low > race.ratio
    if race is None or race.seconds is None:
        return None
    return lambda s: s[0].ci_low > race.seconds


def _present(vendor, target, index: int | None = None):
    """The vendor's device of `target` (and `index`) in this worker, its runtime selected on it. The
    devices are detected once per worker (detection may run the vendor's tools: 20 ms a request)."""
    if vendor.name not in _detected:
        _detected[vendor.name] = vendor.detect_devices()
    device = next(d for d in _detected[vendor.name]
                  if d.target == target.name and (index is None or d.index == index))
    runtime = vendor.runtime()
    runtime.select(device.index)
    return device, runtime


def _problem_method(timer, key: tuple, baseline) -> str:
    """The timing method of a problem: chosen once, from the baseline op, for every candidate."""
    if key not in _methods:
        _methods[key] = timer.choose_method(baseline)
    return _methods[key]


def _poison_outputs(inputs: dict, outputs: tuple) -> None:
    from kt_cli.evaluate.verify import poison

    for name in outputs:
        poison(inputs[name])


def recheck(source, target, device_index: int, shape: dict, params: dict, dtype: str, seed: int, method: str,
            rounds: int, blocks: int = 1) -> dict:
    """kt check, once the judge verified the stored config: time it and the baseline op interleaved,
    `rounds` pairs in each of `blocks` blocks, so that each kernel sample has a reference sample taken
    beside it. Each block times freshly made inputs (other values, and other addresses while the
    earlier blocks' inputs fit in memory beside them), so the blocks' spread shows how much the ratio
    depends on where and on what the calls ran, not only on the moment."""
    from kt_cli import plugins
    from kt_cli.kernel import Tensors

    vendor = plugins.vendor(target.vendor)
    kernel = _kernel(source)
    kernel_params, options = split_params(params, target.launch_options)
    device, runtime = _present(vendor, target, device_index)
    timer = vendor.timer(device)
    late = getattr(timer, "kept_late", 0)
    kernel_s, baseline_s, sizes, kept = [], [], [], []
    for block in range(blocks):
        inputs = kernel.make_inputs(shape, dtype, Tensors(runtime.torch_device, seed + block))
        try:
            k, b = timer.paired(kernel.bound_launch(inputs, kernel_params, options),
                                lambda: kernel.baseline(inputs), rounds, method)
        except Exception as exc:
            raise _classify_launch_error(exc, vendor) from None
        kernel_s += k
        baseline_s += b
        sizes.append(len(k))
        held = sum(t.numel() * t.element_size() for t in inputs.values() if hasattr(t, "element_size"))
        if held * (len(kept) + 2) < runtime.free_bytes() // 4:
            kept.append(inputs)  # so the next block's inputs land elsewhere
    # batches whose windows may hold host launch time (EventTimer: still late after every try)
    return {"kernel": kernel_s, "baseline": baseline_s, "blocks": sizes,
            "timer": timer.name, "device": device.name, "late_batches": getattr(timer, "kept_late", 0) - late}


def _classify_launch_error(exc: Exception, vendor) -> WorkerFailure:
    name = type(exc).__name__
    if name == "OutOfResources":
        return WorkerFailure("invalid", f"out of resources at launch: {exc}")
    if name in ("CompilationError", "CompileTimeAssertionFailure") or vendor.is_compile_error(exc):
        return WorkerFailure("compile_error", _error_lines(exc))
    return WorkerFailure("crash", f"{name}: {_error_lines(exc)}")


def _error_lines(exc: Exception, n: int = 6) -> str:
    """The error's first line and its last ones: Triton puts the source excerpt first and the cause last."""
    lines = str(exc).strip().splitlines()
    if len(lines) > n:
        lines = lines[:1] + ["..."] + lines[-(n - 1):]
    return " | ".join(lines)[-800:]


def ceilings(target_name: str, index: int, copy_bytes: int = 2 * 2**30, gemm_size: int = 8192) -> dict:
    """What this device really reaches: device-to-device copy bandwidth (read + write bytes) and the
    bf16 GEMM rate of torch.matmul, timed with the vendor's timer like any candidate."""
    import torch

    from kt_cli import plugins

    target = plugins.target(target_name)
    vendor = plugins.vendor(target.vendor)
    device, runtime = _present(vendor, target, index)
    timer = vendor.timer(device)
    src = torch.empty(copy_bytes // 4, dtype=torch.float32, device=runtime.torch_device).uniform_()
    dst = torch.empty_like(src)
    copy = timer.measure(lambda: dst.copy_(src))
    del src, dst
    a = torch.randn(gemm_size, gemm_size, dtype=torch.bfloat16, device=runtime.torch_device)
    b = torch.randn(gemm_size, gemm_size, dtype=torch.bfloat16, device=runtime.torch_device)
    gemm = timer.measure(lambda: torch.matmul(a, b))
    return {"copy_bytes_per_s": 2 * copy_bytes / copy.median, "copy": copy.to_json(),
            "bf16_gemm_flops_per_s": 2 * gemm_size**3 / gemm.median, "gemm": gemm.to_json(), "timer": timer.name}


def calibrate(target_name: str, index: int) -> dict:
    """The cost model's constants measured on this device (kt_cli/evaluate/calibrate.py)."""
    from kt_cli import plugins
    from kt_cli.evaluate.calibrate import calibrate as measure

    target = plugins.target(target_name)
    vendor = plugins.vendor(target.vendor)
    device, runtime = _present(vendor, target, index)
    return measure(vendor, target, device, runtime, vendor.device_peaks(device), ceilings(target_name, index))
