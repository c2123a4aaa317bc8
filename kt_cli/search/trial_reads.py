"""A study's trials read through the database driver's own cursor, as Optuna's RDBStorage would build them.

Optuna's cached storage reads a study's unfinished trials again at every look (a budget ledger's read, a
sampler's), several times a trial. On a 2x H200 host each of two workers' processes spent 15-32 ms of CPU a
trial in these reads through SQLAlchemy Core, the largest part of the 40-75 ms a trial that held each process
at one CPU in the middle of a run (docs/performance.md, thirty-sixth session). Most of it was SQLAlchemy's
work around six small statements (building them, their cache keys, their results), not the database's: a
look at 20 running trials took 0.85 ms of CPU here against 0.15 ms for the same six statements on the
driver's cursor. The statements carry no bound parameters: what varies is a study's and trials' integer ids
and TrialState names, written into the SQL text, so one text serves every driver's parameter style and an IN
list of any length passes no driver's limit on parameters."""

from __future__ import annotations

import contextlib
import datetime
import functools
import json

from optuna.storages._rdb import models
from optuna.trial import FrozenTrial, TrialState

_TRIALS = "SELECT trial_id, number, state, datetime_start, datetime_complete FROM trials WHERE {where} ORDER BY trial_id"
# (what a FrozenTrial takes from it, the SELECT of its rows for the trials chosen): every child table of a trial
_CHILDREN = (
    ("params", "SELECT trial_id, param_name, param_value, distribution_json FROM trial_params"
               " WHERE trial_id IN ({chosen}) ORDER BY param_id"),
    ("values", "SELECT trial_id, objective, value, value_type FROM trial_values WHERE trial_id IN ({chosen})"),
    ("user", "SELECT trial_id, key, value_json FROM trial_user_attributes"
             " WHERE trial_id IN ({chosen}) ORDER BY trial_user_attribute_id"),
    ("system", "SELECT trial_id, key, value_json FROM trial_system_attributes"
               " WHERE trial_id IN ({chosen}) ORDER BY trial_system_attribute_id"),
    ("steps", "SELECT trial_id, step, intermediate_value, intermediate_value_type FROM trial_intermediate_values"
              " WHERE trial_id IN ({chosen}) ORDER BY trial_intermediate_value_id"),
)


def study_trials(study_id: int, states=None, included=(), after: int = -1) -> str:
    """The SQL condition on `trials` of RDBStorage._get_trials: the study's trials in `states` (None: any)
    and, where `after` > -1, only those whose id is in `included` or above `after`."""
    where = f"study_id = {int(study_id)}"
    if states is not None:
        where += " AND state IN (" + ", ".join(f"'{TrialState(s).name}'" for s in states) + ")"
    if after > -1:
        chosen = [int(i) for i in included if i <= after]
        above = f"trial_id > {int(after)}"
        where += f" AND (trial_id IN ({', '.join(map(str, chosen))}) OR {above})" if chosen else f" AND {above}"
    return where


def one_trial(trial_id: int) -> str:
    return f"trial_id = {int(trial_id)}"


def read_trials(engine, where: str) -> list[FrozenTrial]:
    """The FrozenTrials of the trials `where` picks, in trial id order."""
    chosen = f"SELECT trial_id FROM trials WHERE {where}"
    with _cursor(engine) as cursor:
        cursor.execute(_TRIALS.format(where=where))
        rows = cursor.fetchall()
        children = {}
        for name, select in _CHILDREN:
            cursor.execute(select.format(chosen=chosen))
            children[name] = cursor.fetchall()
    return frozen_trials(rows, children)


def study_exists(engine, study_id: int) -> bool:
    with _cursor(engine) as cursor:
        cursor.execute(f"SELECT 1 FROM studies WHERE study_id = {int(study_id)}")
        return cursor.fetchone() is not None


@contextlib.contextmanager
def _cursor(engine):
    """A cursor of the driver on a pooled connection; the driver's errors raised as Optuna's storage error."""
    from optuna.exceptions import StorageInternalError

    with engine.connect() as connection:
        cursor = connection.connection.cursor()
        try:
            yield cursor
        except engine.dialect.loaded_dbapi.Error as exc:
            raise StorageInternalError(f"reading trials failed: {exc}") from exc
        finally:
            cursor.close()


def frozen_trials(rows: list, children: dict) -> list[FrozenTrial]:
    """FrozenTrials as Optuna's RDBStorage._build_frozen_trial_from_trial_model builds them, from the
    driver's rows (its own types: a datetime or SQLite's text of one, an enum's name)."""
    by_trial = {name: {} for name in children}
    for name, found in children.items():
        for row in found:
            by_trial[name].setdefault(row[0], []).append(row)
    out = []
    for trial_id, number, state, started, completed in rows:
        values = None
        if trial_id in by_trial["values"]:
            values = [0.0] * len(by_trial["values"][trial_id])
            for _, objective, value, kind in by_trial["values"][trial_id]:
                values[objective] = models.TrialValueModel.stored_repr_to_value(
                    value, models.TrialValueModel.TrialValueType[kind])
        params = by_trial["params"].get(trial_id, [])
        out.append(FrozenTrial(
            number=number, state=TrialState[state], value=None, values=values, datetime_start=_when(started),
            datetime_complete=_when(completed),
            params={name: _distribution(spec).to_external_repr(value) for _, name, value, spec in params},
            distributions={name: _distribution(spec) for _, name, _, spec in params},
            user_attrs={key: json.loads(text) for _, key, text in by_trial["user"].get(trial_id, [])},
            system_attrs={key: json.loads(text) for _, key, text in by_trial["system"].get(trial_id, [])},
            intermediate_values={step: models.TrialIntermediateValueModel.stored_repr_to_intermediate_value(
                value, models.TrialIntermediateValueModel.TrialIntermediateValueType[kind])
                for _, step, value, kind in by_trial["steps"].get(trial_id, [])},
            trial_id=trial_id))
    return out


def _when(stored) -> datetime.datetime | None:
    """A stored datetime: the driver's datetime, or SQLite's text of one (SQLAlchemy writes ISO format)."""
    return datetime.datetime.fromisoformat(stored) if isinstance(stored, str) else stored


@functools.lru_cache(maxsize=1024)
def _distribution(spec: str):
    """A parameter's distribution from its stored JSON (a study's parameters share a handful of them)."""
    from optuna.distributions import json_to_distribution

    return json_to_distribution(spec)
