"""The study storage as a user sees it on disk, and the turn-taking of a study's trials in one process.

SQLite runs in write-ahead-log mode (kt_cli.search.storage._write_ahead): a run that ends leaves the one
NAME.study.db file, and a run that is killed loses nothing it committed."""

import os
import signal
import subprocess
import sys
import threading
import time
import types

import optuna

from kt_cli.search.storage import open_storage

optuna.logging.set_verbosity(optuna.logging.WARNING)

WRITER = """
import os, signal, sys
import optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
from kt_cli.search.storage import open_storage
study = optuna.create_study(study_name="s", storage=open_storage(sys.argv[1]), load_if_exists=True)
study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=int(sys.argv[2]))
if sys.argv[3] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _write(url: str, trials: int, end: str) -> int:
    return subprocess.run([sys.executable, "-c", WRITER, url, str(trials), end], capture_output=True).returncode


def test_a_finished_run_leaves_only_the_database_file(tmp_path):
    url = f"sqlite:///{tmp_path / 'recipe.study.db'}"
    assert _write(url, 3, "exit") == 0
    assert sorted(os.listdir(tmp_path)) == ["recipe.study.db"]  # the log folded in when the run ended
    study = optuna.load_study(study_name="s", storage=open_storage(url))
    assert len(study.trials) == 3


def test_a_killed_run_loses_no_committed_trial(tmp_path):
    url = f"sqlite:///{tmp_path / 'recipe.study.db'}"
    assert _write(url, 4, "kill") == -signal.SIGKILL
    assert "recipe.study.db-wal" in os.listdir(tmp_path)  # the commits are in the log the kill left behind
    assert _write(url, 2, "exit") == 0  # a resumed run replays it
    study = optuna.load_study(study_name="s", storage=open_storage(url))
    assert [t.state for t in study.trials] == [optuna.trial.TrialState.COMPLETE] * 6


def test_a_trial_waiting_for_its_turn_wakes_when_one_of_this_process_decides(monkeypatch):
    """Trials of a study decide one at a time; one of this process that decides must wake the next at once,
    not after the waiting one's pause (here 30 s: without the wake-up the test times out)."""
    from kt_cli.search import objective as objective_module

    undecided = {3}
    monkeypatch.setattr(objective_module, "TURN_POLL_S", 30.0)
    monkeypatch.setattr(objective_module, "POLL_S", 60.0)
    monkeypatch.setattr(objective_module.Ledger, "read",
                        staticmethod(lambda study, number=None: types.SimpleNamespace(undecided=set(undecided),
                                                                                     evaluated={})))
    problem = types.SimpleNamespace()  # no observe(): nothing of other processes to hand over
    objective = objective_module.Objective(None, None, problem, None, 0, lambda r: None, {})
    returned = threading.Event()
    waiter = threading.Thread(target=lambda: (objective._my_turn(types.SimpleNamespace(number=4)), returned.set()))
    started = time.monotonic()
    waiter.start()
    time.sleep(0.2)
    assert not returned.is_set()  # trial 3, ahead of it, has not decided
    undecided.clear()
    objective.decided()
    waiter.join(timeout=10)
    assert returned.is_set() and time.monotonic() - started < 10


def test_only_the_first_trial_in_line_reads_the_ledger_often_and_it_sees_another_process_decide(monkeypatch):
    """What trial 3 (another process's) does can only be read from the storage: this process's first
    waiting trial reads it every TURN_POLL_S and goes on as soon as it decided; the one behind it waits
    for this process's own decisions instead of reading the storage as often (4 workers: each hand-off
    between processes cost up to half a second when every waiting trial polled on a doubling pause)."""
    from kt_cli.search import objective as objective_module

    undecided, reads, went_on = {3}, {4: 0, 5: 0}, {}  # went_on: a trial that got its turn decides (claims)

    def read(study, number=None):
        reads[number] += 1
        return types.SimpleNamespace(undecided={n for n in undecided | ({4, 5} - set(went_on)) if n < number},
                                     evaluated={})

    monkeypatch.setattr(objective_module, "TURN_POLL_S", 0.02)
    monkeypatch.setattr(objective_module, "POLL_S", 60.0)
    monkeypatch.setattr(objective_module.Ledger, "read", staticmethod(read))
    objective = objective_module.Objective(None, None, types.SimpleNamespace(), None, 0, lambda r: None, {})

    def wait_turn(number):
        objective._my_turn(types.SimpleNamespace(number=number))
        went_on[number] = time.monotonic()

    waiters = [threading.Thread(target=wait_turn, args=(n,)) for n in (4, 5)]
    for waiter in waiters:
        waiter.start()
    time.sleep(0.5)
    assert not went_on and reads[4] >= 10 and reads[5] <= 2
    decided = time.monotonic()
    undecided.clear()  # another process's trial 3 decided: nothing wakes this process but its reads
    waiters[0].join(timeout=5)
    assert went_on[4] - decided < 1.0
    objective.decided()  # trial 4 decided: 5 is woken, and it is first in line now
    waiters[1].join(timeout=5)
    assert 5 in went_on
