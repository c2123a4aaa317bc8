"""`kt serve`'s actions on the keeper of this Python and torch: start it, ask how it is, stop it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from kt_cli.errors import EnvironmentProblem
from kt_cli.resident.identity import DIR_ENV, directory, key, paths, private_directory
from kt_cli.resident.keeper import READY_TIMEOUT_S
from kt_cli.resident.lease import ask


def _once(request: str) -> dict | None:
    answered = ask(request)
    if answered is None:
        return None
    answered[0].close()
    return answered[1]


def status() -> dict | None:
    """The keeper's description (keeper.Keeper.describe), or None where none runs."""
    return _once("status")


def stop() -> dict | None:
    """Ask the keeper to end: at once without leases, else once the last one ends (it lends no more).
    Its description as it was, or None where none runs."""
    return _once("stop")


def launch(idle: float, spares: int) -> tuple[dict, bool]:
    """Start a keeper in a session of its own (keeping at most `spares` readied device workers and judges)
    and wait until its fork server has imported torch. Returns (its description, whether this call started
    it)."""
    running = status()
    if running is not None:
        return running, False
    folder = private_directory(make=True)
    if folder is None:
        raise EnvironmentProblem(f"kt serve: {directory()} cannot hold its sockets (it must be yours, writable by "
                                 f"nobody else, and short); set {DIR_ENV} to such a directory")
    server_key = key()
    files = paths(folder, server_key)
    # the keeper imports this kt, wherever it was imported from here (an uninstalled checkout too)
    here = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["kt_cli"].__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
    with open(files["log"], "w") as log:
        keeper = subprocess.Popen(
            [sys.executable, "-m", "kt_cli.resident.keeper", "--dir", folder, "--key", server_key, "--idle", str(idle),
             "--spares", str(spares)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, start_new_session=True, text=True,
            env=env)
    line = _first_line(keeper)
    keeper.stdout.close()
    if line.startswith("ready "):
        return json.loads(line[len("ready "):]), True
    if line == "running":  # another `kt serve` started one meanwhile: its description once it is ready
        return _when_ready(), False
    raise EnvironmentProblem(f"kt serve: the resident server did not start ({line or 'no answer'}); "
                             f"its log: {files['log']}")


def _when_ready() -> dict:
    import time

    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        info = status()
        if info is not None:
            return info
        time.sleep(0.2)
    raise EnvironmentProblem(f"kt serve: another `kt serve` is starting the resident server and it was not ready "
                             f"after {READY_TIMEOUT_S:g} s; see `kt serve --status`")


def _first_line(keeper: subprocess.Popen) -> str:
    import selectors

    with selectors.DefaultSelector() as waiting:
        waiting.register(keeper.stdout, selectors.EVENT_READ)
        if not waiting.select(READY_TIMEOUT_S):
            keeper.kill()
            return f"nothing after {READY_TIMEOUT_S:g} s"
    return keeper.stdout.readline().strip()
