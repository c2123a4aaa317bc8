"""`kt rocprof-time`: time every kernel a command launches with rocprofv3's kernel trace."""

from __future__ import annotations

import click


@click.command(name="rocprof-time", context_settings={"ignore_unknown_options": True})
@click.option("--kernel", "name_contains", default="", help="Only kernels whose name contains this.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def rocprof_time(name_contains, command):
    """Run COMMAND under rocprofv3 --kernel-trace (AMD) and print each kernel's dispatch times."""
    import json

    from tabulate import tabulate

    from kt_cli.commands.output import flag
    from kt_cli.reports.format import seconds
    from kt_cli.evaluate.timing import summarize
    from vendor_amd.rocprof import durations, trace_command

    rows = []
    for name, times in sorted(durations(trace_command(list(command)), name_contains).items()):
        stats = summarize(times, "rocprofv3")
        rows.append({"kernel": name, **stats.to_json()})
    if flag("json"):  # kt's global --json, before or after the command's name
        click.echo(json.dumps(rows, indent=2))
        return
    click.echo(tabulate([[r["kernel"][:60], r["calls"], seconds(r["median"]), seconds(r["p10"]), seconds(r["p90"])]
                         for r in rows], headers=["kernel", "calls", "median", "p10", "p90"]))
