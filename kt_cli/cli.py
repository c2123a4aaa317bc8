"""The `kt` command line. The only place that turns a KtError into one line and an exit code."""

from __future__ import annotations

import json
import sys
import traceback

import click

from kt_cli import __version__
from kt_cli.errors import KtError


class KtGroup(click.Group):
    """Adds plugin commands lazily and turns KtError into one line (a traceback only with --debug)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KtError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            click.echo(f"kt: error: {exc}", err=True)
            ctx.exit(exc.exit_code)


@click.group(cls=KtGroup)
@click.version_option(__version__, prog_name="kt")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.pass_context
def cli(ctx, debug):
    """kt: tune GPU kernels across vendors."""
    ctx.obj = {"debug": debug}


def _emit_json(data) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True, default=str))


def _progress_printer():
    interactive = sys.stderr.isatty()
    state = {"last": None}

    def show(tally, plan, shape, budget):
        from kt_cli.format import seconds
        from kt_cli.types import shape_key

        kinds = " ".join(f"{k} {n}" for k, n in sorted(tally.kinds.items()))
        best = tally.best.get((plan.spec.name, shape_key(shape)))
        line = (f"[{plan.spec.name} {shape_key(shape)}] evaluated {tally.done} | {kinds} | "
                f"best {seconds(best, plan.mode)}")
        if interactive:
            click.echo("\r" + line[:160].ljust(160), nl=False, err=True)
        elif line != state["last"]:
            click.echo(line, err=True)
        state["last"] = line

    return show


@cli.command()
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--target", "targets", multiple=True, metavar="VENDOR:ARCH", help="Tune for this target (repeatable).")
@click.option("--trials", type=int, help="Candidates to evaluate per target and problem.")
@click.option("--timeout", type=float, help="Seconds one candidate may take before it is killed.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Directory for the artifact.")
@click.option("--storage", help="Optuna storage URL (default: SQLite next to the artifact).")
@click.option("--seed", type=int, help="Sampler and input seed.")
@click.option("--workers", default="1", metavar="N|auto",
              help="Worker processes sharing the study, one per GPU (auto: one per GPU present).")
@click.option("--profile", "profile", type=click.IntRange(min=0), default=0, metavar="K",
              help="Profile the best K candidates of each measured problem (Nsight Compute when present).")
def tune(recipe, targets, trials, timeout, out_dir, storage, seed, workers, profile):
    """Search, verify and time RECIPE's kernel; write the tuned artifact."""
    from tabulate import tabulate

    from kt_cli.format import RESULT_HEADERS, result_rows
    from kt_cli.recipe import load_recipe
    from kt_cli.scale import worker_count
    from kt_cli.tune import tune as run

    parsed = load_recipe(recipe)
    path, results, tally = run(parsed, targets, trials, timeout, out_dir, storage, seed, _progress_printer(),
                               worker_count(workers), profile)
    if sys.stderr.isatty():
        click.echo("", err=True)
    if tally.written_by is not None:
        w = tally.written_by
        click.echo(f"the study is complete; the artifact was written by another process (host {w['host']}, "
                   f"pid {w['pid']}): {path}")
        return
    from kt_cli.artifact import read

    manifest = read(path)
    click.echo(tabulate(result_rows(manifest["results"]), headers=RESULT_HEADERS))
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(tally.kinds.items()))
    click.echo(f"\nwrote {path}  (this run: {kinds or 'no new trials: budget already spent'}; {tally.summary()})")
    if any(r["mode"] == "estimated" for r in manifest["results"]):
        click.echo("estimated: no device of that target here; times are cost-model estimates, not measurements")


@cli.command()
@click.argument("artifact", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
def show(artifact, as_json):
    """Print a tuned artifact."""
    from tabulate import tabulate

    from kt_cli.artifact import read
    from kt_cli.format import RESULT_HEADERS, info, params, result_rows, seconds

    manifest = read(artifact)
    if as_json:
        _emit_json(manifest)
        return
    p = manifest["provenance"]
    click.echo(f"{manifest['name']}: {manifest['kernel']['generator']}/{manifest['kernel']['name']} "
               f"{manifest['dtype']}  (kt {p['kt']}, torch {p['torch']}, triton {p['triton']}, {manifest['created']})")
    click.echo(tabulate(result_rows(manifest["results"]), headers=RESULT_HEADERS))
    res = [[e["target"], e["shape_key"], e["resources"].get("registers"), e["resources"].get("shared_bytes"),
            e["resources"].get("spill_bytes"), f"{e['resources'].get('occupancy', 0):.0%}" if e["resources"] else "-",
            e["resources"].get("limiter", "-"), info(e["resources"].get("extra") or {})]
           for e in manifest["results"] if e["resources"]]
    if res:
        click.echo("\n" + tabulate(res, headers=["target", "problem", "registers", "shared B", "spill B",
                                                  "occupancy", "limited by", "vendor details"]))
    profiled = [[e["target"], e["shape_key"], seconds(p["seconds"]), params(p["params"]),
                 info({k: v for k, v in p["counters"].items() if k != "top_stalls"}),
                 ", ".join(p["counters"].get("top_stalls", []))]
                for e in manifest["results"] for p in (e.get("profile") or [])]
    if profiled:
        click.echo("\nprofiler counters (kt tune --profile)\n" + tabulate(
            profiled, headers=["target", "problem", "time", "params", "counters", "top stalls"]))


@cli.command(name="plugins")
@click.option("--json", "as_json", is_flag=True)
def plugins_cmd(as_json):
    """List loaded plugins and the hooks each implements."""
    from tabulate import tabulate

    from kt_cli.plugins import describe_plugins

    rows = describe_plugins()
    if as_json:
        _emit_json(rows)
        return
    click.echo(tabulate([[r["name"], r["version"], ", ".join(r["hooks"])] for r in rows],
                        headers=["plugin", "version", "hooks"]))


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--measure", is_flag=True, help="Also measure copy bandwidth and a bf16 GEMM rate on each device.")
def devices(as_json, measure):
    """List the GPUs present, their peak tables, and the targets kt can compile for."""
    from tabulate import tabulate

    from kt_cli import plugins
    from kt_cli.format import info

    found = plugins.devices()
    rows = [{"vendor": d.vendor, "index": d.index, "name": d.name, "target": d.target, **d.info,
             "peaks": plugins.vendor(d.vendor).device_peaks(d)} for d in found]
    if measure:
        from kt_cli.worker import Worker, WorkerFailure

        for row in rows:
            with Worker() as worker:
                try:
                    row["measured"] = worker.call("ceilings", {"target_name": row["target"], "index": row["index"]}, 600)
                except WorkerFailure as exc:
                    row["measured"] = {"error": f"{exc.kind}: {exc.message}"}
    if as_json:
        _emit_json({"devices": rows, "targets": sorted(plugins.targets())})
        return
    if rows:
        table = []
        for r, d in zip(rows, found):
            line = [r["index"], r["name"], r["target"], f"{r['peaks'].get('bfloat16', 0) / 1e12:.0f}",
                    f"{r['peaks'].get('dram_bytes_per_s', 0) / 1e12:.2f}"]
            m = r.get("measured", {})
            if measure:
                line += [m.get("error") or f"{m['bf16_gemm_flops_per_s'] / 1e12:.0f}",
                         "" if "error" in m else f"{m['copy_bytes_per_s'] / 1e12:.2f}"]
            table.append(line + [info(d.info)])
        headers = ["#", "device", "target", "bf16 TFLOP/s (datasheet)", "DRAM TB/s (datasheet)"]
        headers += ["bf16 GEMM TFLOP/s (measured)", "copy TB/s (measured)"] if measure else []
        click.echo(tabulate(table, headers=headers + ["details"]))
    else:
        click.echo("no GPU present: kt tunes in static mode (cross-compiled, verified on the CPU, estimated)")
    click.echo("targets: " + ", ".join(sorted(plugins.targets())))


def main():
    from kt_cli.plugins import load_plugins

    load_plugins().hook.kt_register_commands(cli=cli)
    cli()
