"""How kt reads a study's trials from an RDB storage: with SQLAlchemy Core instead of Optuna's ORM
(CoreTrialReads), and, in a SQLite database, only the running trials that changed since this process
last read them (VersionedTrialReads)."""

from __future__ import annotations

import functools
import threading

from optuna.storages import RDBStorage
from optuna.storages._rdb import models
from optuna.storages._rdb.storage import _create_scoped_session

VERSIONS = "kt_trial_versions"  # a trial's version: bumped by triggers whenever what a FrozenTrial holds changes
# the tables a FrozenTrial is built from (trial_heartbeats is not among them: a heartbeat changes no trial)
_VERSIONED_TABLES = ("trials", "trial_params", "trial_values", "trial_user_attributes", "trial_system_attributes",
                     "trial_intermediate_values")


def _chosen(study_id, states, included_trial_ids, trial_id_greater_than):
    """(the study's trials in `states`, those of them Optuna's cached storage asks for: the ones in
    `included_trial_ids` not after `trial_id_greater_than`, and every one after it)."""
    import sqlalchemy

    trial = models.TrialModel.__table__
    study = trial.c.study_id == study_id
    if states is not None:
        study = study & trial.c.state.in_(list(states))
    included = {i for i in included_trial_ids if i <= trial_id_greater_than}
    where = study
    if included and trial_id_greater_than > -1:
        where = study & sqlalchemy.or_(trial.c.trial_id.in_(included), trial.c.trial_id > trial_id_greater_than)
    elif trial_id_greater_than > -1:
        where = study & (trial.c.trial_id > trial_id_greater_than)
    return study, where


def _is_chosen(trial_id: int, included_trial_ids, trial_id_greater_than: int) -> bool:
    return trial_id > trial_id_greater_than or (trial_id in included_trial_ids and trial_id_greater_than > -1)


class CoreTrialReads(RDBStorage):
    """Trials read with SQLAlchemy Core instead of the ORM: the same FrozenTrials, built from rows.
    Optuna's cached storage reads every unfinished trial again at each look at the study (a budget
    ledger's read, a look for dead owners), and `kt tune --workers N` keeps about 16 running trials a
    process: through the ORM a look at 64 running trials took 33-40 ms of CPU on a 2-core CPU machine,
    and four workers' processes spent their CPU reading each other's trials (docs/performance.md, tenth
    session)."""

    def _get_trials(self, study_id, states, included_trial_ids, trial_id_greater_than):
        import sqlalchemy.exc

        study, where = _chosen(study_id, states, included_trial_ids, trial_id_greater_than)
        with _create_scoped_session(self.scoped_session) as session:
            models.StudyModel.find_or_raise_by_id(study_id, session)
            try:
                rows, children = _rows(session, where)
            except sqlalchemy.exc.OperationalError:  # likely more trial ids than the database takes in one IN,
                rows, children = _rows(session, study)  # as Optuna falls back: the study's every trial, then chosen
                rows = [r for r in rows if _is_chosen(r.trial_id, included_trial_ids, trial_id_greater_than)]
        return _frozen_trials(rows, children)

    def get_trial(self, trial_id: int):
        """One trial, read as _get_trials reads them (Optuna's ask and tell read back the trial they
        made or finished: through the ORM, eager loads of each of its five child tables)."""
        with _create_scoped_session(self.scoped_session) as session:
            rows, children = _rows(session, models.TrialModel.__table__.c.trial_id == trial_id)
        if not rows:
            raise KeyError(models.NOT_FOUND_MSG)
        return _frozen_trials(rows, children)[0]


def _rows(session, where) -> tuple[list, dict]:
    """The trial rows `where` picks, and the rows of each child table of theirs (_child_reads)."""
    import sqlalchemy

    trial = models.TrialModel.__table__
    rows = session.execute(sqlalchemy.select(trial.c.trial_id, trial.c.number, trial.c.state, trial.c.datetime_start,
                                             trial.c.datetime_complete).where(where).order_by(trial.c.trial_id)).all()
    chosen = sqlalchemy.select(trial.c.trial_id).where(where)
    children = {name: session.execute(sqlalchemy.select(*columns).where(table.c.trial_id.in_(chosen))
                                      .order_by(*order)).all()
                for name, table, columns, order in _child_reads()}
    return rows, children


def _child_reads() -> list:
    """(name, table, columns, order) of what a FrozenTrial holds besides its trial row."""
    param, value = models.TrialParamModel.__table__, models.TrialValueModel.__table__
    user, system = models.TrialUserAttributeModel.__table__, models.TrialSystemAttributeModel.__table__
    step = models.TrialIntermediateValueModel.__table__
    return [("params", param, (param.c.trial_id, param.c.param_name, param.c.param_value, param.c.distribution_json),
             (param.c.param_id,)),
            ("values", value, (value.c.trial_id, value.c.objective, value.c.value, value.c.value_type), ()),
            ("user", user, (user.c.trial_id, user.c.key, user.c.value_json), (user.c.trial_user_attribute_id,)),
            ("system", system, (system.c.trial_id, system.c.key, system.c.value_json),
             (system.c.trial_system_attribute_id,)),
            ("steps", step, (step.c.trial_id, step.c.step, step.c.intermediate_value, step.c.intermediate_value_type),
             (step.c.trial_intermediate_value_id,))]


def _frozen_trials(rows: list, children: dict) -> list:
    """FrozenTrials as Optuna's RDBStorage._build_frozen_trial_from_trial_model builds them."""
    import json

    from optuna.trial import FrozenTrial

    by_trial = {name: {} for name in children}
    for name, found in children.items():
        for row in found:
            by_trial[name].setdefault(row[0], []).append(row)
    out = []
    for row in rows:
        values = None
        if row.trial_id in by_trial["values"]:
            values = [0.0] * len(by_trial["values"][row.trial_id])
            for _, objective, value, kind in by_trial["values"][row.trial_id]:
                values[objective] = models.TrialValueModel.stored_repr_to_value(value, kind)
        params = by_trial["params"].get(row.trial_id, [])
        out.append(FrozenTrial(
            number=row.number, state=row.state, value=None, values=values, datetime_start=row.datetime_start,
            datetime_complete=row.datetime_complete,
            params={name: _distribution(spec).to_external_repr(value) for _, name, value, spec in params},
            distributions={name: _distribution(spec) for _, name, _, spec in params},
            user_attrs={key: json.loads(text) for _, key, text in by_trial["user"].get(row.trial_id, [])},
            system_attrs={key: json.loads(text) for _, key, text in by_trial["system"].get(row.trial_id, [])},
            intermediate_values={step: models.TrialIntermediateValueModel.stored_repr_to_intermediate_value(value, kind)
                                 for _, step, value, kind in by_trial["steps"].get(row.trial_id, [])},
            trial_id=row.trial_id))
    return out


@functools.lru_cache(maxsize=1024)
def _distribution(spec: str):
    """A parameter's distribution from its stored JSON (a study's parameters share a handful of them)."""
    from optuna.distributions import json_to_distribution

    return json_to_distribution(spec)


def track_versions(engine) -> bool:
    """The version table and the triggers that keep it, in a SQLite database (each `CREATE ... IF NOT
    EXISTS`: every process opening the database runs this, whoever came first). A trigger fires for
    every writer, kt or Optuna alone, so a version moves whenever anything a FrozenTrial holds changes.
    False where the database cannot take them (read-only): its trials are then read in full."""
    import sqlalchemy
    import sqlalchemy.exc

    statements = [f"CREATE TABLE IF NOT EXISTS {VERSIONS} (trial_id INTEGER PRIMARY KEY, version INTEGER NOT NULL)"]
    for table in _VERSIONED_TABLES:
        events = ("INSERT", "UPDATE") if table == "trials" else ("INSERT", "UPDATE", "DELETE")
        for event in events:
            row = "OLD" if event == "DELETE" else "NEW"
            statements.append(
                f"CREATE TRIGGER IF NOT EXISTS {VERSIONS}_{table}_{event.lower()} AFTER {event} ON {table} BEGIN "
                f"INSERT INTO {VERSIONS} (trial_id, version) VALUES ({row}.trial_id, 1) "
                f"ON CONFLICT (trial_id) DO UPDATE SET version = version + 1; END")
    try:
        with engine.begin() as connection:
            for statement in statements:
                connection.execute(sqlalchemy.text(statement))
    except sqlalchemy.exc.OperationalError:
        return False
    return True


class VersionedTrialReads(CoreTrialReads):
    """Running trials read again only where they changed. Optuna's cached storage keeps the finished
    trials and, at every look at the study, reads again every unfinished one it knows of: with `kt tune
    --workers N` about 16 N running trials, each from six tables, though a running trial is written only
    when it is made, when it draws its point and when it ends. Where the database keeps versions
    (track_versions: SQLite), a look reads the versions of the trials it is asked for, one query, and
    reads in full only those whose version moved since this process read them last, or that have none.
    The version is read before the trial: a write that lands between the two leaves the trial as read
    newer than its version says, and the next look reads it again. Finished trials are not kept here
    (Optuna's cache keeps them and does not ask again)."""

    versioned = False  # whether the database keeps versions (storage.open_storage runs track_versions)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._as_read: dict[int, tuple[int, object]] = {}  # trial id -> (its version, the FrozenTrial read at it)
        self._as_read_lock = threading.Lock()

    def _get_trials(self, study_id, states, included_trial_ids, trial_id_greater_than):
        if not self.versioned or states is not None:
            return super()._get_trials(study_id, states, included_trial_ids, trial_id_greater_than)
        _, where = _chosen(study_id, None, included_trial_ids, trial_id_greater_than)
        with _create_scoped_session(self.scoped_session) as session:
            models.StudyModel.find_or_raise_by_id(study_id, session)
            versions = _versions(session, where)
        return self._as_of(versions)

    def _as_of(self, versions: dict[int, int | None]) -> list:
        """The trials of `versions` (trial id -> version, None where it has none), in trial id order: as
        read before where the version is the same, read now where it is not."""
        import sqlalchemy.exc

        with self._as_read_lock:
            kept = {i: self._as_read[i][1] for i, v in versions.items()
                    if v is not None and i in self._as_read and self._as_read[i][0] == v}
        stale = [i for i in versions if i not in kept]
        read = []
        if stale:
            trial = models.TrialModel.__table__
            with _create_scoped_session(self.scoped_session) as session:
                try:
                    read = _frozen_trials(*_rows(session, trial.c.trial_id.in_(stale)))
                except sqlalchemy.exc.OperationalError:  # more ids than one IN takes: a query each
                    read = [t for i in stale for t in _frozen_trials(*_rows(session, trial.c.trial_id == i))]
        with self._as_read_lock:
            for t in read:
                if t.state.is_finished():
                    self._as_read.pop(t._trial_id, None)
                elif versions[t._trial_id] is not None:
                    self._as_read[t._trial_id] = (versions[t._trial_id], t)
        out = {**kept, **{t._trial_id: t for t in read}}
        return [out[i] for i in sorted(out)]


def _versions(session, where) -> dict[int, int | None]:
    """The version of each trial `where` picks (None for a trial that has none)."""
    import sqlalchemy

    trial = models.TrialModel.__table__
    versions = sqlalchemy.table(VERSIONS, sqlalchemy.column("trial_id"), sqlalchemy.column("version"))
    found = session.execute(sqlalchemy.select(trial.c.trial_id, versions.c.version)
                            .select_from(trial.outerjoin(versions, versions.c.trial_id == trial.c.trial_id))
                            .where(where)).all()
    return {trial_id: version for trial_id, version in found}
