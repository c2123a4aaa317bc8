"""`kt plugins`: the plugins loaded and the hooks each implements."""

from __future__ import annotations

import click

from kt_cli.commands.output import emit_json, flag


@click.command(name="plugins")
def plugins_cmd():
    """List loaded plugins and the hooks each implements."""
    from tabulate import tabulate

    from kt_cli.plugins import describe_plugins

    rows = describe_plugins()
    if flag("json"):
        emit_json(rows)
        return
    click.echo(tabulate([[r["name"], r["version"], ", ".join(r["hooks"])] for r in rows],
                        headers=["plugin", "version", "hooks"]))
