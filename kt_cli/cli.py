"""The `kt` command line. The only place that turns a KtError into one line and an exit code."""

from __future__ import annotations

import re
import traceback

import click

from kt_cli import __version__
from kt_cli.errors import BadInput, KtError


class KtGroup(click.Group):
    """Adds every command (kt's own and the plugins') through `kt_register_commands` the first time a
    command is looked up, and turns KtError into one line (a traceback only with --debug)."""

    _registered = False

    def _register_commands(self) -> None:
        if not self._registered:
            from kt_cli.plugins import load_plugins

            self._registered = True
            load_plugins().hook.kt_register_commands(cli=self)

    def add_command(self, cmd, name=None):
        """Every command, kt's own and the plugins', also takes the global flags after its name
        (`kt tune --debug` as well as `kt --debug tune`), unless it defines a flag of that name itself."""
        taken = {opt for param in cmd.params for opt in param.opts}
        cmd.params.extend(flag for flag in global_flags() if not set(flag.opts) & taken)
        super().add_command(cmd, name)

    def list_commands(self, ctx):
        self._register_commands()
        return super().list_commands(ctx)

    def get_command(self, ctx, name):
        self._register_commands()
        return super().get_command(ctx, name)

    def make_context(self, info_name, args, parent=None, **extra):
        """kt's own options (`kt --bogus`), and a NUL byte in any argument, get one line too."""
        try:
            _refuse_nul_bytes(args)
            return super().make_context(info_name, args, parent=parent, **extra)
        except (click.UsageError, KtError) as exc:
            _report(exc)
            raise click.exceptions.Exit(2) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (KtError, click.UsageError) as exc:  # a command's usage errors (a bad flag) are bad input too
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            _report(exc)
            ctx.exit(getattr(exc, "exit_code", 2))


def _refuse_nul_bytes(args) -> None:
    """No argument reaches a path or a name with a NUL byte in it; the error names the flag."""
    for i, arg in enumerate(args or ()):
        if "\x00" in arg:
            flag = arg.split("=")[0] if arg.startswith("--") and "=" in arg else \
                args[i - 1] if i and args[i - 1].startswith("-") else f"argument {i + 1}"
            raise BadInput(f"{flag}: {arg!r} contains a NUL byte; remove it")


def _report(exc: Exception) -> None:
    """One line on stderr: `kt: error: ...`, control characters escaped so that it stays one line."""
    if isinstance(exc, click.UsageError):
        command = exc.ctx.command_path if exc.ctx else "kt"
        message = f"{exc.format_message()} ('{command} --help' lists the options)"
    else:
        message = str(exc)
    message = re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group(0))[1:-1], message)
    click.echo(f"kt: error: {message}", err=True)


GLOBAL_FLAGS = (("--debug", "debug", "Show tracebacks."),
                ("--quiet", "quiet", "Print results only: no progress, notes or 'wrote' lines."),
                ("--json", "json", "Print results as JSON."))


def _set_flag(ctx, param, value) -> None:
    """A global flag, before or after a command's name: set for the whole invocation (ctx.obj, which a
    command's context shares with kt's)."""
    if value:
        ctx.ensure_object(dict)[param.name] = True


def global_flags() -> list[click.Option]:
    return [click.Option([opt, name], is_flag=True, expose_value=False, callback=_set_flag, help=text)
            for opt, name, text in GLOBAL_FLAGS]


@click.group(cls=KtGroup, params=global_flags())
@click.version_option(__version__, prog_name="kt")
@click.pass_context
def cli(ctx):
    """kt: tune GPU kernels across vendors."""
    ctx.ensure_object(dict)  # the global flags given so far (global_flags); a command's own add to it


def main():
    from kt_cli.hand_offs import quick_hand_offs
    from kt_cli.resident.lease import allow

    quick_hand_offs()
    allow()  # a kt command may fork its workers from `kt serve`'s resident server
    cli()
