"""kt's built-in commands, one module each, registered through `kt_register_commands` like any
third-party plugin's commands."""

from kt_cli.hookspecs import hookimpl


@hookimpl
def kt_register_commands(cli):
    from kt_cli.commands.check import check
    from kt_cli.commands.compare import compare
    from kt_cli.commands.devices import devices
    from kt_cli.commands.estimate import estimate
    from kt_cli.commands.export import export
    from kt_cli.commands.finalize import finalize
    from kt_cli.commands.init import init
    from kt_cli.commands.kernels import kernels
    from kt_cli.commands.plugins import plugins_cmd
    from kt_cli.commands.serve import serve
    from kt_cli.commands.show import show
    from kt_cli.commands.status import status
    from kt_cli.commands.tune import tune

    for command in (tune, init, kernels, show, check, compare, export, finalize, estimate, status, devices, plugins_cmd,
                    serve):
        cli.add_command(command)
