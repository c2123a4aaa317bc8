"""The study driver: one Optuna study per (target, problem), resumable, knowing nothing of vendors.

Several processes (local workers, other hosts) may drive one study through a shared storage: each
trial takes its unit of the budget in the storage before it evaluates (kt_cli.search.ledger), so the
study ends with exactly the budget of distinct points however many processes took part. What one
trial does is kt_cli.search.objective.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from kt_cli.search.ledger import Budget, Ledger, point_key
from kt_cli.search.objective import POLL_S, CandidateFailed, Objective
from kt_cli.search.sampler import STARTUP_TRIALS, make_sampler
from kt_cli.search.recovery import fail_dead_trials
from kt_cli.search.storage import trial_result
from kt_cli.search.valid_points import ValidPoints, repairing
from kt_cli.stamps import mark
from kt_cli.types import TrialResult

START_DRAWS_PER_POINT = 200  # draws per start-up point before a space that refuses nearly all gives up
# Samplers whose joint proposals are made valid points (kt_cli.search.valid_points); the grid sampler
# walks its own list, CMA-ES and GP model continuous relaxations a repair would mislead.
REPAIRED_SAMPLERS = ("tpe", "random")
ATTEMPTS_PER_UNIT = 50  # asks per unit of budget before a driver gives up on a space it cannot fill


@dataclass
class StudyRun:
    """Drives one study up to `budget` evaluated candidates, alone or beside other processes that
    share its storage. `problem` is what the study searches (kt_cli.search.studies.ProblemPlan: space,
    env, evaluate, invalid_result)."""

    study_name: str
    storage: object
    problem: object
    budget: int
    sampler: str
    seed: int
    on_result: Callable[[TrialResult], None] = lambda r: None
    on_open: Callable[[int, list], None] = lambda limit, earlier: None  # (budget, results of earlier runs)
    worker: dict = field(default_factory=dict)  # host, pid, device: kept in every result evaluated here
    found_complete: bool = False  # the budget was already spent when this process opened the study
    known_good: tuple = ()  # points a new study evaluates first (the kernel's SEEDS)
    slots: object = None  # FairSlots shared by the studies run at once: a trial holds one while in flight

    def run(self, valid_points: int | None, in_flight: int = 1) -> object:
        """Evaluate up to the budget, `in_flight` candidates at once from this process (threads, each
        on its own worker, so compiling runs ahead of the device). Returns the study. Beside other
        studies (`slots`), it is owed its part of the slots from the moment it starts to set up."""
        budget = Budget(self.budget, valid_points)
        if self.slots is None:
            return self._run(budget, in_flight)
        self.slots.join(self.study_name, budget.limit)
        try:
            return self._run(budget, in_flight)
        finally:
            self.slots.leave(self.study_name)

    def _run(self, budget: Budget, in_flight: int) -> object:
        import optuna

        from kt_cli.search.shared_reads import shared_reads

        optuna.logging.set_verbosity(optuna.logging.ERROR)  # kt reports failures itself, without tracebacks
        sampler = make_sampler(self.sampler, self.seed, self.problem.space, in_flight > 1)
        valid = getattr(self.problem, "valid", None)
        if valid is not None and self.sampler in REPAIRED_SAMPLERS:
            sampler = repairing(sampler, ValidPoints(self.problem.space, valid), self.problem.space, self.seed)
        mark("sampler made")
        study = optuna.create_study(study_name=self.study_name, storage=shared_reads(self.storage),
                                    direction="minimize", sampler=sampler, load_if_exists=True)
        mark("study opened")
        study.set_user_attr("budget", budget.limit)
        study.set_user_attr("budget_trials", budget.trials)  # the --trials it was set for (scale.storage_progress)
        fail_dead_trials(study, self.storage)  # a killed run's trials, before counting what is done
        ledger = Ledger.read(study)
        mark("ledger read")
        self.found_complete = budget.spent(ledger)
        self.on_open(budget.limit, [trial_result(t) for t in ledger.evaluated.values()])
        if not study.get_trials(deepcopy=False):
            seeded = self._enqueue_known_good(study)
            if self.sampler == "tpe" and valid is None:  # (a repaired sampler draws them among valid points itself)
                self._enqueue_valid_start(study, min(STARTUP_TRIALS, self.budget) - seeded)
        mark("seeds queued")
        objective = Objective(study, self.storage, self.problem, budget, self.seed, self.on_result, self.worker)
        mark("study ready")
        attempts = _Attempts(max(1, self.budget) * ATTEMPTS_PER_UNIT + 200)
        if self.slots is not None:
            self.slots.driving(self.study_name)
        _in_threads(lambda: self._drive(study, objective, budget, attempts), max(1, in_flight))
        return study

    def _drive(self, study, objective: Objective, budget: Budget, attempts: "_Attempts") -> None:
        """Ask for trials one at a time until the budget is spent (or the attempts run out). The budget is
        read once the slot is held (a thread waits for a slot for seconds, while others take the units)
        and counts the trials still deciding as taken: near a budget's end every thread of every process
        otherwise started a trial that was then skipped, an ask and a turn for nothing (198 of 638 trials
        with 4 workers at 128 trials a problem, BENCHMARKS.md 2026-11-28 twentieth)."""
        while attempts.take():
            with self.slots.hold(self.study_name) if self.slots else contextlib.nullcontext():
                objective.settle_dead()  # first: a dead trial may hold the unit this one needs
                ledger = objective.recent_ledger()
                if budget.spent(ledger):
                    return
                # (a queued retry holds a unit too, but some process must run a trial to pop it)
                if not budget.taken(ledger, ahead=len(ledger.undecided)):
                    self._trial(study, objective)
                    continue
            # Every unit left is taken, or will be once the trials deciding take theirs (here or
            # elsewhere); wait, since a trial whose process died comes back as a queued retry once it is
            # judged dead, and a deciding trial may yet be skipped or answered as a duplicate.
            time.sleep(POLL_S)

    @staticmethod
    def _trial(study, objective: Objective) -> None:
        import optuna

        from kt_cli.search.shared_reads import recent_reads

        try:
            with recent_reads():  # Optuna's looks (a queued trial, TPE's space and draw); kt's ledger looks fresh
                study.optimize(objective, n_trials=1, catch=(CandidateFailed,), gc_after_trial=False)
        except (ValueError, optuna.exceptions.UpdateFinishedTrialError) as exc:
            if "Cannot tell" not in str(exc) and "finished" not in str(exc):
                raise
        finally:
            objective.decided()  # the trial is told: the ones behind it may decide

    def _enqueue_known_good(self, study) -> None:
        """A new study evaluates the kernel's known-good points first (its SEEDS), where they fit the
        space and its constraints; a parameter a point leaves out takes the first values that meet
        the constraints."""
        queued = set()
        for point in self.known_good:
            full = self.problem.space.completion(point, self.problem.env)
            if full is not None:
                study.enqueue_trial(full, skip_if_exists=True)
                queued.add(point_key(full))
        return len(queued)

    def _enqueue_valid_start(self, study, count: int) -> None:
        """A new study's start-up points (those the sampler would draw at random before it models
        anything) drawn uniformly among the points that meet the constraints. Drawn over the whole
        space, a constrained space refuses most of them (65 refusals in a 32-candidate softmax run, each
        an Optuna trial of its own in the CLI process, on the device's critical path)."""
        space, picked, refused = self.problem.space, {}, 0
        for point in space.sample(max(0, count) * START_DRAWS_PER_POINT, seed=self.seed):
            if len(picked) >= count:
                break
            if space.violated(self.problem.env(point)) is not None:
                refused += 1
            elif point_key(point) not in picked:
                picked[point_key(point)] = point
        if not refused:  # the constraints refused none: the sampler's own draws are just as good
            return
        for point in picked.values():
            study.enqueue_trial(point, skip_if_exists=True)


class _Attempts:
    """A thread-safe countdown shared by the threads driving one study."""

    def __init__(self, left: int):
        self.left, self.lock = left, threading.Lock()

    def take(self) -> bool:
        with self.lock:
            self.left -= 1
            return self.left >= 0


def _in_threads(work: Callable[[], None], count: int) -> None:
    """Run `work` in `count` threads (this one included); re-raise the first error any of them hit."""
    errors: list[BaseException] = []

    def catching() -> None:
        try:
            work()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=catching, daemon=True) for _ in range(count - 1)]
    for t in threads:
        t.start()
    work()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
