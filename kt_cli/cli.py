"""The `kt` command line. The only place that turns a KtError into one line and an exit code."""

from __future__ import annotations

import traceback

import click

from kt_cli import __version__
from kt_cli.errors import KtError


class KtGroup(click.Group):
    """Adds every command (kt's own and the plugins') through `kt_register_commands` the first time a
    command is looked up, and turns KtError into one line (a traceback only with --debug)."""

    _registered = False

    def _register_commands(self) -> None:
        if not self._registered:
            from kt_cli.plugins import load_plugins

            self._registered = True
            load_plugins().hook.kt_register_commands(cli=self)

    def list_commands(self, ctx):
        self._register_commands()
        return super().list_commands(ctx)

    def get_command(self, ctx, name):
        self._register_commands()
        return super().get_command(ctx, name)

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


def main():
    cli()
