"""Named moments at which a `kt tune` process kills itself (SIGKILL), for the kill-and-resume tests.

A test runs kt as `python -c "import tests.kill_points; ..."` (KILLABLE_KT) with KT_TEST_KILL_AT=NAME
or NAME:N (the N-th time the moment comes, default the first). Importing this module wraps the one
function where that moment happens; kt itself carries no test hook. Every other process (the workers)
is left alone: they must notice on their own that kt is gone.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys

KILLABLE_KT = [sys.executable, "-c", "import tests.kill_points; from kt_cli.cli import main; main()"]


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _wrap(owner, name: str, before: bool, when=lambda *a, **k: True) -> None:
    """Kill this process before or after `owner.name` runs, on the N-th call that `when` accepts."""
    original = getattr(owner, name)
    calls = itertools.count(1)  # thread-safe: driver threads reach the same moment at once
    nth = _nth()

    def wrapper(*args, **kwargs):
        chosen = when(*args, **kwargs) and next(calls) == nth
        if chosen and before:
            _die()
        out = original(*args, **kwargs)
        if chosen:
            _die()
        return out

    setattr(owner, name, wrapper)


def _nth() -> int:
    _, _, n = os.environ.get("KT_TEST_KILL_AT", "").partition(":")
    return int(n or 1)


def _arm(point: str) -> None:
    import optuna
    import optuna.study._optimize

    from kt_cli.artifact import store
    from kt_cli.evaluate import pool
    from kt_cli.search import objective, recovery

    tpe = optuna.samplers.TPESampler
    points = {
        # the study is open, no trial asked for yet
        "study-opened": lambda: _wrap(optuna, "create_study", before=False),
        # inside ask(): the trial exists and is owned, the sampler's before_trial hook runs
        "in-ask": lambda: _wrap(tpe, "before_trial", before=True),
        # in the sampler's relative sampling (TPE's multivariate model; Optuna 5 runs it at the first suggest)
        "in-sampler": lambda: _wrap(tpe, "sample_relative", before=True),
        # while a parameter is being suggested (the second: one is recorded); kt's repaired sampler
        # draws every parameter in sample_relative, so the point is Optuna's suggest, not the sampler's
        "suggesting": lambda: _wrap(optuna.trial.Trial, "_suggest", before=True),
        # the trial took its unit of budget, nothing evaluated yet
        "claimed": lambda: _wrap(optuna.trial.Trial, "set_user_attr", before=False,
                                 when=lambda self, key, value: key == "evaluating"),
        # a compile request is in flight in the compile worker
        "compiling": lambda: _wrap(pool.Worker, "_receive", before=True,
                                   when=lambda self, timeout, doing, *limit: doing == "compile"),
        # a candidate is launched on held cases (verification) or timed on them (measured mode)
        "verifying": lambda: _wrap(pool.Worker, "_receive", before=True,
                                   when=lambda self, timeout, doing, *limit: doing in ("launch_held", "time_held")),
        # the result is recorded in the study, the trial not told yet
        "result-recorded": lambda: _wrap(objective.Objective, "_record", before=False),
        # a trial has just been told (completed or failed)
        "told": lambda: _wrap(optuna.study._optimize, "_tell_with_warning", before=False),
        # a dead trial was failed, its retry not queued yet
        "settling-dead": lambda: _wrap(recovery, "_queue_retry", before=True),
        # the artifact's temporary folder is complete, not renamed yet
        "artifact-writing": lambda: _wrap(store.os, "replace", before=True,
                                          when=lambda src, dst: ".kt.tmp." in str(src)),
        # the previous artifact was moved aside, the new one not renamed into place yet
        "artifact-replacing": lambda: _wrap(store.os, "replace", before=False,
                                            when=lambda src, dst: ".kt.old." in str(dst)),
    }
    points[point]()


if os.environ.get("KT_TEST_KILL_AT"):
    _arm(os.environ["KT_TEST_KILL_AT"].partition(":")[0])
