"""`kt tune`: recipe -> kernel source -> one study per (target, problem) -> artifact."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

from kt_cli import plugins
from kt_cli.artifact import store as artifact
from kt_cli.background import InBackground
from kt_cli.errors import JobFailed
from kt_cli.evaluate.failure import WorkerFailure
from kt_cli.evaluate.detection import detect_devices_apart
from kt_cli.evaluate.pool import start_fork_server_in_background
from kt_cli.generate import kernel_source, recipe_generator
from kt_cli.recipe.destinations import check_directory, check_storage
from kt_cli.recipe.parse import Recipe
from kt_cli.search import scale
from kt_cli.search.plan import default_storage, make_storage_dir, plan_targets, study_name
from kt_cli.search.storage import import_ahead
from kt_cli.search.studies import Preparation, check_recipe_space, run_studies
from kt_cli.stamps import mark
from kt_cli.types import shape_key


def tune(recipe: Recipe, requested_targets: tuple[str, ...] = (), trials: int | None = None,
         timeout: float | None = None, out_dir: Path | None = None, storage: str | None = None,
         seed: int | None = None, progress=None, workers: int = 1, profile: int = 0):
    """Run every study of the recipe and write the artifact. Returns (artifact path, results, tally);
    `tally.written_by` names the process that wrote it when another process sharing the study did.
    Flags (trials, timeout, seed) come checked by the command line (kt_cli.recipe.limits)."""
    recipe = dataclasses.replace(
        recipe, search=dataclasses.replace(recipe.search, trials=trials or recipe.search.trials,
                                           timeout=timeout or recipe.search.timeout,
                                           seed=recipe.search.seed if seed is None else seed))
    mark("tune")
    out_dir, storage_url = destinations(recipe, out_dir, storage)
    artifact.remove_dead_writes(out_dir, recipe.name)  # a write killed last time leaves nothing behind
    shared = storage is not None or workers > 1  # processes sharing a study each get a sampler seed of their own
    generator = recipe_generator(recipe)  # an unknown generator is named before anything else
    start_fork_server_in_background()  # every worker is forked from it: it boots while devices are detected
    prepared = None
    if workers == 1 and not getattr(generator, "needs_context", False):
        # the module inspected while the devices are detected (the compile pool starts once they are)
        prepared = Preparation(recipe, kernel_source(recipe, [], out_dir))
    early = scale.EarlyWorkers(workers) if workers > 1 else None  # they start while the devices are detected
    try:
        InBackground(import_ahead)  # Optuna and its storage's imports: the devices are planned once detected
        devices = detect_devices_apart()
        plans = plan_targets(recipe, requested_targets, devices)
        mark("devices detected")
        check_recipe_space(recipe, plans)  # before any file is written
        if workers > 1:
            source = kernel_source(recipe, plans, out_dir)  # built once: workers share it (an llm loop runs once)
            studies, tally, results = _tune_in_workers(workers, recipe, requested_targets, plans, storage_url,
                                                       progress, source, early, devices)
    except BaseException:
        if prepared is not None:
            prepared.close()
        raise
    finally:
        if early is not None:
            early.cancel()  # any not ended by now: the run was refused before they had their jobs
    if workers == 1:
        source = prepared.evaluator.source if prepared is not None else kernel_source(recipe, plans, out_dir)
        source, plans, studies, tally, results = _tune_here(recipe, requested_targets, storage_url, shared,
                                                            progress, source, prepared, plans)
    if profile:
        from kt_cli.evaluate.profile import profile_results

        profile_results(results, source, recipe, profile)
    missing = _unsolved(results, tally)
    final = out_dir / f"{recipe.name}.kt"
    # Processes sharing a storage claim the artifact: only the first writes it. A re-run of a finished
    # study rewrites its own.
    if storage is not None and not tally.found_complete:
        tally.written_by = scale.claim_artifact(storage_url, [s for _, _, s in studies], final)
        if tally.written_by is not None:
            return Path(tally.written_by["path"]), results, tally
    path = artifact.write(out_dir, recipe, source, results, plans, scale.redact(storage_url))
    if storage is not None and not tally.found_complete:
        scale.artifact_written(storage_url, [s for _, _, s in studies])
    if missing:
        raise JobFailed(f"wrote {path}, but no candidate passed verification for: {'; '.join(missing)}")
    return path, results, tally


def _unsolved(results: list[dict], tally) -> list[str]:
    """The problems no candidate passed verification for; JobFailed when that is all of them."""
    missing = [f"{r['target']} {shape_key(r['shape'])}" for r in results if r["best"] is None]
    if len(missing) == len(results):
        raise JobFailed(f"no candidate passed verification for any target and problem "
                        f"({', '.join(f'{k} {n}' for k, n in sorted(tally.kinds.items()))}); last failure: "
                        f"{tally.last_failure[:300] or 'none in this run'}")
    return missing


def _tune_in_workers(workers: int, recipe: Recipe, requested_targets, plans: list, storage_url: str, progress,
                     source, early=None, devices=None):
    """The studies in `workers` processes (kt_cli.search.scale); the processes share the pairing of the
    winners with their references out (a study each in turn), each on its own device workers as the study
    ends there. A study whose best changed after its pairing is paired again here. Returns (studies, tally,
    results)."""
    names = [(plan, shape, study_name(recipe, plan, shape, source.sha256()))
             for plan in plans for shape in recipe.problem.shapes]
    make_storage_dir(storage_url)
    poll = progress and scale.storage_progress(storage_url, names, recipe.search.trials, progress)
    finish = functools.partial(collect_and_pair, recipe=recipe, source=source)
    tally = scale.run_workers(workers, run_studies, dict(recipe=recipe, requested_targets=requested_targets,
                                                         storage_url=storage_url, shared=True, source=source,
                                                         processes_on_host=workers),
                              poll, each=lambda i: {"finish": finish, "pairs": (i, workers)}, early=early,
                              devices=devices)
    mark("workers ended")
    studies = [(plan, shape, scale.load_study(name, storage_url)) for plan, shape, name in names]
    collected = artifact.collect(studies, recipe.search.shortlist)
    paired = tally.results or [None] * len(collected)
    results = [{**r, "best": p["best"]} if p is not None and _same_best(p["best"], r["best"]) else r
               for r, p in zip(collected, paired)]
    # a best found after a worker's pairing (or it ended early): paired on fresh device workers
    pair_with_reference([r for r, p in zip(results, paired) if p is None or r["best"] is not p["best"]], source, recipe)
    return studies, tally, results


def _same_best(paired, final) -> bool:
    """Whether the worker that paired the study paired its final best: the other workers' trials that
    ended after its pairing found none better. (Comparing trial counts instead re-paired every study on fresh
    device workers whenever a trial ended late: 17 s after the last trial on a 4x H100 host.)"""
    if paired is None or final is None:
        return paired is final
    return (paired.params, paired.value) == (final.params, final.value)


def _tune_here(recipe: Recipe, requested_targets, storage_url: str, shared: bool, progress, source,
               prepared=None, plans=None):
    """The studies in this process (of `plans`, when tune() has planned them: devices detected once);
    the winners paired with their reference by the tuning's own device workers while they are up.
    Returns (source, plans, studies, tally, results)."""
    finish = functools.partial(collect_and_pair, recipe=recipe, source=source)
    source, plans, studies, tally = run_studies(recipe, requested_targets, storage_url, shared, progress,
                                                source=source, finish=finish, prepared=prepared, plans=plans)
    return source, plans, studies, tally, tally.results


def collect_and_pair(plan, shape, study, evaluator, recipe: Recipe, source) -> dict:
    """A study's result (kt_cli.artifact.collect), its measured winner paired with its reference (on
    `evaluator`'s device workers; None: fresh ones)."""
    (result,) = artifact.collect([(plan, shape, study)], recipe.search.shortlist)
    pair_with_reference([result], source, recipe, evaluator)
    return result


def destinations(recipe: Recipe, out_dir: Path | None, storage: str | None) -> tuple[Path, str]:
    """The artifact directory and the storage URL of a run, checked (kind, writable, a storage kt can
    open) before any work; neither is created here."""
    if out_dir is not None:
        out_dir = check_directory(Path(out_dir), "--out")
    else:
        out_dir = check_directory(Path(recipe.output_dir), recipe.where("output.dir"))
    return out_dir, check_storage(storage) if storage is not None else default_storage(recipe, out_dir)


def pair_with_reference(results: list[dict], source, recipe: Recipe, evaluator=None) -> None:
    """Time each measured winner interleaved with its reference op, exactly as `kt check` will, and
    keep that ratio (stats.check_speedup): check then compares like with like. The tuning figures
    (flushed, CI-driven medians) stay as they are. With the tuning's `evaluator`, its device worker
    and judge do it (they are up and hold the problem's module); else fresh ones start."""
    from kt_cli.reports.check import block_ratios, time_interleaved
    from kt_cli.evaluate.isolated import device_workers
    from kt_cli.evaluate.timing import paired_ratios, quantile

    measured = [r for r in results if r["mode"] == "measured" and r["best"] is not None]
    if not measured:
        return
    spec = plugins.target(measured[0]["target"])
    if evaluator is not None:
        workers, owned = (evaluator.device_pool(spec.vendor), evaluator.device_judge(spec)), ()
    else:
        workers = owned = device_workers(spec, recipe.search.timeout)
    try:
        for r in measured:
            best = r["best"]
            try:
                out = time_interleaved(workers, source, r["target"], r["device"]["index"], best.shape, best.params,
                                       recipe.problem.dtype, recipe.problem.tolerance,
                                       best.stats.get("method", "events"), [], recipe.search.timeout)
            except WorkerFailure as exc:  # check falls back to stats.speedup; the artifact says why
                why = f"{exc.kind}: {exc.message.splitlines()[0][:300] if exc.message else ''}"
                r["best"] = dataclasses.replace(best, stats={**best.stats, "check_pairing_failed": why})
                continue
            ratios = sorted(paired_ratios(out["kernel"], out["baseline"]))
            if ratios:
                stats = {**best.stats, "check_speedup": 1.0 / quantile(ratios, 0.5),
                         "check_block_ratios": block_ratios(out)}
                r["best"] = dataclasses.replace(best, stats=stats)
    finally:
        for process in owned:
            process.stop()
