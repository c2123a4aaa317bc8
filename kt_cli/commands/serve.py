"""`kt serve`: a resident fork server for the kt processes of this Python and torch (kt_cli.resident)."""

from __future__ import annotations

import time

import click

from kt_cli.commands.output import emit_json, flag, note
from kt_cli.errors import BadInput

DEFAULT_IDLE_S = 3600.0
DEFAULT_SPARES = 8  # a one-GPU tune asks for 2 (its device's worker and judge), `--workers 4` for 8


def _describe(info: dict) -> str:
    up = time.time() - info["started"]
    idle = "never ends on its own" if not info["idle"] else f"ends after {info['idle']:g} s without a kt process"
    return (f"resident fork server: keeper pid {info['keeper']}, server pid {info['server']}, up {up:.0f} s "
            f"(torch imported in {info['ready_s']:g} s), {info['leases']} kt process(es) now, "
            f"{info.get('spares', 0)} spare device worker(s) ready, {idle}")


@click.command()
@click.option("--idle", type=float, default=DEFAULT_IDLE_S, show_default=True,
              help="Seconds without any kt process using it after which it ends; 0: only `kt serve --stop` ends it.")
@click.option("--spares", type=int, default=DEFAULT_SPARES, show_default=True,
              help="Device workers and judges kept readied (a device context each, a few hundred MB of device "
                   "memory) for the devices kt commands used; 0: none.")
@click.option("--stop", "stopping", is_flag=True, help="End it (once the kt processes using it have ended).")
@click.option("--status", "asking", is_flag=True, help="Say whether one runs, and how it is.")
def serve(idle, spares, stopping, asking):
    """Keep a fork server with torch imported for later kt commands of this Python and torch: their
    workers are forked there instead of each command importing torch anew (1.4-2.1 s of a `kt tune`'s
    start on an H200 host, 4-5 s on a cold one). From the second command on that uses a device, that
    device's worker and judge wait readied there too (its context made: about a second). Starts it in the
    background and returns once it is ready; every kt process finds it by itself (KT_RESIDENT=0 makes one go
    without)."""
    from kt_cli.resident import control

    if idle < 0 or idle != idle:
        raise BadInput(f"--idle: {idle:g} is not a number of seconds >= 0; give e.g. --idle 3600 (0: until --stop)")
    if spares < 0:
        raise BadInput(f"--spares: {spares} is below 0; give e.g. --spares {DEFAULT_SPARES} (0: none)")
    if stopping and asking:
        raise BadInput("--stop and --status: give one of them")
    if stopping or asking:
        info = control.stop() if stopping else control.status()
        if flag("json"):
            emit_json(info)
        elif info is None:
            click.echo("no resident fork server runs for this Python and torch")
        elif stopping:
            click.echo("stopping: " + ("now" if not info["leases"] else
                                       f"once its {info['leases']} kt process(es) end; it lends no more"))
        else:
            click.echo(_describe(info))
        return
    info, started = control.launch(idle, spares)
    if flag("json"):
        emit_json({**info, "started_now": started})
        return
    click.echo(("started " if started else "already running: ") + _describe(info))
    if started:
        note("kt commands of this Python and torch fork their workers there from now; `kt serve --stop` ends it")
