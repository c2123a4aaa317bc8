"""`kt tune`: search, verify and time a recipe's kernel; write the artifact."""

from __future__ import annotations

import sys

import click

from kt_cli.commands.output import emit_json, flag, note
from kt_cli.recipe import limits


def progress_line(tally, key) -> str:
    """`[target problem] n/budget | outcomes | best | eta` for one study (kt_cli.search.tally)."""
    from kt_cli.reports.format import duration, outcomes, seconds

    study = tally.studies[key]
    eta = tally.eta_seconds()
    ends = "eta -" if eta is None else "eta " + duration(eta) if eta else "done"
    return (f"[{' '.join(key)}] {study.evaluated}/{study.budget} | {outcomes(study.kinds) or 'nothing yet'} | "
            f"best {seconds(study.best, study.mode)} | {ends}")


def progress_printer():
    """Progress on stderr: on a terminal one line per study, rewritten in place; elsewhere a line per
    evaluated candidate. A study opened with earlier runs' trials first says how far those got."""
    import threading

    interactive = sys.stderr.isatty()
    state = {"last": None, "seen": set()}
    lock = threading.Lock()  # studies run side by side: their lines must not interleave

    def show(tally, key):
        with lock:
            _show(tally, key)

    def _show(tally, key):
        from kt_cli.reports.format import seconds

        study = tally.studies[key]
        moment = (key, study.evaluated, study.best)
        # Off a terminal, points pruned by a constraint only show in the next line's counts (a space
        # its constraints nearly fill would otherwise print a line per point).
        if moment == state["last"] and not interactive:
            return
        if interactive and state["last"] is not None and state["last"][0] != key:
            click.echo("", err=True)  # the study before keeps its last line
        resuming = key not in state["seen"] and study.earlier
        state["seen"].add(key)
        state["last"] = moment
        if resuming:
            click.echo(f"[{' '.join(key)}] resuming: {study.earlier} of {study.budget} done, best "
                       f"{seconds(study.best, study.mode)}", err=True)
        elif interactive:
            click.echo("\r" + progress_line(tally, key)[:160].ljust(160), nl=False, err=True)
        else:
            click.echo(progress_line(tally, key), err=True)

    return show


def checked(check):
    """A click callback that checks a flag's value with `check(value, "--flag")` (kt_cli.recipe.limits):
    a flag and the recipe key it overrides refuse the same values with the same message."""
    return lambda ctx, param, value: value if value is None else check(value, param.opts[0])


@click.command()
@click.argument("recipe")
@click.option("--target", "targets", multiple=True, metavar="VENDOR:ARCH", help="Tune for this target (repeatable).")
@click.option("--trials", type=int, callback=checked(limits.trials), help="Candidates to evaluate per target and problem.")
@click.option("--timeout", type=float, callback=checked(limits.seconds),
              help="Seconds one candidate may take before it is killed.")
@click.option("--out", "out_dir", type=click.Path(), help="Directory for the artifact (created if missing).")
@click.option("--storage", help="Optuna storage URL (default: SQLite next to the artifact).")
@click.option("--seed", type=int, callback=checked(limits.seed), help="Sampler and input seed.")
@click.option("--workers", default="1", metavar="N|auto",
              help="Worker processes sharing the study, one per GPU (auto: one per GPU present).")
@click.option("--profile", "profile", type=click.IntRange(min=0), default=0, metavar="K",
              help="Profile the best K candidates of each measured problem (Nsight Compute when present).")
def tune(recipe, targets, trials, timeout, out_dir, storage, seed, workers, profile):
    """Search, verify and time RECIPE's kernel; write the tuned artifact. RECIPE is a recipe file or the
    name of a library kernel (`kt kernels` lists them)."""
    from tabulate import tabulate

    from kt_cli.evaluate.pool import resident_context
    from kt_cli.reports.format import RESULT_HEADERS, result_rows
    from kt_cli.resident.lease import borrow
    from kt_cli.recipe.library import resolve_recipe
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.search.scale import worker_count
    from kt_cli.tune import tune as run

    parsed = load_recipe(resolve_recipe(recipe))
    quiet = flag("quiet")
    if resident_context() is not None:
        note(f"workers: forked from the resident fork server of `kt serve` (keeper pid {borrow()['keeper']})")
    path, results, tally = run(parsed, targets, trials, timeout, out_dir, storage, seed,
                               None if quiet else progress_printer(), worker_count(workers), profile)
    if sys.stderr.isatty() and not quiet:
        click.echo("", err=True)
    if tally.written_by is not None:
        w = tally.written_by
        if flag("json"):
            emit_json({"artifact": str(path), "written_by": w})
            return
        click.echo(f"the study is complete; the artifact was written by another process (host {w['host']}, "
                   f"pid {w['pid']}): {path}")
        return
    from kt_cli.artifact.store import read

    manifest = read(path)
    if flag("json"):
        emit_json({"artifact": str(path), "results": manifest["results"], "this_run": dict(tally.kinds)})
        return
    click.echo(tabulate(result_rows(manifest["results"]), headers=RESULT_HEADERS))
    click.echo(f"\nwrote {path}")
    click.echo("\n".join(tally.summary()) if tally.kinds else "this run: no new trials: budget already spent")
    if any(r["mode"] == "estimated" for r in manifest["results"]):
        click.echo("estimated: no device of that target here; times are cost-model estimates, not measurements")
