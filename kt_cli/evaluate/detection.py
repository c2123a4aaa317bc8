"""The devices present, detected in a worker process rather than in kt's own.

Detecting a GPU imports torch and initialises its runtime: 4 s of `kt tune`'s start on the H100 hosts
(torch's import alone 3.7 s there), during which kt's process could do nothing else. A worker forked
from kt's fork server finds torch already imported by the server (the resident one of `kt serve`, or one
that boots in a process of its own from the start of the run); meanwhile kt's process imports what its
studies need (Optuna, SQLAlchemy) in a thread. A whole `kt tune` then never imports torch in kt's
process."""

from __future__ import annotations

from kt_cli.evaluate.failure import WorkerFailure
from kt_cli.evaluate.pool import STARTUP_TIMEOUT, WorkerPool


def detect_devices_apart() -> list:
    """Every vendor's devices present now (kt_cli.plugins.devices), as a fresh worker finds them. A worker
    that cannot say (it crashed, a vendor's detection raised there) leaves it to this process, where the
    same detection raises its own error or finds what it finds."""
    from kt_cli import plugins

    pool = WorkerPool(1, {})
    try:
        found = pool.call("detect_devices", {}, STARTUP_TIMEOUT)
    except WorkerFailure:
        found = None
    finally:
        pool.stop()
    return plugins.devices() if found is None else found
