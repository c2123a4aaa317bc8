"""kt's Optuna storages: every trial this process starts running is owned from that moment
(kt_cli.search.liveness.TrialKeeper), and a trial's state changes in one step. Imported only when a
storage is opened (it imports Optuna)."""

from __future__ import annotations

import datetime

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


class KtRDBStorage(TrialKeeper, OneStepStates):
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
