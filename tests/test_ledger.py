"""The Ledger: how every process sharing a study sees which points are spent, taken or queued. An
enqueued trial (a seed, a dead worker's retry) carries its point in its fixed params until it runs, and
keeps that point reserved until it claims it: a trial sampled meanwhile must not evaluate it first."""

import json

import optuna

from kt_cli.search.ledger import Ledger

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _key(point: dict) -> str:
    return json.dumps(point, sort_keys=True)


def _study_with_a_seed_and_a_retry():
    study = optuna.create_study()
    study.enqueue_trial({"BLOCK_N": 1024, "num_warps": 4})  # the retry, popped first
    retry = study.get_trials(deepcopy=False)[-1]
    study._storage.set_trial_system_attr(retry._trial_id, "failed_trial", 7)
    study.enqueue_trial({"BLOCK_N": 4096, "num_warps": 8})  # a seed
    return study


def test_queued_points_are_the_enqueued_points_and_only_retries_hold_budget():
    ledger = Ledger.read(_study_with_a_seed_and_a_retry())
    assert set(ledger.queued) == {_key({"BLOCK_N": 1024, "num_warps": 4}), _key({"BLOCK_N": 4096, "num_warps": 8})}
    assert ledger.retries == 1  # a seed is a suggestion; a retry is a unit of budget already taken once


def test_a_retry_keeps_its_point_while_it_runs_unclaimed():
    study = _study_with_a_seed_and_a_retry()
    running = study.ask()  # pops the retry: running, its params not suggested yet, not claimed
    ledger = Ledger.read(study)
    assert _key({"BLOCK_N": 1024, "num_warps": 4}) in ledger.queued
    assert ledger.retries == 1 and running.number in ledger.undecided
    # the retry's own view leaves itself out: it may claim its point
    mine = Ledger.read(study, running.number)
    assert _key({"BLOCK_N": 1024, "num_warps": 4}) not in mine.queued and mine.retries == 0
