"""Which running trials are dead, and what becomes of them (kt_cli.search.liveness, .recovery): an
owner from the moment a trial exists, death seen at once on this machine and after the heartbeat's
grace period from elsewhere, a live owner never failed, a recorded result kept, a point re-queued."""

from __future__ import annotations

import json
import sqlite3
import subprocess

import optuna
import pytest

from kt_cli.processes import MACHINE
from kt_cli.search.ledger import CLAIM
from kt_cli.search.liveness import GRACE_S, OWNER
from kt_cli.search.recovery import RETRY_WINDOW_S, fail_dead_trials
from kt_cli.search.storage import open_storage

optuna.logging.set_verbosity(optuna.logging.WARNING)
STATE = optuna.trial.TrialState
POINT = {"BLOCK": 256, "warps": 4}
CHOICES = {"BLOCK": [256, 512], "warps": [2, 4]}


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "study.db"
    storage = open_storage(f"sqlite:///{path}")
    study = optuna.create_study(study_name="s", storage=storage, sampler=optuna.samplers.RandomSampler(seed=0))
    return study, storage, path


def _unkept(path):
    """The study through Optuna's own storage: trials made there have no owner and no heartbeat, and no
    thread of this process renews them (another process's trials, as far as kt can tell)."""
    return optuna.load_study(study_name="s", storage=optuna.storages.RDBStorage(f"sqlite:///{path}"))


def _running(study, point=POINT, claimed=True):
    study.enqueue_trial(point)
    trial = study.ask()
    for name, value in point.items():
        trial.suggest_categorical(name, CHOICES[name])
    if claimed:
        trial.set_user_attr(CLAIM, trial.number)
    return trial


def _dead_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


def _sql(path, statement, *args) -> None:
    with sqlite3.connect(path) as con:
        con.execute(statement, args)


def _age(path, trial, seconds: float) -> None:
    """Make the trial's heartbeat and start `seconds` old (the database keeps UTC, datetime_start local)."""
    _sql(path, "update trial_heartbeats set heartbeat = datetime('now', ?) where trial_id = ?",
         f"-{seconds} seconds", trial._trial_id)
    _sql(path, "update trials set datetime_start = datetime('now', 'localtime', ?) where trial_id = ?",
         f"-{seconds} seconds", trial._trial_id)


def _retries_of(study, number) -> list:
    return [t for t in study.get_trials(deepcopy=False) if t.system_attrs.get("failed_trial") == number]


class RecordingSampler(optuna.samplers.RandomSampler):
    """Reads, from inside ask(), what the storage holds about the trial being created."""

    seen: dict = {}

    def before_trial(self, study, trial):
        RecordingSampler.seen = dict(study._storage.get_trial(trial._trial_id).system_attrs)


def test_a_trial_has_an_owner_and_a_heartbeat_before_the_sampler_runs(db):
    study, storage, path = db
    sampled = optuna.load_study(study_name="s", storage=storage, sampler=RecordingSampler())
    trial = sampled.ask()
    assert RecordingSampler.seen[OWNER]["machine"] == MACHINE
    assert trial._trial_id in storage.heartbeat_ages(study._study_id)


def _write_transactions(storage) -> list:
    """The write transactions `storage` commits from now on (a commit after an INSERT, UPDATE or DELETE)."""
    import sqlalchemy

    wrote, committed = [], []
    sqlalchemy.event.listen(storage.engine, "before_cursor_execute", lambda conn, cursor, statement, *rest:
                            wrote.append(1) if statement.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
                            else None)
    sqlalchemy.event.listen(storage.engine, "commit", lambda conn: (committed.append(1) if wrote else None,
                                                                    wrote.clear()))
    return committed


def test_a_trial_is_made_owned_and_given_its_first_heartbeat_in_one_write_and_a_taken_one_is_not_written(db):
    """The processes of a host queue for SQLite's one writer (with four workers a write transaction took
    55-88 ms): a trial asked for is made with its owner record and first heartbeat in one transaction, and
    a thread whose look at the queue is a moment old does not write to a queued trial already taken."""
    study, storage, _ = db
    committed = _write_transactions(storage)
    trial = study.ask()
    assert len(committed) == 1
    assert OWNER in storage.get_trial(trial._trial_id).system_attrs
    assert trial._trial_id in storage.heartbeat_ages(study._study_id)
    study.enqueue_trial(POINT)
    queued = next(t for t in study.get_trials(deepcopy=False) if t.state == STATE.WAITING)
    assert storage.set_trial_state_values(queued._trial_id, STATE.RUNNING)
    del committed[:]
    assert not storage.set_trial_state_values(queued._trial_id, STATE.RUNNING)  # taken: refused, nothing written
    assert committed == []


def test_every_owned_trials_heartbeat_is_renewed_in_one_write(db):
    """A process renews the heartbeats of all its running trials (about sixteen) every HEARTBEAT_S: one
    write transaction for all of them, not one each."""
    study, storage, path = db
    trials = [study.ask() for _ in range(3)]
    for trial in trials:
        _age(path, trial, 10)
    committed = _write_transactions(storage)
    storage._beat_all([t._trial_id for t in trials])
    assert len(committed) == 1
    assert all(age < 5 for age in storage.heartbeat_ages(study._study_id).values())


def test_a_trial_whose_owner_died_here_is_failed_at_once_and_its_point_queued(db):
    study, storage, _ = db
    lost = _running(study)
    storage.set_trial_system_attr(lost._trial_id, OWNER, {"machine": MACHINE, "pid": _dead_pid(), "started": None})
    fail_dead_trials(study, storage)
    assert study.get_trials(deepcopy=False)[lost.number].state == STATE.FAIL
    (retry,) = _retries_of(study, lost.number)
    assert retry.state == STATE.WAITING and retry.params == POINT and OWNER not in retry.system_attrs


def test_a_live_owner_is_never_failed_even_when_its_heartbeat_is_old(db):
    study, storage, path = db
    mine = _running(study)
    _age(path, mine, 10 * GRACE_S)
    fail_dead_trials(study, storage)
    assert study.get_trials(deepcopy=False)[mine.number].state == STATE.RUNNING


def test_an_owner_elsewhere_is_judged_by_its_heartbeat(db):
    study, storage, path = db
    elsewhere = _unkept(path)
    fresh, stale = _running(elsewhere), _running(elsewhere, {"BLOCK": 512, "warps": 2})
    for trial in (fresh, stale):
        elsewhere._storage.record_heartbeat(trial._trial_id)
        storage.set_trial_system_attr(trial._trial_id, OWNER, {"machine": "another host", "pid": 1, "started": None})
    _age(path, stale, GRACE_S + 5)
    fail_dead_trials(study, storage)
    states = {t.number: t.state for t in study.get_trials(deepcopy=False)}
    assert states[fresh.number] == STATE.RUNNING and states[stale.number] == STATE.FAIL


def test_a_trial_that_never_recorded_an_owner_is_failed_after_the_grace_period(db):
    study, storage, path = db
    elsewhere = _unkept(path)
    young, old = _running(elsewhere), _running(elsewhere, {"BLOCK": 512, "warps": 2})
    _age(path, old, GRACE_S + 5)
    fail_dead_trials(study, storage)
    states = {t.number: t.state for t in study.get_trials(deepcopy=False)}
    assert states[young.number] == STATE.RUNNING and states[old.number] == STATE.FAIL


def test_a_dead_trial_keeps_the_result_it_recorded_and_runs_nothing_again(db):
    study, storage, _ = db
    lost = _running(study)
    result = {"failure_kind": "ok", "params": POINT, "target": "t", "shape": {}, "mode": "estimated", "value": 2e-6}
    lost.set_user_attr("result", json.dumps(result))
    storage.set_trial_system_attr(lost._trial_id, OWNER, {"machine": MACHINE, "pid": _dead_pid(), "started": None})
    fail_dead_trials(study, storage)
    settled = study.get_trials(deepcopy=False)[lost.number]
    assert settled.state == STATE.COMPLETE and settled.value == 2e-6
    assert not _retries_of(study, lost.number)


def test_a_point_left_unqueued_by_a_process_that_died_while_settling_is_queued(db):
    study, storage, path = db
    lost = _running(study)
    study.tell(lost, state=STATE.FAIL)  # failed by a process that died before it queued the retry
    fail_dead_trials(study, storage)
    assert not _retries_of(study, lost.number)  # the process that failed it may still be queueing it
    _sql(path, "update trials set datetime_complete = datetime('now', 'localtime', ?) where trial_id = ?",
         f"-{RETRY_WINDOW_S + 5} seconds", lost._trial_id)
    study = optuna.load_study(study_name="s", storage=storage)  # a later process: nothing cached
    fail_dead_trials(study, storage)
    assert [t.params for t in _retries_of(study, lost.number)] == [POINT]


def test_a_queued_trial_is_taken_once_and_finished_once(db):
    """SQLite lets Optuna's read-then-write state change succeed twice; kt's storage changes it in one
    conditional step, so of eight processes taking one queued trial one wins, and a trial finishes once."""
    import threading

    study, storage, path = db
    study.enqueue_trial(POINT)
    queued = study.get_trials(deepcopy=False)[-1]._trial_id
    takers = [open_storage(f"sqlite:///{path}") for _ in range(8)]
    start, won = threading.Barrier(len(takers)), []

    def take(storage):
        start.wait()
        won.append(storage.set_trial_state_values(queued, STATE.RUNNING))

    threads = [threading.Thread(target=take, args=(s,)) for s in takers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == [False] * 7 + [True]
    assert takers[0].set_trial_state_values(queued, STATE.COMPLETE, [1.0])
    with pytest.raises(optuna.exceptions.UpdateFinishedTrialError):
        takers[1].set_trial_state_values(queued, STATE.PRUNED)
    assert storage.get_trial(queued).state == STATE.COMPLETE and storage.get_trial(queued).value == 1.0


def test_the_pairing_worker_waits_for_other_processes_last_trials_but_not_for_dead_ones(db):
    # the first `kt tune --workers` worker pairs each study's winner once no trial of it runs: another
    # worker's last trial may still find a better one (kt_cli.search.studies.wait_for_running_trials)
    import threading
    import time

    from kt_cli.search.studies import wait_for_running_trials

    study, storage, _ = db
    live = _running(study)  # owned by this process: alive
    threading.Timer(0.6, lambda: study.tell(live, 1.0)).start()
    started = time.monotonic()
    wait_for_running_trials(study, storage, 30)
    assert 0.5 < time.monotonic() - started < 10 and study.trials[live.number].state == STATE.COMPLETE

    lost = _running(study, {"BLOCK": 512, "warps": 2})
    storage.set_trial_system_attr(lost._trial_id, OWNER, {"machine": MACHINE, "pid": _dead_pid(), "started": None})
    started = time.monotonic()
    wait_for_running_trials(study, storage, 30)
    assert time.monotonic() - started < 5 and study.trials[lost.number].state == STATE.FAIL

    stuck = _running(study, {"BLOCK": 512, "warps": 4})  # alive and never ending: only the deadline ends the wait
    started = time.monotonic()
    wait_for_running_trials(study, storage, 0.5)
    assert 0.4 < time.monotonic() - started < 5 and study.trials[stuck.number].state == STATE.RUNNING
