"""kt's Optuna storages: every trial this process starts running is owned from that moment
(kt_cli.search.liveness.TrialKeeper), and a trial's state changes in one step. Imported only when a
storage is opened (it imports Optuna)."""

from __future__ import annotations

import datetime
import functools
import threading

import sqlalchemy
from optuna.storages import JournalStorage, RDBStorage
from optuna.storages._rdb import models
from optuna.storages._rdb.storage import _create_scoped_session
from optuna.trial import TrialState

from kt_cli.search.liveness import OWNER, TrialKeeper


LOCK_PATIENCE_S = 60.0  # how long a write transaction SQLite refuses as locked is run again (the busy timeout's)


def again_when_locked(write):
    """Run `write` (one transaction), again when SQLite refused it as locked, for up to LOCK_PATIENCE_S
    seconds (the wait each connection's busy timeout allows). In write-ahead-log mode a
    transaction that read and then writes, after another connection committed since its read, is
    refused at once (SQLITE_BUSY_SNAPSHOT: its snapshot is stale, and no busy wait can help): Optuna's
    trial creation (reads the study, inserts), a one-step state change (reads, updates). Such a
    transaction was rolled back whole, so running it again is safe. Each retry waits a little longer,
    up to about half a second: a count of tries ran out in 0.6 s on a loaded 2-core CI machine with
    eighteen threads writing one study, while a deadline holds however busy the host is."""
    import random
    import time

    import sqlalchemy.exc
    from optuna.exceptions import StorageInternalError

    from kt_cli.stamps import log_timing

    deadline = time.monotonic() + LOCK_PATIENCE_S
    attempt, began = 0, time.time()
    while True:
        try:
            done = write()
            log_timing("db", "write", began, time.time(), attempt)  # (KT_PROFILE_DIR: the transaction's wall)
            return done
        except (StorageInternalError, sqlalchemy.exc.OperationalError) as exc:
            cause = exc.__cause__ if isinstance(exc, StorageInternalError) else exc
            locked = isinstance(cause, sqlalchemy.exc.OperationalError) and "locked" in str(cause).lower()
            if not locked or time.monotonic() >= deadline:
                raise
            time.sleep(random.uniform(0.005, 0.02) * 2 ** min(attempt, 5))
            attempt += 1


class LockRetries(RDBStorage):
    """Every write transaction of a kt storage, again when SQLite refused it as locked (again_when_locked)."""

    def create_new_study(self, directions, study_name=None):
        return again_when_locked(lambda: super(LockRetries, self).create_new_study(directions, study_name))

    def set_study_user_attr(self, study_id, key, value) -> None:
        again_when_locked(lambda: super(LockRetries, self).set_study_user_attr(study_id, key, value))

    def set_study_system_attr(self, study_id, key, value) -> None:
        again_when_locked(lambda: super(LockRetries, self).set_study_system_attr(study_id, key, value))

    def _create_new_trial(self, study_id, template_trial=None):
        return again_when_locked(lambda: super(LockRetries, self)._create_new_trial(study_id, template_trial))

    def set_trial_state_values(self, trial_id, state, values=None) -> bool:
        return again_when_locked(lambda: super(LockRetries, self).set_trial_state_values(trial_id, state, values))

    def set_trial_system_attr(self, trial_id, key, value) -> None:
        again_when_locked(lambda: super(LockRetries, self).set_trial_system_attr(trial_id, key, value))

    def set_trial_intermediate_value(self, trial_id, step, intermediate_value) -> None:
        again_when_locked(lambda: super(LockRetries, self).set_trial_intermediate_value(trial_id, step,
                                                                                       intermediate_value))

    def record_heartbeat(self, trial_id) -> None:
        again_when_locked(lambda: super(LockRetries, self).record_heartbeat(trial_id))


class OneStepStates(RDBStorage):
    def set_trial_state_values(self, trial_id, state, values=None) -> bool:
        """Optuna reads a trial's state, then writes the new one: on SQLite two processes or threads can
        then both take one queued trial, or one finish a trial another has just finished, and a reader
        in between may keep a state that did not last. Here one conditional UPDATE decides: the state
        changes only from WAITING to RUNNING or from RUNNING to a finished state, by the first writer."""
        if state != TrialState.RUNNING and not state.is_finished():
            return super().set_trial_state_values(trial_id, state, values=values)
        expected = TrialState.WAITING if state == TrialState.RUNNING else TrialState.RUNNING
        changed = self._change_state(trial_id, expected, state, values)  # (LockRetries runs it again when locked)
        if changed:
            return True
        self.check_trial_is_updatable(trial_id, self.get_trial(trial_id).state)  # finished meanwhile
        if state == TrialState.RUNNING:
            return False  # another process or thread took it
        return super().set_trial_state_values(trial_id, state, values=values)  # finishing a queued trial

    def _change_state(self, trial_id: int, expected: TrialState, state: TrialState, values) -> bool:
        """The conditional UPDATE and the trial's values, in SQLAlchemy Core: a handful of statements with
        little Python between them, while the transaction holds the database's one write lock (through the
        ORM this transaction held it 3-4 times as long on the 2-core CPU machine; docs/performance.md,
        thirty-fifth session)."""
        trial, value = models.TrialModel.__table__, models.TrialValueModel.__table__
        when = "datetime_start" if state == TrialState.RUNNING else "datetime_complete"
        with self.engine.begin() as connection:
            found = _updatable_trial(self, connection, trial_id)
            # a trial already taken is not written to: a write would queue for SQLite's one writer (threads
            # whose read of the queue is a moment old try trials another thread has just taken)
            if found.state != expected or connection.execute(
                    sqlalchemy.update(trial).where(trial.c.trial_id == trial_id, trial.c.state == expected)
                    .values({"state": state, when: datetime.datetime.now()})).rowcount != 1:
                return False
            if values:
                connection.execute(sqlalchemy.delete(value).where(value.c.trial_id == trial_id))
                connection.execute(sqlalchemy.insert(value), [
                    dict(zip(("value", "value_type"), models.TrialValueModel.value_to_stored_repr(v)),
                         trial_id=trial_id, objective=objective) for objective, v in enumerate(values)])
        return True


def _updatable_trial(storage: RDBStorage, connection, trial_id: int):
    """The trial's row (its study and state) read in `connection`'s transaction: KeyError where there is no
    such trial, Optuna's error where it has finished (`check_trial_is_updatable`)."""
    trial = models.TrialModel.__table__
    found = connection.execute(sqlalchemy.select(trial.c.study_id, trial.c.state)
                               .where(trial.c.trial_id == trial_id)).one_or_none()
    if found is None:
        raise KeyError(models.NOT_FOUND_MSG)
    storage.check_trial_is_updatable(trial_id, found.state)
    return found


class DeferredTrialWrites(RDBStorage):
    """A trial's parameters and user attributes are written together, in one transaction, when the
    trial writes them (write_deferred: its decision reads the study after it) or before anything else
    touches the trial in the database (its state, a system attribute, reading it back). Optuna writes
    each in a transaction of its own: about 16 of a trial's 27 commits with ten parameters, and with
    four workers sharing one SQLite file on a 4x H100 host a trial spent 1.6 s outside its evaluation
    against 0.4 s alone (benchmarks/results/s16/scale80_a), waiting for the database's one writer. What
    other processes read meanwhile is the trial without them: a running trial that has not decided.

    The transaction is a handful of SQLAlchemy Core statements (the trial's state, then every parameter
    and every attribute in one statement each) where Optuna's ORM ran three queries a parameter and two
    an attribute: on a 2-core CPU machine a write transaction's CPU averaged 3.5 ms, much of it with the
    database's one write lock held (docs/performance.md, nineteenth session)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._deferred: dict[int, _Pending] = {}
        self._deferred_lock = threading.Lock()

    def _set_trial_param(self, trial_id, param_name, param_value_internal, distribution, previous_distribution):
        from optuna.distributions import check_distribution_compatibility, distribution_to_json

        if previous_distribution is not None:
            check_distribution_compatibility(previous_distribution, distribution)
        with self._deferred_lock:
            self._deferred.setdefault(trial_id, _Pending()).params.append(
                (param_name, param_value_internal, distribution_to_json(distribution), previous_distribution is None))

    def set_trial_user_attr(self, trial_id, key, value) -> None:
        import json

        with self._deferred_lock:
            self._deferred.setdefault(trial_id, _Pending()).user_attrs[key] = json.dumps(value)

    def write_deferred(self, trial_id: int) -> None:
        """Write what `trial_id` has set and not written, in one transaction."""
        with self._deferred_lock:
            pending = self._deferred.pop(trial_id, None)
        if pending is not None and (pending.params or pending.user_attrs or pending.system_attrs):
            again_when_locked(lambda: self._write_pending(trial_id, pending))

    def _write_pending(self, trial_id: int, pending: "_Pending") -> None:
        from optuna.distributions import check_distribution_compatibility, json_to_distribution

        trial, param = models.TrialModel.__table__, models.TrialParamModel.__table__
        user, system = models.TrialUserAttributeModel.__table__, models.TrialSystemAttributeModel.__table__
        with self.engine.begin() as connection:
            found = _updatable_trial(self, connection, trial_id)
            for name, _, spec, unchecked in pending.params:
                if unchecked:  # the first value of this parameter this process writes: as the study has it
                    stored = connection.execute(
                        sqlalchemy.select(param.c.distribution_json).join(trial, trial.c.trial_id == param.c.trial_id)
                        .where(trial.c.study_id == found.study_id, param.c.param_name == name).limit(1)).scalar()
                    if stored is not None:
                        check_distribution_compatibility(json_to_distribution(stored), json_to_distribution(spec))
            if pending.params:
                connection.execute(sqlalchemy.insert(param), [
                    {"trial_id": trial_id, "param_name": name, "param_value": value, "distribution_json": spec}
                    for name, value, spec, _ in pending.params])
            for table, attrs in ((user, pending.user_attrs), (system, pending.system_attrs)):
                if attrs:
                    _replace_attrs(connection, table, trial_id, attrs)

    def set_trial_state_values(self, trial_id, state, values=None) -> bool:
        self.write_deferred(trial_id)
        return super().set_trial_state_values(trial_id, state, values=values)

    def set_trial_system_attr(self, trial_id, key, value) -> None:
        """Joins the trial's pending writes where it has some (TPE's proposal for a running trial, set
        between the trial's first attributes and its parameters: a transaction of its own before);
        otherwise, and always for the owner record that other processes judge liveness by, written at
        once after what is pending, as Optuna writes it (its check refuses a finished trial)."""
        import json

        with self._deferred_lock:
            pending = self._deferred.get(trial_id)
            if pending is not None and key != OWNER:
                pending.system_attrs[key] = json.dumps(value)
                return
        self.write_deferred(trial_id)
        super().set_trial_system_attr(trial_id, key, value)

    def set_trial_intermediate_value(self, trial_id, step, intermediate_value) -> None:
        self.write_deferred(trial_id)
        super().set_trial_intermediate_value(trial_id, step, intermediate_value)

    def get_trial(self, trial_id: int):
        self.write_deferred(trial_id)
        return super().get_trial(trial_id)


class _Pending:
    """What a trial has set and DeferredTrialWrites has not written: its parameters in the order set
    (name, internal value, distribution JSON, whether the study's stored distribution is still to be
    checked) and its user and system attributes (key: JSON)."""

    def __init__(self) -> None:
        self.params: list[tuple] = []
        self.user_attrs: dict[str, str] = {}
        self.system_attrs: dict[str, str] = {}


def _replace(connection, table, keys: tuple, rows: list[dict], **from_sql) -> None:
    """`rows` of `table`, replacing the rows their `keys` (a unique constraint of the table) held: one upsert
    on SQLite and PostgreSQL, a delete and an insert elsewhere (every statement is time the write lock is held:
    docs/performance.md, thirty-fifth session). `from_sql`: columns every row takes from the database (its
    clock), each value an expression made once (its statement is made once)."""
    if connection.dialect.name in ("sqlite", "postgresql"):
        changed = tuple(column for column in [*rows[0], *from_sql] if column not in keys)
        connection.execute(_upsert(connection.dialect.name, table, keys, changed, tuple(from_sql.items())), rows)
        return
    connection.execute(sqlalchemy.delete(table).where(sqlalchemy.or_(
        *(sqlalchemy.and_(*(table.c[key] == row[key] for key in keys)) for row in rows))))
    connection.execute(sqlalchemy.insert(table).values(**from_sql), rows)


@functools.lru_cache(maxsize=64)
def _upsert(dialect: str, table, keys: tuple, changed: tuple, from_sql: tuple):
    """The upsert statement of _replace, made once: made anew for every write, it took 1.2-2.9 ms of a
    trial's CPU on a 2x H200 host, part of it while the transaction held SQLite's write lock (py-spy,
    results/s47/spy256)."""
    import importlib

    upsert = importlib.import_module(f"sqlalchemy.dialects.{dialect}").insert(table).values(**dict(from_sql))
    return upsert.on_conflict_do_update(index_elements=[table.c[key] for key in keys],
                                        set_={column: upsert.excluded[column] for column in changed})


def _replace_attrs(connection, table, trial_id: int, attrs: dict) -> None:
    """A trial's attributes `attrs` (key: JSON) in `table` (user or system attributes), replacing what the
    keys held."""
    _replace(connection, table, ("trial_id", "key"),
             [{"trial_id": trial_id, "key": key, "value_json": text} for key, text in attrs.items()])


_NOW = sqlalchemy.func.now()  # the database's clock, one expression for every heartbeat's statement


def _renew_heartbeats(connection, trial_ids: list[int]) -> None:
    """A heartbeat of now (the database's clock) for each of `trial_ids`, replacing the one it had."""
    _replace(connection, models.TrialHeartbeatModel.__table__, ("trial_id",),
             [{"trial_id": trial_id} for trial_id in trial_ids], heartbeat=_NOW)


def _write_owner(connection, trial_id: int) -> None:
    """This process as the trial's owner (its OWNER system attribute) and the trial's first heartbeat."""
    import json

    from kt_cli.processes import this_process

    _renew_heartbeats(connection, [trial_id])
    _replace_attrs(connection, models.TrialSystemAttributeModel.__table__, trial_id,
                   {OWNER: json.dumps(this_process())})


class DriverTrialReads(RDBStorage):
    """Trials read through the database driver's cursor instead of the ORM (kt_cli.search.trial_reads): the
    same FrozenTrials, built from rows. Optuna's cached storage reads every unfinished trial again at each
    look at the study (a budget ledger's read, a look for dead owners), and `kt tune --workers N` keeps about
    20 running trials a process: through the ORM a look at 64 running trials took 33-40 ms of CPU on a
    2-core CPU machine (docs/performance.md, tenth session), through SQLAlchemy Core 15-32 ms of a trial's
    CPU went to these reads on a 2x H200 host (thirty-sixth session)."""

    def _get_trials(self, study_id, states, included_trial_ids, trial_id_greater_than):
        import time

        from kt_cli.search import trial_reads
        from kt_cli.stamps import log_timing

        began = time.time()
        where = trial_reads.study_trials(study_id, states, included_trial_ids, trial_id_greater_than)
        trials = trial_reads.read_trials(self.engine, where)
        if not trials and not trial_reads.study_exists(self.engine, study_id):
            raise KeyError(models.NOT_FOUND_MSG)
        log_timing("db", "read", began, time.time(), len(trials))  # (KT_PROFILE_DIR: a look's wall, its trials)
        return trials

    def get_trial(self, trial_id: int):
        """One trial, read as _get_trials reads them (Optuna's ask and tell read back the trial they
        made or finished: through the ORM, eager loads of each of its five child tables)."""
        from kt_cli.search import trial_reads

        found = trial_reads.read_trials(self.engine, trial_reads.one_trial(trial_id))
        if not found:
            raise KeyError(models.NOT_FOUND_MSG)
        return found[0]


class KtRDBStorage(TrialKeeper, DeferredTrialWrites, LockRetries, OneStepStates, DriverTrialReads):
    def _create_new_trial(self, study_id, template_trial=None):
        if template_trial is None:  # asked for, not enqueued: its owner is this process, recorded as it is made
            trial = again_when_locked(lambda: self._insert_asked_trial(study_id))
            self._own(trial._trial_id, recorded=True)
            return trial
        trial = super()._create_new_trial(study_id, template_trial)
        if trial.state == TrialState.RUNNING:
            self._own(trial._trial_id)
        return trial

    def _insert_asked_trial(self, study_id: int):
        """A running trial, its number (the study's trials before it), its first heartbeat and its owner
        record, in one transaction of SQLAlchemy Core statements. Optuna's ORM made the trial in a transaction
        of its own, and with kt's owner record in it (one write transaction a trial fewer, where the processes
        of a host queue for SQLite's one writer: twenty-first session) it held the write lock 5-10 ms on the GPU
        hosts, 45% of all the time the lock was held (docs/performance.md, thirty-fifth session)."""
        from optuna.trial import FrozenTrial

        trial, study = models.TrialModel.__table__, models.StudyModel.__table__
        started = datetime.datetime.now()
        with self.engine.begin() as connection:
            # the study's row locked where the database can (Optuna's guard of the numbering; SQLite has one writer)
            if connection.execute(sqlalchemy.select(study.c.study_id).where(study.c.study_id == study_id)
                                  .with_for_update()).one_or_none() is None:
                raise KeyError(models.NOT_FOUND_MSG)
            trial_id = connection.execute(sqlalchemy.insert(trial).values(
                study_id=study_id, state=TrialState.RUNNING, datetime_start=started)).inserted_primary_key[0]
            number = connection.execute(sqlalchemy.select(sqlalchemy.func.count(trial.c.trial_id)).where(
                trial.c.study_id == study_id, trial.c.trial_id < trial_id)).scalar_one()
            connection.execute(sqlalchemy.update(trial).where(trial.c.trial_id == trial_id).values(number=number))
            _write_owner(connection, trial_id)
        return FrozenTrial(number=number, state=TrialState.RUNNING, value=None, values=None, datetime_start=started,
                           datetime_complete=None, params={}, distributions={}, user_attrs={}, system_attrs={},
                           intermediate_values={}, trial_id=trial_id)

    def _record_owner(self, trial_id: int) -> None:
        """The trial's first heartbeat and its owner record in one transaction (TrialKeeper's two)."""
        def write() -> None:
            with self.engine.begin() as connection:
                _write_owner(connection, trial_id)
        again_when_locked(write)

    def _beat_all(self, trial_ids: list[int]) -> None:
        """Every owned trial's heartbeat in one transaction (one each was about 0.3 write transactions a
        trial with four workers, each queueing for SQLite's one writer)."""
        def write() -> None:
            with self.engine.begin() as connection:
                _renew_heartbeats(connection, trial_ids)
        again_when_locked(write)

    def heartbeat_ages(self, study_id: int) -> dict[int, float]:
        """Seconds since the last heartbeat of each running trial that has one (the database's clock)."""
        beat, trial = models.TrialHeartbeatModel, models.TrialModel
        with _create_scoped_session(self.scoped_session, True) as session:
            now = session.execute(sqlalchemy.func.now()).scalar().replace(tzinfo=None)
            rows = (session.query(beat.trial_id, beat.heartbeat).join(trial, trial.trial_id == beat.trial_id)
                    .filter(trial.study_id == study_id, trial.state == TrialState.RUNNING).all())
        return {trial_id: (now - at.replace(tzinfo=None)).total_seconds() for trial_id, at in rows}


class KtJournalStorage(TrialKeeper, JournalStorage):
    """Journal files keep no heartbeats: only an owner on this machine can be judged."""

    keeps_heartbeats = False

    def create_new_trial(self, study_id, template_trial=None):
        trial_id = super().create_new_trial(study_id, template_trial)
        if template_trial is None or template_trial.state == TrialState.RUNNING:
            self._own(trial_id)
        return trial_id

    def heartbeat_ages(self, study_id: int) -> None:
        return None
