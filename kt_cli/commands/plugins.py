"""`kt plugins`: the plugins loaded and the hooks each implements."""

from __future__ import annotations

import click

from kt_cli.commands.output import emit_json


@click.command(name="plugins")
@click.option("--json", "as_json", is_flag=True)
def plugins_cmd(as_json):
    """List loaded plugins and the hooks each implements."""
    from tabulate import tabulate

    from kt_cli.plugins import describe_plugins

    rows = describe_plugins()
    if as_json:
        emit_json(rows)
        return
    click.echo(tabulate([[r["name"], r["version"], ", ".join(r["hooks"])] for r in rows],
                        headers=["plugin", "version", "hooks"]))
