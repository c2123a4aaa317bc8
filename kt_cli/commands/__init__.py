"""kt's built-in report commands (compare, check, export), registered through `kt_register_commands`
like any third-party plugin's commands."""

from kt_cli.hookspecs import hookimpl


@hookimpl
def kt_register_commands(cli):
    from kt_cli.commands.check import check
    from kt_cli.commands.compare import compare
    from kt_cli.commands.export import export

    for command in (compare, check, export):
        cli.add_command(command)
