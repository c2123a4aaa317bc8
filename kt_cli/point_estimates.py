"""The whole job of `kt estimate`: the cost model's estimate of given points of a recipe's space for one
target, each with the terms behind it and its rank among the valid points of the space. Points are
cross-compiled in the static path's compile pool (Evaluator.compile, as `kt tune` without a GPU)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from kt_cli import plugins
from kt_cli.errors import JobFailed
from kt_cli.evaluate.evaluator import Evaluator
from kt_cli.generate import kernel_source, recipe_generator
from kt_cli.recipe.parse import Recipe
from kt_cli.recipe.points import Point, check_point, read_points
from kt_cli.recipe.space import constraint_env
from kt_cli.search.plan import TargetPlan
from kt_cli.search.studies import ProblemPlan, plan_spaces, problem_plans

# Ranking compiles every point it ranks against (1-2 s each on a laptop core): a bounded set
RANK_ALL_MAX = 64  # spaces with at most this many valid points are ranked against all of them
RANK_SAMPLE = 48  # else against this many valid points drawn with a fixed seed
RANK_SEED = 0
DEFAULT_POINTS = 4  # points estimated when no file is given and the kernel lists no SEEDS


@dataclass(frozen=True)
class Ranking:
    """The estimates of the points a point is ranked among (the seconds of each that compiled)."""

    seconds: tuple[float, ...]
    among: str  # "all": every valid point of the space; "sample": RANK_SAMPLE drawn with RANK_SEED
    failed: int  # points of the reference set that did not compile


def estimate_points(recipe: Recipe, target: str, points_path: str | None = None) -> list[dict]:
    """One row per (point, problem): where the point came from, its params and problem, and its
    `estimate` (the cost model's dict, `seconds` included) with its `rank`, or its `failure`."""
    plan = TargetPlan(plugins.target(target, "--target"), "estimated")
    recipe_generator(recipe)
    given = read_points(points_path, recipe.problem.shapes) if points_path else None
    if recipe.search.space:  # the space is the recipe's: bad points are refused before any worker starts
        for _, shape, space, _ in plan_spaces(recipe, [plan], {}, []):
            _check_points(given or [], shape, space, lambda p, s=shape: constraint_env(
                p, s, plan.spec.properties, recipe.problem.dtype_bytes))
    source = kernel_source(recipe, [plan], Path(recipe.output_dir))
    evaluator = Evaluator(source, recipe, list(recipe.problem.verify_shapes), recipe.search.timeout)
    try:
        info = evaluator.inspect_module(list(recipe.problem.shapes))
        problems = problem_plans(recipe, [plan], evaluator, info)
        rows = []
        for problem in problems:
            points = given if given is not None else default_points(problem, info.get("seeds", ()), recipe)
            mine = _check_points(points, problem.shape, problem.space, problem.env)
            rows += _estimate_problem(problem, mine, evaluator)
    finally:
        evaluator.close()
    if rows and all("failure" in r for r in rows):
        raise JobFailed(f"no point could be estimated for {target}: {rows[0]['failure']}: {rows[0]['message'][:200]}")
    return rows


def _check_points(points: list[Point], shape: dict, space, env_of) -> list[Point]:
    """The points to estimate at `shape`, each checked against `space` (recipe.points.check_point)."""
    mine = [p for p in points if p.shape is None or p.shape == shape]
    for p in mine:
        check_point(p, space, env_of)
    return mine


def default_points(problem: ProblemPlan, seeds, recipe: Recipe) -> list[Point]:
    """The kernel's SEEDS that fit the space (completed as a study does), else a few valid points drawn
    with the recipe's seed."""
    found = [Point(full, problem.shape, f"kernel SEEDS[{i}]") for i, seed in enumerate(seeds)
             if (full := problem.space.completion(dict(seed), problem.env)) is not None]
    if found:
        return found
    drawn = _distinct_valid(problem, DEFAULT_POINTS, recipe.search.seed)
    return [Point(p, problem.shape, f"sampled point {i + 1}") for i, p in enumerate(drawn)]


def _estimate_problem(problem: ProblemPlan, points: list[Point], evaluator: Evaluator) -> list[dict]:
    """Every point of `points` and of the ranking's reference set compiled once, then each point's row."""
    reference, among = _reference_points(problem)
    wanted = {_key(p.params): p.params for p in points}
    wanted.update({_key(p): p for p in reference})
    compiled = _compile_all(problem, list(wanted.values()), evaluator)
    ranked = [compiled[_key(p)] for p in reference]
    ranking = Ranking(tuple(c["seconds"] for c in ranked if "seconds" in c), among,
                      sum("seconds" not in c for c in ranked))
    rows = []
    for p in points:
        row = {"point": p.where, "params": p.params, "problem": problem.shape, "target": problem.target.spec.name}
        out = compiled[_key(p.params)]
        if "failure" in out:
            rows.append({**row, **out})
            continue
        seconds = ranking.seconds + (() if _key(p.params) in {_key(q) for q in reference} else (out["seconds"],))
        rows.append({**row, "estimate": out, "rank": 1 + sum(s < out["seconds"] for s in seconds),
                     "ranked_among": len(seconds), "ranking": ranking.among, "ranking_failed": ranking.failed})
    return rows


def _reference_points(problem: ProblemPlan) -> tuple[list[dict], str]:
    """Every valid point of the space when there are at most RANK_ALL_MAX, else RANK_SAMPLE of them."""
    if problem.valid_points is not None and problem.valid_points <= RANK_ALL_MAX:
        return list(problem.space.valid_points(problem.env)), "all"
    return _distinct_valid(problem, RANK_SAMPLE, RANK_SEED), "sample"


def _distinct_valid(problem: ProblemPlan, count: int, seed: int) -> list[dict]:
    """Up to `count` distinct valid points drawn uniformly with `seed` (at most 50 draws a point)."""
    found: dict = {}
    for point in problem.space.sample(count * 50, seed):
        if len(found) == count:
            break
        if problem.space.violated(problem.env(point)) is None:
            found.setdefault(_key(point), point)
    return list(found.values())


def _compile_all(problem: ProblemPlan, points: list[dict], evaluator: Evaluator) -> dict:
    """_key(point) -> the cost model's estimate dict, or {failure, message} when it did not compile."""
    from kt_cli.evaluate.failure import WorkerFailure
    from kt_cli.evaluate.phases import PhaseClock
    from kt_cli.types import Candidate

    def one(params: dict) -> dict:
        candidate = Candidate(evaluator.source.path, params, problem.target.spec.name, problem.shape,
                              problem.recipe.problem.dtype, "estimated", tuple(evaluator.verify_shapes))
        try:
            return evaluator.compile(candidate, problem.target.spec, PhaseClock())["estimate"]
        except WorkerFailure as exc:
            return {"failure": exc.kind, "message": exc.message}

    with ThreadPoolExecutor(max(1, len(evaluator.compile_pool.workers))) as pool:
        return dict(zip((_key(p) for p in points), pool.map(one, points)))


def _key(params: dict) -> str:
    return json.dumps(params, sort_keys=True)
