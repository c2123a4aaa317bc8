"""`kt status`: how far a (possibly shared) study has come."""

from __future__ import annotations

import click

from kt_cli.commands.output import emit_json, flag
from kt_cli.reports.status import find_studies, summarize


@click.command()
@click.argument("study_or_artifact")
@click.option("--storage", help="Optuna storage URL (default: the one the artifact records).")
def status(study_or_artifact, storage):
    """Trials done, running and failed per host and worker, and the best so far, of a study that may
    still be running. STUDY_OR_ARTIFACT: an artifact (NAME.kt, written or not yet), a recipe (a file or
    a library kernel's name) or a run's name, found next to the artifact; with --storage, a study name."""
    import optuna
    from tabulate import tabulate

    from kt_cli.recipe.destinations import check_storage
    from kt_cli.reports.format import params, seconds
    from kt_cli.search.storage import open_storage

    if storage is not None:
        check_storage(storage)  # a typo in the scheme, or a file that is no study, is one line
    url, names = find_studies(study_or_artifact, storage)
    store = open_storage(url)
    summaries = [summarize(optuna.load_study(study_name=n, storage=store)) for n in names]
    if flag("json"):
        emit_json(summaries)
        return
    for s in summaries:
        done = sum(w["done"] for w in s["workers"])
        click.echo(f"{s['study']}: evaluated {done}" + (f" of {s['budget']}" if s["budget"] else ""))
        click.echo(tabulate([[w["host"], w["pid"], w["done"], w["failed"], w["running"]] for w in s["workers"]],
                            headers=["host", "pid", "done", "failed", "running"]))
        best = s["best"]
        click.echo("best: none yet\n" if best is None else
                   f"best: {seconds(best['value'], best['mode'])}  {params(best['params'])}  (trial {best['trial']}, "
                   f"{best['host']} pid {best['pid']})\n")
