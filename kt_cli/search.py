"""The Optuna study driver: one study per (target, problem), resumable, knows nothing of vendors.

An objective evaluates one point through `evaluate(params) -> TrialResult`. Points that break a
constraint are pruned before anything runs; points already tried are answered from the study;
failed candidates are marked failed (never scored with a huge number). Every trial keeps its
TrialResult as the user attribute "result", so the study alone can rebuild trials.jsonl.

Several processes (local workers, other hosts) may drive one study through a shared storage: each
trial takes its unit of the budget in the storage before it evaluates (see Ledger), so the study ends
with exactly the budget of distinct points however many processes took part.
"""

from __future__ import annotations

import dataclasses
import datetime
import inspect
import itertools
import json
import os
import platform
import random
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

from kt_cli.errors import EnvironmentProblem
from kt_cli.space import SearchSpace
from kt_cli.types import TrialResult

HEARTBEAT_S = 5
GRACE_S = 20
MAX_DUPLICATES_IN_A_ROW = 20
POLL_S = 0.5
HOST = platform.node()
CLAIM = "evaluating"  # user attr: set to the trial's own number once it takes a unit of budget
SKIPPED = "skipped"  # user attr: why a trial ran nothing (its point or the budget was taken elsewhere)
ABORTED = "aborted"  # user attr: the evaluating process stopped on an error or Ctrl-C (no retry comes)


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
            import cmaes  # noqa: F401  (only checks it is installed)
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
    import optuna
    from optuna.storages import RDBStorage

    if not url.startswith(("sqlite:", "postgresql", "mysql")):
        return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(url))
    callback_key = ("heartbeat_stale_trial_callback"
                    if "heartbeat_stale_trial_callback" in inspect.signature(RDBStorage.__init__).parameters
                    else "failed_trial_callback")
    kwargs = {"heartbeat_interval": HEARTBEAT_S, "grace_period": GRACE_S, callback_key: retry_callback()}
    if url.startswith("sqlite:"):
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": 60}}
    if url.startswith("postgresql://"):
        url = "postgresql+" + _postgres_driver(url) + url[len("postgresql"):]
    from sqlalchemy.exc import SQLAlchemyError

    for attempt in range(3):
        try:
            with warnings.catch_warnings():  # heartbeats are "experimental" in Optuna's words, and what kt needs
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                return RDBStorage(url, **kwargs)
        except SQLAlchemyError as exc:  # processes starting together race to create the tables
            if attempt == 2:
                raise EnvironmentProblem(f"--storage {url.split('@')[-1]}: cannot open the study storage: "
                                         f"{str(exc).splitlines()[0]}") from None
            time.sleep(1 + attempt)


def retry_callback():
    """Queues a dead worker's trial once more (then its point counts as failed)."""
    import optuna

    retry = getattr(optuna.storages, "RetryHeartbeatStaleTrialCallback", None) or optuna.storages.RetryFailedTrialCallback
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return retry(max_retry=1)


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, TypeError, ValueError):
        return True
    return True


def _postgres_driver(url: str) -> str:
    """SQLAlchemy 2.1 reads a bare postgresql:// URL as psycopg (3); take whichever driver is installed."""
    import importlib.util

    for module in ("psycopg", "psycopg2"):
        if importlib.util.find_spec(module) is not None:
            return module
    raise EnvironmentProblem(f"--storage {url.split('@')[-1]}: no PostgreSQL driver is installed: "
                             "pip install psycopg2-binary")


def trial_result(trial) -> TrialResult | None:
    data = trial.user_attrs.get("result")
    return TrialResult.from_json(json.loads(data)) if data else None


def evaluated(study) -> list:
    """Trials that ran a candidate (not pruned as invalid, not answered as a duplicate)."""
    import optuna

    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL)
    return [t for t in study.get_trials(deepcopy=False, states=done)
            if "result" in t.user_attrs and "duplicate_of" not in t.user_attrs]


def _key(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


@dataclass(frozen=True)
class Ledger:
    """The study as every process sharing it sees it: points evaluated, points taken (being evaluated
    by a running trial, or lost with a dead worker and about to come back as a retry), points queued
    (enqueued and not yet claimed: seeds, retries, untried points handed to the sampler), and running
    trials not decided yet."""

    evaluated: dict  # point key -> FrozenTrial
    spent: int  # evaluated points that count against the budget (not refused as invalid by the vendor)
    taken: dict  # point key -> FrozenTrial
    queued: dict  # point key -> FrozenTrial, waiting or running but not claimed yet
    retries: int  # queued points that are retries: each holds the unit of budget its dead trial had taken
    undecided: list  # numbers of running trials that have not claimed, skipped or been answered

    @classmethod
    def read(cls, study, me: int | None = None) -> "Ledger":
        import optuna

        state = optuna.trial.TrialState
        trials = study.get_trials(deepcopy=False)
        retried = {t.system_attrs.get("failed_trial") for t in trials}
        evaluated, taken, queued, undecided = {}, {}, {}, []
        for t in trials:
            if t.number == me:
                continue
            claimed = t.user_attrs.get(CLAIM) == t.number
            # An enqueued trial's point lives in its fixed params: its params stay empty until it runs.
            fixed = t.system_attrs.get("fixed_params")
            if t.state == state.RUNNING:
                if claimed:
                    taken[_key(t.params)] = t
                elif not {"result", "duplicate_of", SKIPPED} & set(t.user_attrs):
                    undecided.append(t.number)
                    if fixed is not None:  # keeps its point until it claims it (a retry must not lose it)
                        queued[_key(fixed)] = t
            elif t.state == state.WAITING:
                queued[_key(fixed if fixed is not None else t.params)] = t
            elif "result" in t.user_attrs:
                if t.state in (state.COMPLETE, state.FAIL) and "duplicate_of" not in t.user_attrs:
                    evaluated[_key(t.params)] = t
            elif (claimed and t.state == state.FAIL and ABORTED not in t.user_attrs
                  and "failed_trial" not in t.system_attrs and t.number not in retried):
                # Its worker died; the process that failed it is enqueueing the retry (max_retry=1) now.
                taken[_key(t.params)] = t
        spent = sum(json.loads(t.user_attrs["result"])["failure_kind"] != "invalid" for t in evaluated.values())
        retries = sum("failed_trial" in t.system_attrs for t in queued.values())
        return cls(evaluated, spent, taken, queued, retries, undecided)


@dataclass
class StudyRun:
    """Drives one study up to `budget` evaluated candidates, alone or beside other processes
    (local workers, other hosts) that share its storage."""

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
    worker: dict = field(default_factory=dict)  # host, pid, device: kept in every result evaluated here
    found_complete: bool = False  # the budget was already spent when this process opened the study
    seeds: tuple = ()  # known-good points a new study evaluates first (the kernel's SEEDS)

    def run(self, valid_points: int | None, in_flight: int = 1) -> object:
        """Evaluate up to the budget, `in_flight` candidates at once from this process (threads, each
        on its own worker, so compiling runs ahead of the device)."""
        import optuna

        optuna.logging.set_verbosity(optuna.logging.ERROR)  # kt reports failures itself, without tracebacks
        study = optuna.create_study(study_name=self.study_name, storage=self.storage, direction="minimize",
                                    sampler=make_sampler(self.sampler, self.seed, self.space, in_flight > 1),
                                    load_if_exists=True)
        limit = self.budget if valid_points is None else min(self.budget, valid_points)

        def exhausted(ledger: Ledger, extra: int = 0) -> bool:
            """Every valid point is evaluated or taken (a small space spent before the budget)."""
            return valid_points is not None and len(ledger.evaluated) + len(ledger.taken) + extra > valid_points
        study.set_user_attr("budget", limit)
        state = {"duplicates": 0}
        rng = random.Random(self.seed)

        def skip(trial, why: str):
            trial.set_user_attr(SKIPPED, why)
            raise optuna.TrialPruned(why)

        active: set[int] = set()  # trial numbers this process is running
        active_lock = threading.Lock()

        def objective(trial):
            # On SQLite two threads can pop the same queued trial; the second waits for the first and
            # then ends without evaluating (its tell fails, and drive() passes over that).
            with active_lock:
                twin = trial.number in active
                active.add(trial.number)
            if twin:
                while trial.number in active:
                    time.sleep(POLL_S)
                raise optuna.TrialPruned()
            try:
                return evaluate_trial(trial)
            finally:
                with active_lock:
                    active.discard(trial.number)

        def evaluate_trial(trial):
            trial.set_user_attr("host", self.worker.get("host", HOST))
            trial.set_user_attr("pid", os.getpid())
            params = {p.name: p.suggest(trial) for p in self.space.params}
            broken = self.space.violated(self.env(params))
            if broken is not None:
                result = self.invalid_result(params, f"breaks constraint {broken.text!r}")
                trial.set_user_attr("result", json.dumps(result.to_json()))
                self.on_result(result)
                raise optuna.TrialPruned()
            # Trials decide one at a time, lowest number first, so two processes never both take the
            # last unit of budget or the same point.
            ledger = Ledger.read(study, trial.number)
            while any(n < trial.number for n in ledger.undecided):
                self._fail_dead_trials(study)
                time.sleep(POLL_S)
                ledger = Ledger.read(study, trial.number)
            previous = ledger.evaluated.get(_key(params))
            if previous is not None:
                trial.set_user_attr("duplicate_of", previous.number)
                trial.set_user_attr("result", previous.user_attrs["result"])
                state["duplicates"] += 1
                if state["duplicates"] >= MAX_DUPLICATES_IN_A_ROW:
                    self._enqueue_untried(study, ledger.evaluated | ledger.taken | ledger.queued, rng)
                    state["duplicates"] = 0
                if previous.state == optuna.trial.TrialState.COMPLETE:
                    return previous.value
                raise CandidateFailed("duplicate of a failed point")
            other = ledger.taken.get(_key(params)) or ledger.queued.get(_key(params))
            if other is not None:
                skip(trial, f"trial {other.number} has this point")
            if ledger.spent + len(ledger.taken) + ledger.retries >= limit or exhausted(ledger, 1):
                skip(trial, "the rest of the budget is taken by other trials")
            trial.set_user_attr(CLAIM, trial.number)
            state["duplicates"] = 0
            try:
                result = dataclasses.replace(self.evaluate(params), worker=self.worker)
            except BaseException as exc:
                trial.set_user_attr(ABORTED, repr(exc))
                raise
            trial.set_user_attr("result", json.dumps(result.to_json()))
            self.on_result(result)
            if result.ok and result.value is not None:
                return result.value
            raise CandidateFailed(f"{result.failure_kind}: {result.message}")

        attempts = {"n": 0}
        lock = threading.Lock()
        first = Ledger.read(study)
        self.found_complete = first.spent >= limit or exhausted(first)
        if not study.get_trials(deepcopy=False):
            self._enqueue_seeds(study)

        def drive() -> None:
            while True:
                with lock:
                    if attempts["n"] >= max(1, self.budget) * 50 + 200:
                        return
                    attempts["n"] += 1
                ledger = Ledger.read(study)
                if ledger.spent >= limit or exhausted(ledger):
                    return
                # (a queued retry holds a unit too, but some process must run a trial to pop it)
                if ledger.spent + len(ledger.taken) >= limit or exhausted(ledger, 1):
                    # Every unit left is taken (here or elsewhere); wait, since a trial whose process died is
                    # failed after its heartbeat's grace period and comes back as a queued retry.
                    self._fail_dead_trials(study)
                    time.sleep(POLL_S)
                    continue
                try:
                    study.optimize(objective, n_trials=1, catch=(CandidateFailed,), gc_after_trial=False)
                except (ValueError, optuna.exceptions.UpdateFinishedTrialError) as exc:
                    if "Cannot tell" not in str(exc) and "finished" not in str(exc):
                        raise

        errors: list[BaseException] = []

        def drive_catching() -> None:
            try:
                drive()
            except BaseException as exc:  # re-raised in the calling thread below
                errors.append(exc)

        threads = [threading.Thread(target=drive_catching, daemon=True) for _ in range(max(1, in_flight) - 1)]
        for t in threads:
            t.start()
        drive()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return study

    def _fail_dead_trials(self, study) -> None:
        """Fail the running trials whose worker died, and queue each once more. RDB storage knows them
        by their stale heartbeats; storage without heartbeats (journal files) only by the pid of
        trials started on this host."""
        import optuna

        if isinstance(self.storage, optuna.storages.RDBStorage):
            optuna.storages.fail_stale_trials(study)
            return
        now = datetime.datetime.now()
        for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
            if t.user_attrs.get("host") != HOST or _alive(t.user_attrs.get("pid")):
                continue
            if t.datetime_start and (now - t.datetime_start).total_seconds() < 4 * POLL_S:
                continue  # a retry just taken keeps its dead predecessor's pid until it records its own
            try:
                study.tell(t.number, state=optuna.trial.TrialState.FAIL)
            except (ValueError, optuna.exceptions.UpdateFinishedTrialError):
                continue  # another process on this host failed it first
            retry_callback()(study, t)

    def _enqueue_seeds(self, study) -> None:
        """A new study evaluates the kernel's known-good points first (its SEEDS), where they fit the
        space and its constraints; a parameter a seed leaves out takes the space's first value."""
        names = {p.name: p for p in self.space.params}
        for seed in self.seeds:
            if not set(seed) <= set(names) or any(v not in names[n].all_values() for n, v in seed.items()):
                continue
            missing = [n for n in names if n not in seed]
            fills = itertools.islice(itertools.product(*(names[n].all_values() for n in missing)), 1000)
            for fill in fills:  # the first values of the missing parameters that meet the constraints
                point = {**seed, **dict(zip(missing, fill))}
                if self.space.violated(self.env(point)) is None:
                    study.enqueue_trial({n: point[n] for n in names}, skip_if_exists=True)
                    break

    def _enqueue_untried(self, study, seen: dict, rng: random.Random) -> None:
        """The sampler keeps proposing tried points: hand it a valid untried one (small spaces)."""
        if self.space.size() > 200_000:
            return
        untried = [p for p in self.space.points()
                   if _key(p) not in seen and self.space.violated(self.env(p)) is None]
        if untried:
            study.enqueue_trial(rng.choice(untried), skip_if_exists=True)
