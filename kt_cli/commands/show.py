"""`kt show`: a tuned artifact, its winners, resources and profiler counters."""

from __future__ import annotations

import click

from kt_cli.commands.output import emit_json, flag


@click.command()
@click.argument("artifact", type=click.Path())
def show(artifact):
    """Print a tuned artifact."""
    from tabulate import tabulate

    from kt_cli.artifact.store import read
    from kt_cli.reports.format import RESULT_HEADERS, info, outcomes, params, result_rows, seconds

    manifest = read(artifact)
    if flag("json"):
        emit_json(manifest)
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
    tried = [[e["target"], e["shape_key"], outcomes(e.get("failures") or {})] for e in manifest["results"]]
    click.echo("\ncandidates (invalid: pruned by a constraint or a resource limit, not counted)\n"
               + tabulate(tried, headers=["target", "problem", "outcomes"]))
    profiled = [[e["target"], e["shape_key"], seconds(p["seconds"]), params(p["params"]),
                 info({k: v for k, v in p["counters"].items() if k != "top_stalls"}),
                 ", ".join(p["counters"].get("top_stalls", []))]
                for e in manifest["results"] for p in (e.get("profile") or [])]
    if profiled:
        click.echo("\nprofiler counters (kt tune --profile)\n" + tabulate(
            profiled, headers=["target", "problem", "time", "params", "counters", "top stalls"]))
