"""The Optuna objective of one study: suggest a point, prune it if it breaks a constraint, answer it
from the study if it was evaluated before, take a unit of the budget, evaluate it, record its
TrialResult. Failed candidates are marked failed (never scored with a huge number), candidates the cost
model pruned are marked pruned (TPE ranks them below every measured one); every trial keeps its TrialResult
as the user attribute "result", so the study alone can rebuild trials.jsonl."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import threading
import time

from kt_cli.recipe.space import ENUMERATION_LIMIT
from kt_cli.search.ledger import ABORTED, CLAIM, SKIPPED, Budget, Ledger, point_key
from kt_cli.search.recovery import fail_dead_trials
from kt_cli.search.shared_reads import RECENT_S, recent_reads
from kt_cli.search.storage import HOST, sampler_state, trial_result

MAX_DUPLICATES_IN_A_ROW = 20
POLL_S = 0.5
TURN_POLL_S = 0.02  # how often the first trial of a process in line for its turn reads the ledger
LARGE_SPACE = ENUMERATION_LIMIT  # spaces larger than this are never enumerated


class CandidateFailed(Exception):
    """Raised inside the objective so Optuna records the trial as failed."""


class Objective:
    """Callable as an Optuna objective; `problem` gives the space, the constraint environment of a
    point, evaluate(params) and invalid_result(params, why) (see kt_cli.search.studies.ProblemPlan)."""

    def __init__(self, study, storage, problem, budget: Budget, seed: int, on_result, worker: dict):
        self.study, self.storage, self.problem, self.budget = study, storage, problem, budget
        self.on_result, self.worker = on_result, worker
        self.rng = random.Random(seed)
        self.duplicates = 0
        self.active: set[int] = set()  # trial numbers this process is running
        self.observed: set[int] = set()  # trial numbers of other processes whose results the problem has seen
        self.lock = threading.Lock()
        self.turns = threading.Condition()  # notified whenever a trial of this process decides
        self.waiting: set[int] = set()  # trial numbers of this process waiting for their turn (under turns)
        self.reading = threading.Lock()  # one read of the study at a time in this process (ledger())
        self.read_at, self.last_read = -math.inf, None  # when the latest read began, and what it read
        self.dead_looked = time.monotonic()  # when trials whose owner died were last looked for (the driver
        # looks as it opens the study)

    def __call__(self, trial):
        import optuna

        # On SQLite two threads can pop the same queued trial; the second waits for the first and
        # then ends without evaluating (its tell fails, and the driver passes over that).
        with self.lock:
            twin = trial.number in self.active
            self.active.add(trial.number)
        if twin:
            while trial.number in self.active:
                time.sleep(POLL_S)
            raise optuna.TrialPruned()
        try:
            return self._evaluate_trial(trial)
        finally:
            with self.lock:
                self.active.discard(trial.number)

    def _evaluate_trial(self, trial):
        import optuna

        # the search's own share of the trial's wall: asking (the sampler's relative draw, which Optuna
        # makes at the first suggest, included), waiting for its turn to decide, and writing the point drawn
        # and the claim (storage transactions that queue for SQLite's one writer where processes share a
        # study); beside the evaluator's phases in the trial's record
        trial.set_user_attr("host", self.worker.get("host", HOST))
        trial.set_user_attr("pid", os.getpid())
        space = self.problem.space
        params = {p.name: p.suggest(trial) for p in space.params}
        asked = max(0.0, time.time() - trial.datetime_start.timestamp())
        broken = space.violated(self.problem.env(params))
        if broken is not None:
            # Trials running beside this one may already hold every unit left (start-up points queued
            # before it): its point is then moot, not a refusal worth recording.
            if self.budget.spoken_for(self.ledger(trial.number)):
                self._skip(trial, "the rest of the budget is taken by other trials")
            self._record(trial, self.problem.invalid_result(params, f"breaks constraint {broken.text!r}"))
            raise optuna.TrialPruned()
        writing = time.perf_counter()
        self._write(trial)  # the point drawn, before this trial reads what others drew (_confirm_claim)
        waiting = time.perf_counter()
        key = point_key(params)
        ledger, ahead = self._my_turn(trial, key)
        search = {"search.ask": asked, "search.turn": time.perf_counter() - waiting, "search.write": waiting - writing}
        previous = ledger.evaluated.get(key)
        if previous is not None:
            return self._answer_duplicate(trial, previous, ledger)
        other = ledger.taken.get(key) or ledger.queued.get(key)
        if other is not None:
            self._skip(trial, f"trial {other.number} has this point")
        if self.budget.taken(ledger, queued_retries=True, ahead=ahead):
            self._skip(trial, "the rest of the budget is taken by other trials")
        trial.set_user_attr(CLAIM, trial.number)
        writing = time.perf_counter()
        self._write(trial)
        if ahead:
            self._confirm_claim(trial, key)
        search["search.write"] += time.perf_counter() - writing
        self.decided()
        self.duplicates = 0
        try:
            result = self.problem.evaluate(params)
            result = dataclasses.replace(result, worker=self.worker, phase_seconds={**result.phase_seconds, **search})
        except BaseException as exc:
            trial.set_user_attr(ABORTED, repr(exc))
            raise
        self._record(trial, result)
        return self._told(result)

    def _my_turn(self, trial, key: str) -> tuple[Ledger, int]:
        """Wait until this trial may decide (claim its point, skip, or answer a duplicate) without two
        trials ever taking the last unit of budget or the same point. It may once no undecided trial is
        numbered before it; or, ahead of them, once none of them has drawn this point and the budget
        has a unit for each of them besides its own. Returns the ledger it decided on and how many
        undecided trials it went ahead of (0: its turn came; else _confirm_claim checks the claim).

        Going ahead: a trial number is taken when a trial is asked, before the sampler draws its point
        (0.1-0.3 s of TPE under four processes' load), so in number order alone every process's
        decisions queued behind the others' draws: with 4 workers on a 4x H100 host a trial waited
        0.9-1.4 s on average for its turn, against 0.05 s with one (benchmarks/results/s15/scale3).
        Waiting: of this process's waiting trials, the first in line reads the ledger every
        TURN_POLL_S (another process's trial usually decides within milliseconds); the others wait for
        this process's own decisions (decided() wakes them at once) and read it at most every POLL_S;
        a woken trial takes any read newer than the one it waited on (one read serves every trial a
        decision woke); dead owners are looked for every POLL_S in the process."""
        read, ledger = self._read(trial.number, time.monotonic())
        with self.turns:
            self.waiting.add(trial.number)
        try:
            while True:
                before = [n for n in ledger.undecided if n < trial.number]
                if not before:
                    break
                if (all(ledger.undecided[n] != key for n in before)
                        and not self.budget.taken(ledger, queued_retries=True, ahead=len(before))):
                    break
                self.settle_dead()
                with self.turns:
                    self.turns.wait(TURN_POLL_S if trial.number == min(self.waiting) else POLL_S)
                read, ledger = self._read(trial.number, read)  # any read newer than the one it waited on
        finally:
            with self.turns:
                self.waiting.discard(trial.number)
                self.turns.notify_all()  # the next in line, if any, now reads the ledger often
        self._observe_others(ledger)
        return ledger, len(before)

    def _confirm_claim(self, trial, key: str) -> None:
        """A trial that claimed ahead of undecided trials read the ledger before one of them may have
        finished drawing the same point: read it again now that the claim is written. A trial before
        this one that holds the point, claimed or drawn, keeps it and this claim is withdrawn (the
        earlier trial either saw this claim, and skipped, or did not, and claimed: of any two trials
        at least one sees the other's write, so a point is never evaluated twice)."""
        ledger = self.ledger(trial.number)
        holder = ledger.taken.get(key)
        rivals = [n for n, drawn in ledger.undecided.items() if n < trial.number and drawn == key]
        rivals += [holder.number] if holder is not None and holder.number < trial.number else []
        if rivals:
            trial.set_user_attr(CLAIM, None)
            self._skip(trial, f"trial {min(rivals)} drew this point too")

    def ledger(self, me: int | None = None) -> Ledger:
        """The study's ledger as trial `me` sees it (None: as the process), from a read that began after
        this call did: it holds every write its caller made before."""
        return self._read(me, time.monotonic())[1]

    def recent_ledger(self) -> Ledger:
        """The study's ledger as the process sees it, from a read that began at most RECENT_S before this
        call: for a look that decides nothing (whether to start a trial: the trial decides on its own look)."""
        return self._read(None, time.monotonic() - RECENT_S)[1]

    def _read(self, me: int | None, after: float) -> tuple[float, Ledger]:
        """(when the read began, the ledger as trial `me` sees it) of a read that began after `after`.
        The process's threads share reads: one waiting for another's read takes it if it began after
        `after`. A read of the study is CPU work under one lock of the process's storage (Optuna reads
        every unfinished trial again), and a process's CPU bounds its trials' rate: with a read by each
        waiting trial at every decision, reads were the largest share of it (7-10 s of 26-34 s a run on
        the matmul recipe; docs/performance.md, ninth session)."""
        with self.reading:
            if self.read_at <= after:
                self.read_at = time.monotonic()
                self.last_read = Ledger.read(self.study)
            read, ledger = self.read_at, self.last_read
        return read, ledger if me is None else ledger.without(me)

    def settle_dead(self) -> None:
        """Settle the trials whose owner died (kt_cli.search.recovery), at most every POLL_S in this
        process: deaths are judged by heartbeats seconds apart, and each look reads the whole study."""
        with self.lock:
            if time.monotonic() - self.dead_looked < POLL_S:
                return
            self.dead_looked = time.monotonic()
        with recent_reads():  # deaths are judged over seconds
            fail_dead_trials(self.study, self.storage)

    def _write(self, trial) -> None:
        """What the trial set and its storage holds back (owned_storages.DeferredTrialWrites), written now."""
        write = getattr(self.storage, "write_deferred", None)
        if write is not None:
            write(trial._trial_id)

    def decided(self) -> None:
        """A trial of this process claimed its point or ended (told): wake the trials waiting for their turn."""
        with self.turns:
            self.turns.notify_all()

    def _observe_others(self, ledger: Ledger) -> None:
        """Hand the problem what other processes sharing the study evaluated since the last look."""
        observe = getattr(self.problem, "observe", None)
        if observe is None:
            return
        me = (self.worker.get("host", HOST), os.getpid())
        with self.lock:
            new = [t for t in ledger.evaluated.values()
                   if t.number not in self.observed and (t.user_attrs.get("host"), t.user_attrs.get("pid")) != me]
            self.observed.update(t.number for t in new)
        for t in new:
            result = trial_result(t)
            if result is not None:
                observe(result)

    def _answer_duplicate(self, trial, previous, ledger: Ledger):
        import optuna

        trial.set_user_attr("duplicate_of", previous.number)
        trial.set_user_attr("result", previous.user_attrs["result"])
        self.duplicates += 1
        if self.duplicates >= MAX_DUPLICATES_IN_A_ROW:
            self._enqueue_untried(ledger.evaluated | ledger.taken | ledger.queued)
            self.duplicates = 0
        if previous.state == optuna.trial.TrialState.COMPLETE:
            return previous.value
        if previous.state == optuna.trial.TrialState.PRUNED:
            raise optuna.TrialPruned("duplicate of a point the cost model pruned")
        raise CandidateFailed("duplicate of a failed point")

    @staticmethod
    def _told(result):
        """End the trial as the sampler should learn it (storage.sampler_state): its value, pruned, or failed."""
        import optuna

        told = sampler_state(result)
        if told == optuna.trial.TrialState.COMPLETE:
            return result.value
        if told == optuna.trial.TrialState.PRUNED:
            raise optuna.TrialPruned(f"{result.failure_kind}: {result.message}")
        raise CandidateFailed(f"{result.failure_kind}: {result.message}")

    def _record(self, trial, result) -> None:
        trial.set_user_attr("result", json.dumps(result.to_json()))
        self.on_result(result)

    @staticmethod
    def _skip(trial, why: str):
        import optuna

        trial.set_user_attr(SKIPPED, why)
        raise optuna.TrialPruned(why)

    def _enqueue_untried(self, seen: dict) -> None:
        """The sampler keeps proposing tried points: hand it a valid untried one (small spaces)."""
        space = self.problem.space
        if space.size() > LARGE_SPACE:
            return
        untried = [p for p in space.valid_points(self.problem.env) if point_key(p) not in seen]
        if untried:
            self.study.enqueue_trial(self.rng.choice(untried), skip_if_exists=True)
