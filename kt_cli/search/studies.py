"""Every (target, problem) study of a recipe, driven to its budget in this process (beside any other
process sharing the storage)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from kt_cli import plugins
from kt_cli.evaluate.evaluator import Evaluator
from kt_cli.generate import kernel_source
from kt_cli.recipe.parse import Recipe
from kt_cli.recipe.space import SearchSpace, check_feasible, constraint_env
from kt_cli.search.driver import StudyRun
from kt_cli.search.objective import LARGE_SPACE
from kt_cli.search.plan import TargetPlan, build_space, plan_targets, study_name
from kt_cli.search.scale import sampler_seed, whoami
from kt_cli.search.storage import open_storage
from kt_cli.search.tally import Tally
from kt_cli.types import TrialResult


@dataclass(frozen=True)
class ProblemPlan:
    """One study's problem: a target plan, a shape, its space; what the study driver asks of it."""

    recipe: Recipe
    target: TargetPlan
    shape: dict
    space: SearchSpace
    valid_points: int | None  # None: the space is too large to count
    evaluator: Evaluator

    def env(self, params: dict) -> dict:
        """The names a constraint sees for `params`: the point, the shape, the target's properties."""
        return constraint_env(params, self.shape, self.target.spec.properties, self.recipe.problem.dtype_bytes)

    def evaluate(self, params: dict) -> TrialResult:
        return self.evaluator.evaluate(self.target, self.shape, params)

    def invalid_result(self, params: dict, why: str) -> TrialResult:
        return TrialResult("invalid", params, self.target.spec.name, self.shape, self.target.mode, message=why)

    def study_name(self, source_hash: str) -> str:
        return study_name(self.recipe, self.target, self.shape, source_hash)


def problem_plans(recipe: Recipe, plans: list, evaluator: Evaluator, module_info: dict) -> list[ProblemPlan]:
    """The studies of the recipe, target by target and shape by shape; an infeasible space (no point
    meets the constraints) is a BadInput here, before any study starts."""
    shapes = list(recipe.problem.shapes)
    problems = []
    for plan in plans:
        space = build_space(recipe, module_info["space"], module_info["constraints"], plan.spec, set(shapes[0]))
        for shape in shapes:
            valid = check_feasible(space, shape, plan.spec.properties, recipe.problem.dtype_bytes,
                                   f"{recipe.path}: search.space for {plan.spec.name}")
            problems.append(ProblemPlan(recipe, plan, shape, space, valid if space.size() <= LARGE_SPACE else None,
                                        evaluator))
    return problems


def run_studies(recipe: Recipe, requested_targets: tuple[str, ...], storage_url: str, shared: bool,
                progress=None, source=None):
    """Drive every study of the recipe to its budget. Returns (source, plans, [(plan, shape, study)], tally)."""
    plans = plan_targets(recipe, requested_targets)
    source = source or kernel_source(recipe, plans, Path(recipe.output_dir))
    evaluator = Evaluator(source, recipe, list(recipe.problem.verify_shapes), recipe.search.timeout)
    tally = Tally()
    started = time.perf_counter()
    try:
        module_info = evaluator.inspect_module(list(recipe.problem.shapes))
        problems = problem_plans(recipe, plans, evaluator, module_info)
        store = open_storage(storage_url)
        source_hash = source.sha256()
        studies = []
        for problem in problems:
            run = StudyRun(problem.study_name(source_hash), store, problem, budget=recipe.search.trials,
                           sampler=recipe.search.sampler,
                           seed=sampler_seed(recipe.search.seed) if shared else recipe.search.seed,
                           on_result=_reporter(tally, problem, progress), worker=whoami(problem.target),
                           known_good=tuple(module_info.get("seeds", ())))
            studies.append((problem.target, problem.shape, run.run(problem.valid_points, evaluator.in_flight)))
            tally.found_complete = tally.found_complete and run.found_complete
    finally:
        tally.wall_seconds = time.perf_counter() - started
        tally.device_busy_seconds = evaluator.device_busy_seconds
        evaluator.close()
    return source, plans, studies, tally


def _reporter(tally: Tally, problem: ProblemPlan, progress):
    """What happens to each recorded result: counted, shown to observer plugins, reported as progress."""
    def on_result(result) -> None:
        tally.add(result)
        plugins.load_plugins().hook.kt_trial_finished(result=result)
        if progress:
            progress(tally, problem.target, problem.shape, problem.recipe.search.trials)
    return on_result
