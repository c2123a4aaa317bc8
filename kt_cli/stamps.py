"""Diagnostic time stamps (KT_PROFILE_DIR, benchmarks/experiments/startup_timeline.py and wall_profile.py):
what a run's processes did when, each in its own file there. Nothing is written without the variable."""

from __future__ import annotations

import os
import time


def log_timing(side: str, op: str, *stamps: float) -> None:
    """One line `op stamp...` in DIR/pipe-SIDE-PID.log: for a request, when it was sent, received,
    answered and its answer received, on both sides of the pipe; and when a worker was forked and
    ready ("start")."""
    where = os.environ.get("KT_PROFILE_DIR")
    if where:
        os.makedirs(where, exist_ok=True)  # a folder not made yet must not end the run it profiles
        with open(os.path.join(where, f"pipe-{side}-{os.getpid()}.log"), "a") as log:
            log.write(" ".join([op, *(f"{t:.6f}" for t in stamps)]) + "\n")


def mark(event: str) -> None:
    """A stamp of the CLI's own progress through a run (the tune's start, devices detected, storage
    opened, a study ready...), beside the pipes': when, and the CPU seconds kt's process (all its threads)
    had used by then (a step that took longer than its CPU time waited for something, or for a core)."""
    if os.environ.get("KT_PROFILE_DIR"):
        log_timing("cli", event, time.time(), time.process_time())
