"""Where studies live: Optuna RDB storage with heartbeats (SQLite by default, PostgreSQL or MySQL
when shared between hosts) or a journal file, and the reads every report makes of a study."""

from __future__ import annotations

import datetime
import inspect
import json
import os
import platform
import time
import warnings

from kt_cli.errors import EnvironmentProblem
from kt_cli.types import TrialResult

HEARTBEAT_S = 5
GRACE_S = 20
HOST = platform.node()
RETRY_WINDOW_S = 2.0  # a retry just taken keeps its dead predecessor's pid until it records its own


def open_storage(url: str):
    """RDB storage with heartbeats: a trial whose process died is failed and retried once."""
    import optuna
    from optuna.storages import RDBStorage

    if not url.startswith(("sqlite:", "postgresql", "mysql")):
        return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(url))
    callback_key = ("heartbeat_stale_trial_callback"
                    if "heartbeat_stale_trial_callback" in inspect.signature(RDBStorage.__init__).parameters
                    else "failed_trial_callback")
    kwargs = {"heartbeat_interval": HEARTBEAT_S, "grace_period": GRACE_S, callback_key: retry_callback()}
    if url.startswith("sqlite:"):
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": 60}}
    if url.startswith("postgresql://"):
        url = "postgresql+" + _postgres_driver(url) + url[len("postgresql"):]
    from sqlalchemy.exc import SQLAlchemyError

    for attempt in range(3):
        try:
            with warnings.catch_warnings():  # heartbeats are "experimental" in Optuna's words, and what kt needs
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                return RDBStorage(url, **kwargs)
        except SQLAlchemyError as exc:  # processes starting together race to create the tables
            if attempt == 2:
                raise EnvironmentProblem(f"--storage {url.split('@')[-1]}: cannot open the study storage: "
                                         f"{str(exc).splitlines()[0]}") from None
            time.sleep(1 + attempt)


def retry_callback():
    """Queues a dead worker's trial once more (then its point counts as failed)."""
    import optuna

    retry = getattr(optuna.storages, "RetryHeartbeatStaleTrialCallback", None) or optuna.storages.RetryFailedTrialCallback
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return retry(max_retry=1)


def _postgres_driver(url: str) -> str:
    """SQLAlchemy 2.1 reads a bare postgresql:// URL as psycopg (3); take whichever driver is installed."""
    import importlib.util

    for module in ("psycopg", "psycopg2"):
        if importlib.util.find_spec(module) is not None:
            return module
    raise EnvironmentProblem(f"--storage {url.split('@')[-1]}: no PostgreSQL driver is installed: "
                             "pip install psycopg2-binary")


def trial_result(trial) -> TrialResult | None:
    data = trial.user_attrs.get("result")
    return TrialResult.from_json(json.loads(data)) if data else None


def evaluated(study) -> list:
    """Trials that ran a candidate (not pruned as invalid, not answered as a duplicate)."""
    import optuna

    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL)
    return [t for t in study.get_trials(deepcopy=False, states=done)
            if "result" in t.user_attrs and "duplicate_of" not in t.user_attrs]


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, TypeError, ValueError):
        return True
    return True



def fail_dead_trials(study, storage) -> None:
    """Fail the running trials whose worker died, and queue each once more. RDB storage knows them
    by their stale heartbeats; storage without heartbeats (journal files) only by the pid of
    trials started on this host."""
    import optuna

    if isinstance(storage, optuna.storages.RDBStorage):
        optuna.storages.fail_stale_trials(study)
        return
    now = datetime.datetime.now()
    for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        if t.user_attrs.get("host") != HOST or _alive(t.user_attrs.get("pid")):
            continue
        if t.datetime_start and (now - t.datetime_start).total_seconds() < RETRY_WINDOW_S:
            continue
        try:
            study.tell(t.number, state=optuna.trial.TrialState.FAIL)
        except (ValueError, optuna.exceptions.UpdateFinishedTrialError):
            continue  # another process on this host failed it first
        retry_callback()(study, t)
