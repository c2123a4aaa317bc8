"""What becomes of a trial whose process died (kt_cli.search.liveness says which): it is settled from
what it had recorded, and a point it never evaluated goes back in the queue once (max_retry=1).

- It had evaluated its point (its result is recorded, its tell was lost): the result stands, the
  trial completes with its value or fails with its failure kind; nothing runs again.
- It had answered a duplicate or was pruned (a constraint, a skip): it ends as it would have.
- It had recorded nothing (it died inside ask(), while compiling, verifying or timing): it fails,
  and its point, if it had one, is queued for whichever process asks next.
"""

from __future__ import annotations

import copy
import datetime

from kt_cli.search.ledger import SKIPPED, awaits_retry, claimed
from kt_cli.search.liveness import OWNER, is_dead
from kt_cli.search.storage import sampler_state, trial_result

RETRY_WINDOW_S = 10.0  # a failed trial's retry is queued within this by the process that failed it


def fail_dead_trials(study, storage) -> None:
    """Settle every running trial of `study` whose owner died, and queue the retries a process that
    died while settling left unqueued. `storage` is the study's kt storage (kt_cli.search.storage)."""
    import optuna

    trials = study.get_trials(deepcopy=False)
    running = [t for t in trials if t.state == optuna.trial.TrialState.RUNNING]
    if running:
        ages = storage.heartbeat_ages(study._study_id)
        for t in running:
            if is_dead(t, None if ages is None else ages.get(t._trial_id), _age(t.datetime_start), ages is not None):
                _settle(study, t)
    retried = {t.system_attrs.get("failed_trial") for t in trials}
    for t in trials:
        if awaits_retry(t, retried) and _age(t.datetime_complete) > RETRY_WINDOW_S:
            _queue_retry(study, t)


def _age(when) -> float:
    if when is None:
        return 0.0
    return (datetime.datetime.now(when.tzinfo) - when).total_seconds()


def _settle(study, trial) -> None:
    import optuna

    state = optuna.trial.TrialState
    result = trial_result(trial)
    values = None
    if result is not None and ("duplicate_of" in trial.user_attrs or claimed(trial)):
        final = sampler_state(result)
        values = [result.value] if final == state.COMPLETE else None
    elif result is not None or SKIPPED in trial.user_attrs:
        final = state.PRUNED
    else:
        final = state.FAIL
    try:
        study._storage.set_trial_state_values(trial._trial_id, final, values)
    except optuna.exceptions.UpdateFinishedTrialError:
        return  # another process settled it first, and queues its retry
    if result is None and final == state.FAIL and (trial.params or "fixed_params" in trial.system_attrs):
        _queue_retry(study, trial)


def _queue_retry(study, trial) -> None:
    """Queue the trial's point once more; the retry starts without an owner, the process that takes
    it records itself."""
    import warnings

    import optuna

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        retry = getattr(optuna.storages, "RetryHeartbeatStaleTrialCallback", None) \
            or optuna.storages.RetryFailedTrialCallback
        callback = retry(max_retry=1)
    dead = copy.deepcopy(trial)
    dead.system_attrs = {k: v for k, v in dead.system_attrs.items() if k != OWNER}
    callback(study, dead)
