"""The Ledger: how every process sharing a study sees which points are spent, taken or queued. An
enqueued trial (a seed, a dead worker's retry) carries its point in its fixed params until it runs, and
keeps that point reserved until it claims it: a trial sampled meanwhile must not evaluate it first."""

import json

import optuna

from kt_cli.search.ledger import CLAIM, Budget, Ledger

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _key(point: dict) -> str:
    return json.dumps(point, sort_keys=True)


def _dead(study, claimed: bool) -> int:
    """A trial whose process died: after claiming its unit of budget, or before (inside ask())."""
    trial = study.ask()
    if claimed:
        trial.set_user_attr(CLAIM, trial.number)
    study._storage.set_trial_state_values(trial._trial_id, optuna.trial.TrialState.FAIL)
    return trial.number


def _queue_retry(study, point: dict, dead: int) -> None:
    study.enqueue_trial(point)
    retry = study.get_trials(deepcopy=False)[-1]
    study._storage.set_trial_system_attr(retry._trial_id, "failed_trial", dead)


def _study_with_a_seed_and_a_retry():
    study = optuna.create_study()
    _queue_retry(study, {"BLOCK_N": 1024, "num_warps": 4}, _dead(study, claimed=True))  # popped first
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


def test_a_retry_of_a_trial_that_died_before_claiming_holds_no_budget():
    # Seen with three processes on PostgreSQL: the killed one had two claimed trials and one still in
    # ask(); all three came back as retries, and the unclaimed one's retry took the last unit while a
    # claimed point's retry was skipped, so a point the sampler had chosen was never evaluated.
    study = optuna.create_study()
    claimed, unclaimed = _dead(study, claimed=True), _dead(study, claimed=False)
    _queue_retry(study, {"BLOCK_N": 1024, "num_warps": 4}, claimed)
    _queue_retry(study, {"BLOCK_N": 512, "num_warps": 2}, unclaimed)
    ledger = Ledger.read(study)
    assert ledger.retries == 1
    budget = Budget(trials=2, valid_points=None)
    assert not budget.taken(ledger, queued_retries=True)  # one unit left for a new point
    claimed_retry = study.ask()  # the claimed point's retry, popped first, may claim its held unit
    assert not budget.taken(Ledger.read(study, claimed_retry.number), queued_retries=True)


def test_an_enqueued_point_ending_with_one_grid_point_left_does_not_stop_the_study_with_an_error():
    # Optuna's GridSampler read the grid id of every ending trial; a point kt enqueues (a module's SEEDS,
    # a retry) has none, and ending one with one grid point left raised KeyError('grid_id') out of kt tune
    import optuna

    from kt_cli.recipe.space import SearchSpace, parse_param
    from kt_cli.search.sampler import make_sampler

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = SearchSpace((parse_param("BLOCK", [512, 1024], "test"),), ())
    study = optuna.create_study(sampler=make_sampler("grid", 0, space))
    objective = lambda trial: float(trial.suggest_categorical("BLOCK", [512, 1024]))  # noqa: E731
    study.optimize(objective, n_trials=1)
    left = 1024 if study.trials[0].params["BLOCK"] == 512 else 512
    study.enqueue_trial({"BLOCK": 1536 - left})  # the point already tried, as a seed or retry would be
    study.optimize(objective, n_trials=1)
    study.optimize(objective, n_trials=3)  # the grid's last point, then the study stops by itself
    assert sorted(t.params["BLOCK"] for t in study.trials) == sorted([512, 1024, 1536 - left])
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)


def test_a_retry_of_a_sampled_point_keeps_its_unit_while_it_runs_unclaimed():
    # Optuna's retry callback gives a retry its dead trial's params and no fixed params (unless the dead
    # trial was itself enqueued). Seen in CI on PostgreSQL: such a retry, popped and still deciding,
    # held no unit, a trial beside it took the last one, and the retry was then skipped, so a point
    # the sampler had chosen, lost with a killed worker, was never evaluated.
    from kt_cli.search.recovery import _queue_retry

    study = optuna.create_study()
    done = study.ask()
    done.suggest_categorical("BLOCK_N", [256, 512, 1024])
    done.set_user_attr("result", json.dumps({"failure_kind": "ok"}))
    study.tell(done, 1.0)
    dead = study.ask()
    point = {"BLOCK_N": dead.suggest_categorical("BLOCK_N", [256, 512, 1024])}
    dead.set_user_attr(CLAIM, dead.number)
    study._storage.set_trial_state_values(dead._trial_id, optuna.trial.TrialState.FAIL)
    _queue_retry(study, study.get_trials(deepcopy=False)[dead.number])
    retry = study.ask()  # pops the retry: running, deciding, not claimed yet
    beside = study.ask()  # a trial sampled beside it
    budget = Budget(trials=2, valid_points=None)
    seen = Ledger.read(study, beside.number)
    assert _key(point) in seen.queued and seen.retries == 1
    assert budget.taken(seen, queued_retries=True)  # the last unit is the retry's: `beside` must not claim it
    assert not budget.taken(Ledger.read(study, retry.number), queued_retries=True)
