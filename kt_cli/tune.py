"""`kt tune`: recipe -> kernel source -> one study per (target, problem) -> artifact."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path

from kt_cli import plugins
from kt_cli.errors import BadInput, JobFailed
from kt_cli.recipe import Recipe
from kt_cli.space import SearchSpace, check_feasible, compile_constraint, constraint_env, parse_param
from kt_cli.types import TargetSpec, TrialResult, shape_key
from kt_cli.evaluate import Evaluator
from kt_cli.worker import WorkerFailure


@dataclass(frozen=True)
class TargetPlan:
    spec: TargetSpec
    mode: str  # "measured" or "estimated"
    device: object = None

    @property
    def peaks(self) -> dict:
        if self.device is not None:
            return plugins.vendor(self.spec.vendor).device_peaks(self.device) or self.spec.peaks
        return self.spec.peaks


def plan_targets(recipe: Recipe, requested: tuple[str, ...]) -> list[TargetPlan]:
    """--target wins; else the GPUs present (measured); else the recipe's targets (estimated)."""
    present = {d.target: d for d in plugins.devices()}
    if requested:
        names = list(dict.fromkeys(requested))
        where = "--target"
    elif present:
        names = list(present)
        where = "detected device"
    else:
        names = list(recipe.targets)
        where = recipe.where("targets.names")
        if not names:
            raise BadInput(f"{recipe.path}: targets.names: no GPU is present and the recipe names no target; add "
                           f"[targets] names = [\"{next(iter(plugins.targets()), 'vendor:arch')}\"] or pass --target")
    plans = []
    for name in names:
        spec = plugins.target(name, where)
        device = present.get(name)
        plans.append(TargetPlan(spec, "measured" if device else "estimated", device))
    return plans


def build_space(recipe: Recipe, defaults: dict, default_constraints: list, spec: TargetSpec,
                shape_names: set[str]) -> SearchSpace:
    """The recipe's space (or the kernel's own), with this vendor's sub-table and no other vendor's."""
    raw = recipe.search.space or defaults
    source_name = recipe.kernel.get("name", "kernel")
    key_root = "search.space" if recipe.search.space else f"{source_name} SPACE"
    vendors = set(plugins.vendors())
    all_options = {opt for s in plugins.targets().values() for opt in s.launch_options}
    params = []
    for name, value in raw.items():
        if name in vendors:
            if not isinstance(value, dict):
                raise BadInput(f"{recipe.path}: {key_root}.{name}: must be a table of {name}-only parameters")
            if name != spec.vendor:
                continue
            for sub, subvalue in value.items():
                where = f"{recipe.path}: {key_root}.{name}.{sub}"
                if sub in all_options and sub not in spec.launch_options:
                    raise BadInput(f"{where}: {sub!r} is not a launch option of {name} targets; "
                                   f"{name} takes: {', '.join(spec.launch_options)}")
                params.append(parse_param(sub, subvalue, where))
            continue
        where = f"{recipe.path}: {key_root}.{name}"
        if name in all_options and not all(name in s.launch_options for s in plugins.targets().values()):
            owners = sorted({s.vendor for s in plugins.targets().values() if name in s.launch_options})
            raise BadInput(f"{where}: {name!r} is a launch option of {', '.join(owners)} only; move it to "
                           f"[search.space.{owners[0]}]")
        params.append(parse_param(name, value, where))
    if not params:
        raise BadInput(f"{recipe.path}: search.space: empty parameter space; add at least one parameter")
    names = {p.name for p in params} | shape_names | set(spec.properties) | {"dtype_bytes"}
    constraints = []
    for text in default_constraints:  # the kernel's own constraints, where the space has their names
        try:
            constraints.append(compile_constraint(text, f"{source_name} CONSTRAINTS", names))
        except BadInput:
            if not recipe.search.space:
                raise
    constraints += [compile_constraint(t, f"{recipe.path}: search.constraints[{i}]", names)
                    for i, t in enumerate(recipe.search.constraints)]
    return SearchSpace(tuple(params), tuple(constraints))


@dataclass
class Tally:
    """Counts for the progress line and the final summary."""

    done: int = 0
    kinds: dict = field(default_factory=dict)
    best: dict = field(default_factory=dict)
    found_complete: bool = True  # every study's budget was spent before this run began
    written_by: dict | None = None  # the process that wrote the artifact, when another did
    last_failure: str = ""
    wall_seconds: float = 0.0
    device_busy_seconds: float = 0.0  # time the device worker spent verifying and timing

    def summary(self) -> str:
        rate = self.done / self.wall_seconds * 60 if self.wall_seconds else 0.0
        text = f"{self.done} candidates in {self.wall_seconds:.0f} s ({rate:.1f}/min)"
        if self.device_busy_seconds:
            text += f", device busy {self.device_busy_seconds / self.wall_seconds:.0%} of the time"
        return text

    def add(self, result: TrialResult) -> None:
        self.kinds[result.failure_kind] = self.kinds.get(result.failure_kind, 0) + 1
        if result.failure_kind != "invalid":
            self.done += 1
        if not result.ok:
            self.last_failure = f"{result.failure_kind}: {result.message}"
        key = (result.target, shape_key(result.shape))
        if result.ok and (key not in self.best or result.value < self.best[key]):
            self.best[key] = result.value


@dataclass(frozen=True)
class BuildContext:
    """What a generator that searches over kernel modules (the llm generator) needs besides its
    [kernel] table: the recipe (problem, search timeout, seed), the targets being tuned with their
    mode, the output directory for its own records, and workers to run candidates in.

    tune() passes it as `build(kernel_table, recipe_path, context=...)` only to generators that set
    `needs_context = True`; the others keep their two-argument build(). Candidate
    modules run only in the Evaluator's worker processes, never in the CLI process."""

    recipe: Recipe
    plans: tuple
    out_dir: Path

    def evaluator(self, source) -> Evaluator:
        """Workers for `source` (switch modules with Evaluator.use); the caller closes it."""
        return Evaluator(source, self.recipe, list(self.recipe.problem.verify_shapes), self.recipe.search.timeout)


def default_storage(recipe: Recipe, out_dir: Path) -> str:
    out_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(out_dir / f'{recipe.name}.study.db').resolve()}"


def study_name(recipe: Recipe, plan: TargetPlan, shape: dict, source_hash: str) -> str:
    where = plan.device.name if plan.device is not None else "static"
    return f"{recipe.name}|{source_hash[:12]}|{plan.spec.name}|{where}|{plan.mode}|{recipe.problem.dtype}|{shape_key(shape)}"


def tune(recipe: Recipe, requested_targets: tuple[str, ...] = (), trials: int | None = None,
         timeout: float | None = None, out_dir: Path | None = None, storage: str | None = None,
         seed: int | None = None, progress=None, workers: int = 1, profile: int = 0):
    """Run every study of the recipe and write the artifact. Returns (artifact path, results, tally);
    `tally.written_by` names the process that wrote it when another process sharing the study did."""
    from kt_cli import artifact, scale

    if trials is not None and trials < 1:
        raise BadInput(f"--trials: must be at least 1, not {trials}")
    if timeout is not None and timeout <= 0:
        raise BadInput(f"--timeout: must be a positive number of seconds, not {timeout}")
    recipe = dataclasses.replace(
        recipe, search=dataclasses.replace(recipe.search, trials=trials or recipe.search.trials,
                                           timeout=timeout or recipe.search.timeout,
                                           seed=recipe.search.seed if seed is None else seed))
    out_dir = Path(out_dir or recipe.output_dir)
    storage_url = storage or default_storage(recipe, out_dir)
    # Processes sharing a study must not all propose the same points: each gets its own sampler seed.
    shared = storage is not None or workers > 1
    recipe_generator(recipe)  # an unknown generator is named before anything else
    plans = plan_targets(recipe, requested_targets)
    source = kernel_source(recipe, plans, out_dir)  # built once: workers share it (an llm loop runs once)
    if workers > 1:
        names = [(plan, shape, study_name(recipe, plan, shape, source.sha256()))
                 for plan in plans for shape in recipe.problem.shapes]
        poll = progress and scale.storage_progress(storage_url, names, recipe.search.trials, progress)
        tally = scale.run_workers(workers, dict(recipe=recipe, requested_targets=requested_targets,
                                                storage_url=storage_url, shared=True, source=source), poll)
        studies = [(plan, shape, scale.load_study(name, storage_url)) for plan, shape, name in names]
    else:
        source, plans, studies, tally = run_studies(recipe, requested_targets, storage_url, shared, progress,
                                                    source=source)
    results = artifact.collect(studies)
    pair_with_reference(results, source, recipe)
    if profile:
        from kt_cli.profile import profile_results

        profile_results(results, source, recipe, profile)
    missing = [f"{r['target']} {shape_key(r['shape'])}" for r in results if r["best"] is None]
    if len(missing) == len(results):
        raise JobFailed(f"no candidate passed verification for any target and problem "
                        f"({', '.join(f'{k} {n}' for k, n in sorted(tally.kinds.items()))}); last failure: "
                        f"{tally.last_failure[:300] or 'none in this run'}")
    final = out_dir / f"{recipe.name}.kt"
    # Processes sharing a storage claim the artifact: only the first writes it. A re-run of a finished
    # study rewrites its own.
    if storage is not None and not tally.found_complete:
        tally.written_by = scale.claim_artifact(storage_url, [s for _, _, s in studies], final)
        if tally.written_by is not None:
            return Path(tally.written_by["path"]), results, tally
    path = artifact.write(out_dir, recipe, source, results, plans, scale.redact(storage_url))
    if missing:
        raise JobFailed(f"wrote {path}, but no candidate passed verification for: {'; '.join(missing)}")
    return path, results, tally


def pair_with_reference(results: list[dict], source, recipe: Recipe) -> None:
    """Time each measured winner interleaved with its reference op, exactly as `kt check` will, and
    keep that ratio (stats.check_speedup): check then compares like with like. The tuning figures
    (flushed, CI-driven medians) stay as they are."""
    from kt_cli.check import block_ratios, paired_ratios, time_interleaved
    from kt_cli.measure import quantile
    from kt_cli.worker import Worker

    measured = [r for r in results if r["mode"] == "measured" and r["best"] is not None]
    if not measured:
        return
    with Worker(plugins.vendor(measured[0]["target"].split(":")[0]).worker_env()) as worker:
        for r in measured:
            best = r["best"]
            try:
                out = time_interleaved(worker, source, r["target"], r["device"]["index"], best.shape, best.params,
                                       recipe.problem.dtype, recipe.problem.tolerance,
                                       best.stats.get("method", "events"), [], recipe.search.timeout)
            except WorkerFailure:
                continue  # check falls back to stats.speedup
            ratios = sorted(paired_ratios(out["kernel"], out["baseline"]))
            if ratios:
                stats = {**best.stats, "check_speedup": 1.0 / quantile(ratios, 0.5),
                         "check_block_ratios": block_ratios(out)}
                r["best"] = dataclasses.replace(best, stats=stats)


def recipe_generator(recipe: Recipe):
    generators = plugins.generators()
    if recipe.generator not in generators:
        raise BadInput(f"{recipe.path}: kernel.generator: unknown generator {recipe.generator!r}; "
                       f"must be one of: {', '.join(sorted(generators))}")
    return generators[recipe.generator]


def kernel_source(recipe: Recipe, plans: list, out_dir: Path):
    """The generator's kernel module; a generator that declares `needs_context` gets a BuildContext."""
    generator = recipe_generator(recipe)
    if getattr(generator, "needs_context", False):
        return generator.build(recipe.kernel, recipe.path, context=BuildContext(recipe, tuple(plans), out_dir))
    return generator.build(recipe.kernel, recipe.path)


def run_studies(recipe: Recipe, requested_targets: tuple[str, ...], storage_url: str, shared: bool,
                progress=None, source=None):
    """Drive every (target, problem) study of the recipe to its budget in this process (beside any others
    sharing `storage_url`). Returns (source, plans, [(plan, shape, study)], tally)."""
    from kt_cli import scale, search

    plans = plan_targets(recipe, requested_targets)
    source = source or kernel_source(recipe, plans, Path(recipe.output_dir))
    shapes = list(recipe.problem.shapes)
    evaluator = Evaluator(source, recipe, list(recipe.problem.verify_shapes), recipe.search.timeout)
    tally = Tally()
    started = time.perf_counter()
    try:
        info = evaluator.probe(shapes)
        spaces = {}
        for plan in plans:
            space = build_space(recipe, info["space"], info["constraints"], plan.spec, set(shapes[0]))
            for shape in shapes:
                valid = check_feasible(space, shape, plan.spec.properties, recipe.problem.dtype_bytes,
                                       f"{recipe.path}: search.space for {plan.spec.name}")
                spaces[(plan.spec.name, shape_key(shape))] = (space, valid if space.size() <= 200_000 else None)
        store = search.open_storage(storage_url)
        source_hash = source.sha256()
        studies = []
        for plan in plans:
            for shape in shapes:
                space, valid = spaces[(plan.spec.name, shape_key(shape))]

                def on_result(result, _plan=plan, _shape=shape):
                    tally.add(result)
                    plugins.load_plugins().hook.kt_trial_finished(result=result)
                    if progress:
                        progress(tally, _plan, _shape, recipe.search.trials)

                run = search.StudyRun(
                    study_name(recipe, plan, shape, source_hash), store, space,
                    env=lambda p, _shape=shape, _plan=plan: constraint_env(
                        p, _shape, _plan.spec.properties, recipe.problem.dtype_bytes),
                    evaluate=lambda p, _plan=plan, _shape=shape: evaluator.evaluate(_plan, _shape, p),
                    invalid_result=lambda p, why, _plan=plan, _shape=shape: TrialResult(
                        "invalid", p, _plan.spec.name, _shape, _plan.mode, message=why),
                    budget=recipe.search.trials, sampler=recipe.search.sampler,
                    seed=scale.sampler_seed(recipe.search.seed) if shared else recipe.search.seed,
                    on_result=on_result, worker=scale.whoami(plan), seeds=tuple(info.get("seeds", ())))
                studies.append((plan, shape, run.run(valid, evaluator.in_flight)))
                tally.found_complete = tally.found_complete and run.found_complete
    finally:
        tally.wall_seconds = time.perf_counter() - started
        tally.device_busy_seconds = evaluator.device_busy_seconds
        evaluator.close()
    return source, plans, studies, tally
