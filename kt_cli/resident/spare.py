"""A spare device worker or judge of `kt serve`, in its own process: forked by the keeper from its fork
server for a (role, target, device setup) a kt process asked for before, it takes that process's sys.path
and environment, readies the device (kt_cli.evaluate.requests.ready_spare: the runtime's context, Triton's
key) and waits. Taken over by a kt process (kt_cli.resident.adoption), it first checks that what it
imported is what that process's own worker would import now (every imported file unchanged, no package
added to or removed from a sys.path directory since); then it becomes that process's worker
(kt_cli.evaluate.pool.serve_requests), else it answers `stale` and ends, and the kt process forks a worker
as it would without. The keeper closing the connection ends a spare nobody took."""

from __future__ import annotations

import base64
import os
import pickle
import sys
import time


def fingerprint() -> dict:
    """Every imported module's file and every sys.path directory, with their modification times: a
    changed file, or a package installed or removed, changes it."""
    seen: dict = {}
    places = [getattr(m, "__file__", None) for m in list(sys.modules.values())] + [p for p in sys.path if p]
    for place in places:
        if isinstance(place, str) and place not in seen:
            try:
                seen[place] = os.stat(place).st_mtime_ns
            except OSError:
                seen[place] = None
    return seen


def _changed(before: dict, now: dict) -> str:
    for place, mtime in before.items():
        if now.get(place) != mtime:
            return f"{place} changed since the spare imported it"
    return ""


def _ready(wish: dict) -> dict:
    """Ready the device as `wish` says; the fingerprint of what that imported."""
    import kt_cli

    if os.path.abspath(kt_cli.__file__) != wish["kt"]:
        raise RuntimeError(f"this spare imported kt from {kt_cli.__file__}, the kt process uses {wish['kt']}")
    from kt_cli.evaluate import requests as execute

    execute.prepare_worker()
    execute.ready_spare(wish["role"], pickle.loads(base64.b64decode(wish["target"])))
    return fingerprint()


def run(conn, wish: dict) -> None:
    """The spare's life: ready, wait, and serve the kt process that takes it over (or end)."""
    sys.path[:] = wish["path"]
    os.environ.clear()
    os.environ.update(wish["env"])
    try:
        imported = _ready(wish)
    except BaseException as exc:  # noqa: BLE001 - the keeper forgets this wish until a kt process asks again
        conn.send(("failed", repr(exc)))
        return
    try:
        conn.send(("spare", None))
        start = conn.recv()
    except (EOFError, OSError):
        return  # let go by the keeper
    taken = time.time()
    why = _changed(imported, fingerprint())
    if why:
        conn.send(("stale", why))
        return
    from kt_cli.evaluate.pool import enter_worker, serve_requests
    from kt_cli.stamps import log_timing

    enter_worker(*start)
    conn.send(("ready", None))
    log_timing("worker", "start", taken, time.time())  # as a forked worker logs its start
    serve_requests(conn)
