"""Every (target, problem) study of a recipe, driven to its budget in this process (beside any other
process sharing the storage)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from kt_cli import plugins
from kt_cli.background import InBackground
from kt_cli.evaluate.evaluator import Evaluator
from kt_cli.generate import kernel_source
from kt_cli.recipe.parse import Recipe
from kt_cli.recipe.space import SearchSpace, constraint_env, feasible_points
from kt_cli.search.driver import StudyRun
from kt_cli.search.fair_slots import FairSlots
from kt_cli.search.ledger import Budget
from kt_cli.search.plan import (TargetPlan, build_space, check_kernel_knobs, make_storage_dir, new_storage,
                                plan_targets, space_key, study_name)
from kt_cli.search.sampler import check_sampler_fits
from kt_cli.search.scale import sampler_seed, whoami
from kt_cli.search.storage import earlier_results, open_storage
from kt_cli.search.tally import Tally, study_key
from kt_cli.stamps import mark
from kt_cli.types import TrialResult


_TALLY_LOCK = threading.Lock()
STUDIES_AT_ONCE = 4  # studies driven side by side; each has the evaluator's in-flight threads, sharing its slots
# (FairSlots: a freed slot goes to the study furthest behind in its budget)
RUNNING_POLL_S = 0.2  # how often the pairing worker looks whether other processes' trials still run


@dataclass(frozen=True)
class ProblemPlan:
    """One study's problem: a target plan, a shape, its space; what the study driver asks of it."""

    recipe: Recipe
    target: TargetPlan
    shape: dict
    space: SearchSpace
    valid: tuple | None  # the indices of the points that meet the constraints; None: too large to list
    evaluator: Evaluator

    @property
    def valid_points(self) -> int | None:
        """How many points meet the constraints (None: the space is too large to count)."""
        return None if self.valid is None else len(self.valid)

    def env(self, params: dict) -> dict:
        """The names a constraint sees for `params`: the point, the shape, the target's properties."""
        return constraint_env(params, self.shape, self.target.spec.properties, self.recipe.problem.dtype_bytes)

    def evaluate(self, params: dict) -> TrialResult:
        return self.evaluator.evaluate(self.target, self.shape, params)

    def evaluate_first_seed(self, seeds: tuple) -> None:
        """Begin evaluating the point a new study asks for first, its kernel's first seed that fits the
        space (driver.StudyRun enqueues the seeds so, completed alike), before the study exists."""
        for point in seeds:
            full = self.space.completion(point, self.env)
            if full is not None:
                self.evaluator.evaluate_ahead(self.target, self.shape, full)
                return

    def observe(self, result: TrialResult) -> None:
        """A result of this study that another process evaluated (its best races this one's candidates)."""
        self.evaluator.observe(self.target, result)

    def invalid_result(self, params: dict, why: str) -> TrialResult:
        return TrialResult("invalid", params, self.target.spec.name, self.shape, self.target.mode, message=why)

    @property
    def key(self) -> tuple[str, str]:
        """The study's key in a Tally."""
        return study_key(self.target.spec.name, self.shape)

    def study_name(self, source_hash: str) -> str:
        return study_name(self.recipe, self.target, self.shape, source_hash)


def plan_spaces(recipe: Recipe, plans: list, defaults: dict, default_constraints: list) -> list[tuple]:
    """(target plan, shape, space, valid points' indices) for every study of the recipe; the indices are
    None when the space is too large to list. A space no point of which meets the constraints, or that its
    sampler cannot take, is a BadInput here, before any study starts."""
    out = []
    sizes = set.intersection(*(set(shape) for shape in recipe.problem.shapes))  # what every shape names
    for plan in plans:
        space = build_space(recipe, defaults, default_constraints, plan.spec, sizes)
        check_sampler_fits(recipe.search.sampler, space, recipe.where("search.sampler"))
        for shape in recipe.problem.shapes:
            valid = feasible_points(space, shape, plan.spec.properties, recipe.problem.dtype_bytes,
                                    f"{recipe.path}: search.space for {plan.spec.name}")
            out.append((plan, shape, space, None if valid is None else tuple(valid)))
    return out


def check_recipe_space(recipe: Recipe, plans: list) -> None:
    """The recipe's own space, checked before any worker starts: knob names and values, constraints, the
    sampler, and that some point meets the constraints. (A recipe without a space searches the
    kernel's, known once a worker has read the module: problem_plans checks it then.)"""
    if recipe.search.space:
        plan_spaces(recipe, plans, {}, [])


def problem_plans(recipe: Recipe, plans: list, evaluator: Evaluator, module_info: dict) -> list[ProblemPlan]:
    """The studies of the recipe, target by target and shape by shape, once the kernel's knobs are known
    to match the space (a misspelled knob is a BadInput here, not a KeyError in every trial)."""
    problems, probed = [], set()
    for plan, shape, space, valid in plan_spaces(recipe, plans, module_info["space"], module_info["constraints"]):
        # what the launch function gets: kernel knobs, and launch options the kernel takes as arguments
        names = tuple(p.name for p in space.params
                      if p.name not in plan.spec.launch_options or p.name in evaluator.kernel_arguments)
        if names not in probed:
            probed.add(names)
            env_of = lambda point: constraint_env(point, shape, plan.spec.properties,  # noqa: E731
                                                  recipe.problem.dtype_bytes)
            point = next(space.valid_points(env_of, max_points=1000), None) or space.point_at(0)
            probe = evaluator.knobs_read({n: point[n] for n in names})
            check_kernel_knobs(space, plan.spec, probe, space_key(recipe))
        problems.append(ProblemPlan(recipe, plan, shape, space, valid, evaluator))
    return problems


class Preparation:
    """A run's evaluator and its kernel module being inspected (in the interpreter worker), begun before
    the targets are planned: detecting the devices (importing torch, initialising CUDA) and starting a
    worker take seconds each. On a 16-core H200 host the matmul recipe's first trial came 13.9 s in with
    one after the other, 11.2-12.0 s with both at once (docs/performance.md). The compile pool starts
    once the targets are planned (start_workers): its workers' imports would take the cores the
    interpreter worker's start needs."""

    def __init__(self, recipe: Recipe, source, processes_on_host: int = 1):
        self.evaluator = Evaluator(source, recipe, list(recipe.problem.verify_shapes), recipe.search.timeout,
                                   processes_on_host=processes_on_host)
        self._lock = threading.Lock()
        self._inspecting, self._closing = True, False
        self._inspection = InBackground(self._inspect, list(recipe.problem.shapes))

    def _inspect(self, shapes: list) -> dict:
        try:
            return self.evaluator.inspect_module(shapes)
        finally:
            with self._lock:
                self._inspecting = False
                closing = self._closing
            if closing:
                self.evaluator.close()

    def module_info(self) -> dict:
        """What inspect_module found (its error raised here)."""
        return self._inspection.result()

    def close(self) -> None:
        """Stop the evaluator's workers (a run refused before it needed the module's facts). While the
        inspection is under way it stops them when it ends: stopped from here, the worker's pipe was
        closed by two threads at once (EBADF in place of the refusal's one line)."""
        with self._lock:
            self._closing = True
            inspecting = self._inspecting
        if not inspecting:
            self.evaluator.close()


def run_studies(recipe: Recipe, requested_targets: tuple[str, ...], storage_url: str, shared: bool,
                progress=None, source=None, finish=None, processes_on_host: int = 1, devices: list | None = None,
                prepared: Preparation | None = None, plans: list | None = None, pairs: tuple[int, int] = (0, 1)):
    """Drive every study of the recipe to its budget. Returns (source, plans, [(plan, shape, study)], tally).
    `finish(plan, shape, study, evaluator)`, if given, runs for each study as soon as it ends, while the
    others still run and the evaluator's workers are up (the winner's pairing with its reference reuses
    the device's, whenever no candidate waits for it); what it returns is kept in `tally.results`, in the
    studies' order. `pairs`: (this process, the processes of `kt tune --workers`): `finish` runs here for
    every such study in turn from this one, None stands for the others' (results/s44/start). `prepared`:
    the run's evaluator and module inspection, already begun (of `source`); `plans`: the targets, already
    planned in this process; `devices`: those present, already detected (else they are detected here)."""
    if prepared is None and source is not None:  # the inspection beside the device detection below
        prepared = Preparation(recipe, source, processes_on_host)
    try:
        plans = plans if plans is not None else plan_targets(recipe, requested_targets, devices)
    except BaseException:
        if prepared is not None:
            prepared.close()
        raise
    if prepared is None:  # a generator that builds its module for the targets planned
        prepared = Preparation(recipe, kernel_source(recipe, plans, Path(recipe.output_dir)), processes_on_host)
    evaluator, source = prepared.evaluator, prepared.evaluator.source
    tally = Tally()
    started = time.perf_counter()
    try:
        evaluator.start_workers(plans)  # while the interpreter worker inspects the module
        module_info = prepared.module_info()
        mark("module inspected")
        problems = _problems_begun(recipe, plans, evaluator, module_info, ahead=not shared and new_storage(storage_url))
        make_storage_dir(storage_url)  # (only now: a refused recipe or module leaves no file behind)
        store = open_storage(storage_url)
        mark("storage opened")
        source_hash = source.sha256()
        studies = []
        _expect(tally, problems, store, recipe.search.trials, source_hash)
        slots = FairSlots(evaluator.in_flight)
        runs = [StudyRun(problem.study_name(source_hash), store, problem, budget=recipe.search.trials,
                         sampler=recipe.search.sampler,
                         seed=sampler_seed(recipe.search.seed) if shared else recipe.search.seed,
                         on_result=_reporter(tally, problem, progress), on_open=_opener(tally, problem, progress),
                         worker=whoami(problem.target), known_good=tuple(module_info.get("seeds", ())), slots=slots)
                for problem in problems]
        finished: dict = {}

        def study_done(index: int, study) -> None:
            if finish is not None and index % pairs[1] == pairs[0]:
                if shared:  # the final best is paired here, by the device's workers already up
                    wait_for_running_trials(study, store, recipe.search.timeout)
                finished[index] = finish(problems[index].target, problems[index].shape, study, evaluator)

        done = _run_at_once(runs, [p.valid_points for p in problems], evaluator.in_flight, study_done)
        studies = [(problem.target, problem.shape, study) for problem, study in zip(problems, done)]
        tally.found_complete = all(run.found_complete for run in runs)
        if finish is not None:
            tally.results = [finished.get(index) for index in range(len(runs))]
    finally:
        tally.wall_seconds = time.perf_counter() - started
        tally.device_busy_seconds = evaluator.device_busy_seconds
        evaluator.close()
    return source, plans, studies, tally


def _problems_begun(recipe: Recipe, plans: list, evaluator: Evaluator, module_info: dict, ahead: bool) -> list:
    """The studies' problems, their devices readying meanwhile (their order is the problems'): with `ahead`
    (a new storage of this process alone: every study is new), each problem's first seed is being evaluated
    too, while the storage opens and the studies enqueue their seeds; it waits for nothing else on a host
    with `kt serve`'s spares."""
    evaluator.ready_devices([(plan, shape) for plan in plans for shape in recipe.problem.shapes])
    problems = problem_plans(recipe, plans, evaluator, module_info)
    mark("knobs probed")
    if ahead:
        for problem in problems:
            problem.evaluate_first_seed(tuple(module_info.get("seeds", ())))
    return problems


def _expect(tally: Tally, problems: list, store, trials: int, source_hash: str) -> None:
    """For the ETA: every study's budget, and what earlier runs did of it."""
    for problem in problems:
        tally.expect(problem.key, Budget(trials, problem.valid_points).limit, problem.target.mode,
                     earlier_results(store, problem.study_name(source_hash)))


def wait_for_running_trials(study, storage, seconds: float) -> None:
    """Until no trial of `study` runs, at most `seconds` (the per-candidate timeout): in a shared study
    other processes' last trials may still find a better winner after this process's part ended. The
    first `kt tune --workers` worker pairs each winner with its reference; a winner found after that
    pairing was paired again by the parent on fresh device workers (a fork server, a device's worker
    and a judge started from nothing), and on 4x H100 hosts the results came 8-26 s after the last trial
    (BENCHMARKS.md, 2026-11-26). A dead owner's trials are settled first, as the driver does."""
    import optuna

    from kt_cli.search.recovery import fail_dead_trials

    deadline = time.monotonic() + seconds
    while study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)) and time.monotonic() < deadline:
        fail_dead_trials(study, storage)  # (it reads every trial: only while some run)
        time.sleep(RUNNING_POLL_S)


def _run_at_once(runs: list[StudyRun], valid_points: list, in_flight: int,
                 study_done=lambda index, study: None) -> list:
    """Drive the studies side by side (up to STUDIES_AT_ONCE of them), their trials sharing the
    `in_flight` slots, so that the compile pool and the device never wait for one problem's study to
    drain before the next one fills the pipeline again; `study_done(index, study)` runs as each one
    ends, in its thread. Returns the studies in the order of `runs`."""
    pending = list(enumerate(runs))
    done: dict = {}
    lock = threading.Lock()
    errors: list[BaseException] = []

    def drive() -> None:
        while not errors:
            with lock:
                if not pending:
                    return
                index, run = pending.pop(0)
            try:
                done[index] = run.run(valid_points[index], in_flight)
                study_done(index, done[index])
            except BaseException as exc:  # the first error ends the run, as one study's did
                errors.append(exc)

    helpers = [threading.Thread(target=drive, daemon=True) for _ in range(min(len(runs), STUDIES_AT_ONCE) - 1)]
    for thread in helpers:
        thread.start()
    drive()
    for thread in helpers:
        thread.join()
    if errors:
        raise errors[0]
    return [done[index] for index in range(len(runs))]


def _reporter(tally: Tally, problem: ProblemPlan, progress):
    """What happens to each recorded result: counted, shown to observer plugins, reported as progress."""
    def on_result(result) -> None:
        with _TALLY_LOCK:  # trials of every study in flight finish in their own threads
            tally.add(result)
        plugins.load_plugins().hook.kt_trial_finished(result=result)
        if progress:
            progress(tally, problem.key)
    return on_result


def _opener(tally: Tally, problem: ProblemPlan, progress):
    """What happens when a study is opened: its earlier runs' trials counted, reported as progress."""
    def on_open(budget: int, earlier: list) -> None:
        with _TALLY_LOCK:
            tally.opened(problem.key, budget, problem.target.mode, earlier)
        if progress:
            progress(tally, problem.key)
    return on_open
