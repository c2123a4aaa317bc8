"""`kt status`: how far a (possibly shared) study has come: trials done, running and failed per host
and worker process, and the best so far."""

from __future__ import annotations

from pathlib import Path

from kt_cli.errors import BadInput


def find_studies(what: str, storage: str | None) -> tuple[str, list[str]]:
    """(storage URL, study names) for an artifact directory, a local run (local_study), or with
    `storage` a study name (or a prefix of names such as the recipe's name)."""
    import optuna

    from kt_cli.artifact.store import MANIFEST, read
    from kt_cli.search.scale import ARTIFACT_CLAIM
    from kt_cli.search.storage import open_storage

    if (Path(what) / MANIFEST).is_file():
        manifest = read(what)
        if storage is None and "***" in manifest["storage"]:
            raise BadInput(f"{what}: the artifact records its storage without the password "
                           f"({manifest['storage']}); pass --storage URL")
        storage = storage or manifest["storage"]
        prefix = f"{manifest['name']}|{manifest['kernel']['source_sha256'][:12]}|"
        wanted = lambda name: name.startswith(prefix)  # noqa: E731
    elif storage is None:
        storage, name = local_study(what)
        wanted = lambda study: study.startswith(name + "|")  # noqa: E731
    else:
        wanted = lambda name: name == what or name.startswith(what + "|")  # noqa: E731
    names = [s.study_name for s in optuna.get_all_study_summaries(open_storage(storage), include_best_trial=False)
             if not s.study_name.startswith(ARTIFACT_CLAIM)]
    found = sorted(n for n in names if wanted(n))
    if not found:
        listed = ", ".join(sorted(names)[:10]) or "none"
        raise BadInput(f"{what}: no study of that name in {storage}; studies there: {listed}")
    return storage, found


def local_study(what: str) -> tuple[str, str]:
    """(storage URL, name) of the SQLite study kt tune keeps next to a local run's artifact, found by the
    artifact's path (NAME.kt, written or not yet), the recipe (a file or a library kernel's name) or the
    name alone (in the default output directory)."""
    from kt_cli.recipe.library import library_recipes, resolve_recipe
    from kt_cli.recipe.parse import DEFAULT_OUTPUT_DIR, load_recipe

    path = Path(what)
    if path.suffix == ".kt":
        directory, name = path.parent, path.stem
    elif path.suffix == ".toml" or what in library_recipes():
        recipe = load_recipe(resolve_recipe(what))
        directory, name = recipe.output_dir, recipe.name
    else:
        directory, name = Path(DEFAULT_OUTPUT_DIR), what
    db = directory / f"{name}.study.db"
    if not db.is_file():
        raise BadInput(f"{what}: no artifact there and no local study at {db}; give the artifact (NAME.kt), the "
                       f"recipe, or a study name with --storage URL")
    return f"sqlite:///{db.resolve()}", name


def summarize(study) -> dict:
    """Per (host, pid): evaluated, failed (a failed candidate or a worker that died mid-trial) and
    running trials; and the best ok trial so far."""
    import optuna

    from kt_cli.search.storage import trial_result

    state = optuna.trial.TrialState
    workers: dict = {}
    best = None
    for t in study.get_trials(deepcopy=False):
        if "duplicate_of" in t.user_attrs or "skipped" in t.user_attrs or t.state == state.WAITING:
            continue
        result = trial_result(t)
        if result is not None and result.failure_kind == "invalid":
            continue
        row = workers.setdefault((t.user_attrs.get("host", "?"), t.user_attrs.get("pid", "?")),
                                 {"done": 0, "failed": 0, "running": 0})
        if t.state == state.RUNNING:
            row["running"] += 1
        elif t.state == state.FAIL:
            row["failed"] += 1
            row["done"] += result is not None
        elif t.state == state.PRUNED:  # the cost model's prediction: evaluated, neither failed nor measured
            row["done"] += result is not None
        elif t.state == state.COMPLETE:
            row["done"] += 1
            if best is None or t.value < best.value:
                best = t
    return {
        "study": study.study_name,
        "budget": study.user_attrs.get("budget"),
        "workers": [{"host": h, "pid": p, **row} for (h, p), row in sorted(workers.items(), key=str)],
        "best": None if best is None else {"value": best.value, "mode": trial_result(best).mode,
                                           "params": best.params, "trial": best.number,
                                           "host": best.user_attrs.get("host"), "pid": best.user_attrs.get("pid")},
    }
