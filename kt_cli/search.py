"""The Optuna study driver: one study per (target, problem), resumable, knows nothing of vendors.

An objective evaluates one point through `evaluate(params) -> TrialResult`. Points that break a
constraint are pruned before anything runs; points already tried are answered from the study;
failed candidates are marked failed (never scored with a huge number). Every trial keeps its
TrialResult as the user attribute "result", so the study alone can rebuild trials.jsonl.
"""

from __future__ import annotations

import inspect
import json
import random
from dataclasses import dataclass
from typing import Callable

from kt_cli.errors import EnvironmentProblem
from kt_cli.space import SearchSpace
from kt_cli.types import TrialResult

HEARTBEAT_S = 5
GRACE_S = 20
MAX_DUPLICATES_IN_A_ROW = 20


class CandidateFailed(Exception):
    """Raised inside the objective so Optuna records the trial as failed."""


def make_sampler(name: str, seed: int, space: SearchSpace, parallel: bool = False):
    import warnings

    import optuna

    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    warnings.filterwarnings("ignore", category=FutureWarning, module="optuna")
    if name == "tpe":
        # constant_liar: points in flight count as bad, so parallel asks do not pile onto one region
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=8, multivariate=True, group=True,
                                          constant_liar=parallel)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "grid":
        return optuna.samplers.GridSampler({p.name: p.all_values() for p in space.params}, seed=seed)
    if name == "cmaes":
        try:
            import cmaes  # noqa: F401
        except ImportError:
            raise EnvironmentProblem("search.sampler = \"cmaes\" needs the cmaes package: pip install cmaes") from None
        return optuna.samplers.CmaEsSampler(seed=seed)
    if name == "gp":
        try:
            import scipy  # noqa: F401
        except ImportError:
            raise EnvironmentProblem("search.sampler = \"gp\" needs scipy: pip install scipy") from None
        return optuna.samplers.GPSampler(seed=seed)
    raise ValueError(name)


def open_storage(url: str):
    """RDB storage with heartbeats: a trial whose process died is failed and retried once."""
    import warnings

    import optuna
    from optuna import storages

    if not url.startswith(("sqlite:", "postgresql", "mysql")):
        return storages.JournalStorage(storages.journal.JournalFileBackend(url))
    retry = getattr(storages, "RetryHeartbeatStaleTrialCallback", None) or storages.RetryFailedTrialCallback
    callback_key = ("heartbeat_stale_trial_callback"
                    if "heartbeat_stale_trial_callback" in inspect.signature(storages.RDBStorage.__init__).parameters
                    else "failed_trial_callback")
    kwargs = {"heartbeat_interval": HEARTBEAT_S, "grace_period": GRACE_S}
    if url.startswith("sqlite:"):
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": 60}}
    with warnings.catch_warnings():  # heartbeats are "experimental" in Optuna's words, and what kt needs
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        warnings.simplefilter("ignore", FutureWarning)
        kwargs[callback_key] = retry(max_retry=1)
        return storages.RDBStorage(url, **kwargs)


def trial_result(trial) -> TrialResult | None:
    data = trial.user_attrs.get("result")
    return TrialResult.from_json(json.loads(data)) if data else None


def evaluated(study, count_invalid: bool = True) -> list:
    """Trials that ran a candidate (not pruned by a constraint, not answered as a duplicate); without
    `count_invalid`, also not those refused as invalid by the vendor before or after compiling."""
    import optuna

    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL)
    trials = [t for t in study.get_trials(deepcopy=False, states=done)
              if "result" in t.user_attrs and "duplicate_of" not in t.user_attrs]
    if count_invalid:
        return trials
    return [t for t in trials if json.loads(t.user_attrs["result"])["failure_kind"] != "invalid"]


def _key(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


@dataclass
class StudyRun:
    """Drives one study up to `budget` evaluated candidates."""

    study_name: str
    storage: object
    space: SearchSpace
    env: Callable[[dict], dict]  # params -> constraint environment (params + shape + target)
    evaluate: Callable[[dict], TrialResult]
    invalid_result: Callable[[dict, str], TrialResult]
    budget: int
    sampler: str
    seed: int
    on_result: Callable[[TrialResult], None] = lambda r: None

    def run(self, valid_points: int | None, in_flight: int = 1) -> object:
        """Evaluate up to the budget; `in_flight` candidates at once (threads, each on its own worker)."""
        import threading

        import optuna

        optuna.logging.set_verbosity(optuna.logging.ERROR)  # kt reports failures itself, without tracebacks
        study = optuna.create_study(study_name=self.study_name, storage=self.storage, direction="minimize",
                                    sampler=make_sampler(self.sampler, self.seed, self.space, in_flight > 1),
                                    load_if_exists=True)
        # params key -> (trial number, value or None when it failed, stored result)
        seen = {_key(t.params): (t.number, t.value if t.state == optuna.trial.TrialState.COMPLETE else None,
                                 t.user_attrs["result"]) for t in evaluated(study)}
        running: set[str] = set()
        lock = threading.Lock()
        state = {"duplicates": 0}
        rng = random.Random(self.seed)

        spent = {"here": 0, "before": len(evaluated(study, count_invalid=False))}

        def remaining() -> int:
            # a trial finished here counts before Optuna records it; other processes' trials via the study
            done = max(len(evaluated(study, count_invalid=False)), spent["before"] + spent["here"])
            left = self.budget - done
            if valid_points is not None:
                left = min(left, valid_points - len(seen))
            return left

        def objective(trial):
            params = {p.name: p.suggest(trial) for p in self.space.params}
            broken = self.space.violated(self.env(params))
            if broken is not None:
                result = self.invalid_result(params, f"breaks constraint {broken.text!r}")
                trial.set_user_attr("result", json.dumps(result.to_json()))
                self.on_result(result)
                raise optuna.TrialPruned()
            key = _key(params)
            with lock:
                previous = seen.get(key)
                duplicate = previous is not None or key in running
                if not duplicate and remaining() - len(running) <= 0:
                    raise optuna.TrialPruned()  # the budget is taken by candidates already in flight
                if not duplicate:
                    running.add(key)
                    state["duplicates"] = 0
                else:
                    state["duplicates"] += 1
                    if state["duplicates"] >= MAX_DUPLICATES_IN_A_ROW:
                        self._enqueue_untried(study, set(seen) | running, rng)
                        state["duplicates"] = 0
            if duplicate:
                if previous is None:  # the same point is being evaluated by another thread right now
                    raise optuna.TrialPruned()
                number, value, stored = previous
                trial.set_user_attr("duplicate_of", number)
                trial.set_user_attr("result", stored)
                if value is not None:
                    return value
                raise CandidateFailed("duplicate of a failed point")
            try:
                result = self.evaluate(params)
            except BaseException:
                with lock:
                    running.discard(key)
                raise
            stored = json.dumps(result.to_json())
            trial.set_user_attr("result", stored)
            ok = result.ok and result.value is not None
            with lock:
                seen[key] = (trial.number, result.value if ok else None, stored)
                spent["here"] += result.failure_kind != "invalid"
                running.discard(key)
            self.on_result(result)
            if ok:
                return result.value
            raise CandidateFailed(f"{result.failure_kind}: {result.message}")

        def stop_when_spent(study, _trial):
            if remaining() <= 0:
                study.stop()

        if remaining() > 0:
            study.optimize(objective, callbacks=[stop_when_spent], catch=(CandidateFailed,),
                           n_trials=max(1, self.budget) * 50 + 200, n_jobs=max(1, in_flight), gc_after_trial=False)
        return study

    def _enqueue_untried(self, study, seen: set, rng: random.Random) -> None:
        """The sampler keeps proposing tried points: hand it a valid untried one (small spaces)."""
        if self.space.size() > 200_000:
            return
        untried = [p for p in self.space.points()
                   if _key(p) not in seen and self.space.violated(self.env(p)) is None]
        if untried:
            study.enqueue_trial(rng.choice(untried), skip_if_exists=True)
