"""Where studies live: Optuna RDB storage (SQLite by default, PostgreSQL or MySQL when shared between
hosts) or a journal file, as kt's own storages (kt_cli.search.owned_storages), and the reads every
report makes of a study."""

from __future__ import annotations

import atexit
import json
import platform
import time
import weakref

from kt_cli.errors import EnvironmentProblem
from kt_cli.types import TrialResult

HOST = platform.node()


def import_ahead() -> None:
    """Import what opening a storage and its studies imports (Optuna, SQLAlchemy, Alembic: 0.8 s and
    more on the GPU hosts), while something else (the devices' detection) keeps the run waiting."""
    import alembic.command  # noqa: F401 - optuna's RDB storage imports these when it opens
    import alembic.config  # noqa: F401
    import alembic.migration  # noqa: F401
    import alembic.script  # noqa: F401
    import optuna.samplers  # noqa: F401

    from kt_cli.search import owned_storages  # noqa: F401 - optuna.storages, sqlalchemy


def open_storage(url: str):
    """kt's storage of `url`: RDB for sqlite:, postgresql and mysql URLs, else a journal file."""
    if not url.startswith(("sqlite:", "postgresql", "mysql")):
        import optuna

        from kt_cli.search.owned_storages import KtJournalStorage

        return KtJournalStorage(optuna.storages.journal.JournalFileBackend(url))
    kwargs = {}
    if url.startswith("sqlite:"):
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": 60, **_hold_stamps()}}
    if url.startswith("postgresql://"):
        url = "postgresql+" + _postgres_driver(url) + url[len("postgresql"):]
    from sqlalchemy.exc import SQLAlchemyError

    from kt_cli.search.owned_storages import KtRDBStorage

    for attempt in range(3):
        try:
            storage = KtRDBStorage(url, **kwargs)
            if url.startswith("sqlite:"):
                _write_ahead(storage.engine)
            return storage
        except SQLAlchemyError as exc:  # processes starting together race to create the tables
            if attempt == 2:
                raise EnvironmentProblem(f"--storage {url.split('@')[-1]}: cannot open the study storage: "
                                         f"{str(exc).splitlines()[0]}") from None
            time.sleep(1 + attempt)


def _hold_stamps() -> dict:
    """With KT_PROFILE_DIR set, connections that stamp how long each write transaction held the lock."""
    import os

    if not os.environ.get("KT_PROFILE_DIR"):
        return {}
    from kt_cli.search.lock_holds import HoldStampedConnection

    return {"factory": HoldStampedConnection}


def _write_ahead(engine) -> None:
    """SQLite in write-ahead-log mode, commits synced at checkpoints only. In its default mode a writer
    waits for every reader and the readers for it, and each commit syncs the disk, while a study's trial
    threads read the study as others write their params (a softmax run's profile: 45 thread-seconds in
    Optuna's storage calls for 3.8 s of device work; docs/performance.md has what the change measured).
    A killed process loses nothing committed: the log, NAME.study.db-wal beside the database, survives
    it and is replayed on the next open. An operating-system crash may lose the last commits, which a
    resumed study runs again. The mode belongs to the database file (every process sharing it gets it);
    SQLite on a network file system is not supported in either mode."""
    import sqlalchemy

    def on_connect(connection, _record) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    sqlalchemy.event.listen(engine, "connect", on_connect)
    engine.dispose()  # the connection that made the tables reconnects with these settings
    _ENGINES.add(engine)


# The last connection to a database that closes folds its log into the file and removes it (and its
# index): at exit every engine still open closes its pooled connections, so that a finished run leaves
# the one .db file beside the artifact.
_ENGINES: weakref.WeakSet = weakref.WeakSet()


def close_engines() -> None:
    """Close every open engine's pooled connections: at exit, or before a process ends at once."""
    for engine in list(_ENGINES):
        engine.dispose()


atexit.register(close_engines)


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


def sampler_state(result: TrialResult):
    """The Optuna state a trial that evaluated its point ends in, which is what the sampler learns of it:
    COMPLETE with its value when it was measured or estimated; PRUNED when the cost model predicted it far
    slower than the best (TPE ranks pruned trials below every complete one, so it learns the region is
    slow without a made-up value; as a failed trial, which TPE ignores, the more the model pruned the
    fewer results the sampler had: docs/performance.md, twenty-fourth session); FAIL otherwise."""
    import optuna

    if result.ok and result.value is not None:
        return optuna.trial.TrialState.COMPLETE
    return optuna.trial.TrialState.PRUNED if result.failure_kind == "pruned" else optuna.trial.TrialState.FAIL


def evaluated(study) -> list:
    """Trials that ran a candidate (not pruned as invalid, not answered as a duplicate)."""
    import optuna

    from kt_cli.search.ledger import ran_a_candidate

    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL, optuna.trial.TrialState.PRUNED)
    return [t for t in study.get_trials(deepcopy=False, states=done) if ran_a_candidate(t)]


def idle(study) -> dict:
    """Trials that evaluated nothing, each an ask and a turn in a slot: answered as a duplicate of a
    point evaluated before, or skipped (their point, or the budget's last units, taken by another trial)."""
    from kt_cli.search.ledger import SKIPPED

    trials = study.get_trials(deepcopy=False)
    return {"duplicates": sum("duplicate_of" in t.user_attrs for t in trials),
            "skipped": sum(SKIPPED in t.user_attrs for t in trials)}
