"""Where studies live: Optuna RDB storage (SQLite by default, PostgreSQL or MySQL when shared between
hosts) or a journal file, as kt's own storages (kt_cli.search.owned_storages), and the reads every
report makes of a study."""

from __future__ import annotations

import json
import platform
import time

from kt_cli.errors import EnvironmentProblem
from kt_cli.types import TrialResult

HOST = platform.node()


def open_storage(url: str):
    """kt's storage of `url`: RDB for sqlite:, postgresql and mysql URLs, else a journal file."""
    if not url.startswith(("sqlite:", "postgresql", "mysql")):
        import optuna

        from kt_cli.search.owned_storages import KtJournalStorage

        return KtJournalStorage(optuna.storages.journal.JournalFileBackend(url))
    kwargs = {}
    if url.startswith("sqlite:"):
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": 60}}
    if url.startswith("postgresql://"):
        url = "postgresql+" + _postgres_driver(url) + url[len("postgresql"):]
    from sqlalchemy.exc import SQLAlchemyError

    from kt_cli.search.owned_storages import KtRDBStorage

    for attempt in range(3):
        try:
            return KtRDBStorage(url, **kwargs)
        except SQLAlchemyError as exc:  # processes starting together race to create the tables
            if attempt == 2:
                raise EnvironmentProblem(f"--storage {url.split('@')[-1]}: cannot open the study storage: "
                                         f"{str(exc).splitlines()[0]}") from None
            time.sleep(1 + attempt)


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


def earlier_results(storage, study_name: str) -> list[TrialResult]:
    """The results a study already holds; none for a study not created yet."""
    import optuna

    try:
        study = optuna.load_study(study_name=study_name, storage=storage)
    except KeyError:
        return []
    return [trial_result(t) for t in evaluated(study)]


def evaluated(study) -> list:
    """Trials that ran a candidate (not pruned as invalid, not answered as a duplicate)."""
    import optuna

    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL)
    return [t for t in study.get_trials(deepcopy=False, states=done)
            if "result" in t.user_attrs and "duplicate_of" not in t.user_attrs]
