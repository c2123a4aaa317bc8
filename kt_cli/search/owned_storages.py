"""kt's Optuna storages: every trial this process starts running is owned from that moment
(kt_cli.search.liveness.TrialKeeper), and a trial's state changes in one step. Imported only when a
storage is opened (it imports Optuna)."""

from __future__ import annotations

import datetime
import threading

from optuna.storages import JournalStorage, RDBStorage
from optuna.storages._rdb import models
from optuna.storages._rdb.storage import _create_scoped_session
from optuna.trial import TrialState

from kt_cli.search.liveness import TrialKeeper


class OneStepStates(RDBStorage):
    def set_trial_state_values(self, trial_id, state, values=None) -> bool:
        """Optuna reads a trial's state, then writes the new one: on SQLite two processes or threads can
        then both take one queued trial, or one finish a trial another has just finished, and a reader
        in between may keep a state that did not last. Here one conditional UPDATE decides: the state
        changes only from WAITING to RUNNING or from RUNNING to a finished state, by the first writer."""
        if state != TrialState.RUNNING and not state.is_finished():
            return super().set_trial_state_values(trial_id, state, values=values)
        expected = TrialState.WAITING if state == TrialState.RUNNING else TrialState.RUNNING
        when = "datetime_start" if state == TrialState.RUNNING else "datetime_complete"
        with _create_scoped_session(self.scoped_session) as session:
            trial = models.TrialModel.find_or_raise_by_id(trial_id, session)
            self.check_trial_is_updatable(trial_id, trial.state)
            changed = (session.query(models.TrialModel)
                       .filter(models.TrialModel.trial_id == trial_id, models.TrialModel.state == expected)
                       .update({"state": state, when: datetime.datetime.now()}, synchronize_session=False))
            if changed:
                for objective, value in enumerate(values or ()):
                    self._set_trial_value_without_commit(session, trial, objective, value)  # `trial` as read
        if changed:
            return True
        self.check_trial_is_updatable(trial_id, self.get_trial(trial_id).state)  # finished meanwhile
        if state == TrialState.RUNNING:
            return False  # another process or thread took it
        return super().set_trial_state_values(trial_id, state, values=values)  # finishing a queued trial


class DeferredTrialWrites(RDBStorage):
    """A trial's parameters and user attributes are written together, in one transaction, when the
    trial writes them (write_deferred: its decision reads the study after it) or before anything else
    touches the trial in the database (its state, a system attribute, reading it back). Optuna writes
    each in a transaction of its own: about 16 of a trial's 27 commits with ten parameters, and with
    four workers sharing one SQLite file on a 4x H100 host a trial spent 1.6 s outside its evaluation
    against 0.4 s alone (benchmarks/results/s16/scale80_a), waiting for the database's one writer. What
    other processes read meanwhile is the trial without them: a running trial that has not decided."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._deferred: dict[int, list] = {}
        self._deferred_lock = threading.Lock()

    def _defer(self, trial_id: int, write) -> None:
        with self._deferred_lock:
            self._deferred.setdefault(trial_id, []).append(write)

    def _set_trial_param(self, trial_id, param_name, param_value_internal, distribution, previous_distribution):
        self._defer(trial_id, lambda session: self._set_trial_param_without_commit(
            session, trial_id, param_name, param_value_internal, distribution, previous_distribution))

    def set_trial_user_attr(self, trial_id, key, value) -> None:
        self._defer(trial_id, lambda session: self._set_trial_attr_without_commit(
            session, models.TrialUserAttributeModel, trial_id, key, value))

    def write_deferred(self, trial_id: int) -> None:
        """Write what `trial_id` has set and not written, in order, in one transaction."""
        with self._deferred_lock:
            writes = self._deferred.pop(trial_id, None)
        if writes:
            with _create_scoped_session(self.scoped_session, True) as session:
                for write in writes:
                    write(session)

    def set_trial_state_values(self, trial_id, state, values=None) -> bool:
        self.write_deferred(trial_id)
        return super().set_trial_state_values(trial_id, state, values=values)

    def set_trial_system_attr(self, trial_id, key, value) -> None:
        self.write_deferred(trial_id)
        super().set_trial_system_attr(trial_id, key, value)

    def set_trial_intermediate_value(self, trial_id, step, intermediate_value) -> None:
        self.write_deferred(trial_id)
        super().set_trial_intermediate_value(trial_id, step, intermediate_value)

    def get_trial(self, trial_id: int):
        self.write_deferred(trial_id)
        return super().get_trial(trial_id)


class KtRDBStorage(TrialKeeper, DeferredTrialWrites, OneStepStates):
    def _create_new_trial(self, study_id, template_trial=None):
        trial = super()._create_new_trial(study_id, template_trial)
        if trial.state == TrialState.RUNNING:  # asked for, not enqueued: its owner is this process
            self._own(trial._trial_id)
        return trial

    def heartbeat_ages(self, study_id: int) -> dict[int, float]:
        """Seconds since the last heartbeat of each running trial that has one (the database's clock)."""
        import sqlalchemy

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
