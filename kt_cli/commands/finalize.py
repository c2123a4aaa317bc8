"""`kt finalize`: time a static artifact's shortlists on the device here; write back the winners."""

from __future__ import annotations

import click

from kt_cli.commands.output import emit_json, flag, note


@click.command()
@click.argument("artifact", type=click.Path())
@click.option("--device", "device_index", type=click.IntRange(min=0), metavar="N",
              help="Index of the device to time on (default: the first of a target the artifact estimated).")
def finalize(artifact, device_index):
    """Verify and time the shortlisted configs of ARTIFACT's estimated results on a present device of their
    target; the fastest verified config of each becomes a measured result (the artifact is rewritten
    atomically)."""
    from tabulate import tabulate

    from kt_cli.artifact.finalize import finalize_artifact
    from kt_cli.reports.format import params, seconds

    def progress(entry, row):
        timed = seconds(row["measured_seconds"]) if "measured_seconds" in row else row["failure"]
        note(f"[{entry['target']} {entry['shape_key']}] {params(row['params'])}: {timed}")

    done = finalize_artifact(artifact, device_index, progress=progress)
    if flag("json"):
        emit_json({"artifact": artifact, "finalized": done})
        return
    if not done:
        click.echo(f"{artifact}: nothing to finalize: every result is measured")
        return
    rows = [[e["target"], e["shape_key"], e["device"]["name"], params(t["params"]),
             seconds(t["estimated_seconds"], "estimated"),
             seconds(t["measured_seconds"], "measured") if "measured_seconds" in t else f"{t['failure']}: "
             f"{t['message'][:60]}", "<- winner" if t["params"] == e["params"] else ""]
            for e in done for t in e["shortlist"]]
    click.echo(tabulate(rows, headers=["target", "problem", "device", "params", "estimate", "measured", ""]))
    note(f"wrote {artifact}: {len(done)} result(s) now measured")
