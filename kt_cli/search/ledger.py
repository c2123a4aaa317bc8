"""The budget ledger: what every process sharing a study sees of it, and how much of the budget is
left. Each trial takes its unit of the budget in the storage before it evaluates, so a study ends with
exactly the budget of distinct points however many processes took part."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from kt_cli.types import point_key

CLAIM = "evaluating"  # user attr: set to the trial's own number once it takes a unit of budget
SKIPPED = "skipped"  # user attr: why a trial ran nothing (its point or the budget was taken elsewhere)
ABORTED = "aborted"  # user attr: the evaluating process stopped on an error or Ctrl-C (no retry comes)


def claimed(trial) -> bool:
    """Whether `trial` took a unit of budget (it claimed its point before evaluating it)."""
    return trial.user_attrs.get(CLAIM) == trial.number


def ran_a_candidate(trial) -> bool:
    """Whether `trial` evaluated its own point: its result recorded, not answered as a duplicate, and ended
    COMPLETE or FAIL, or PRUNED by the cost model after it took its unit of budget (a constraint's refusal,
    also PRUNED, takes none; kt_cli.search.storage.sampler_state)."""
    import optuna

    state = optuna.trial.TrialState
    return ("result" in trial.user_attrs and "duplicate_of" not in trial.user_attrs
            and (trial.state in (state.COMPLETE, state.FAIL) or (trial.state == state.PRUNED and claimed(trial))))


def awaits_retry(trial, retried: set) -> bool:
    """A claimed trial failed because its process died, whose retry is not queued yet: the process
    that failed it is queueing it now (or died doing so, and kt_cli.search.recovery queues it). Its
    point and its unit of budget stay taken until then. `retried`: the numbers that have a retry."""
    import optuna

    return (trial.state == optuna.trial.TrialState.FAIL and claimed(trial)
            and "result" not in trial.user_attrs and ABORTED not in trial.user_attrs
            and "failed_trial" not in trial.system_attrs and trial.number not in retried)


@functools.lru_cache(maxsize=8192)
def _spends_a_unit(result: str) -> bool:
    """Whether an evaluated trial's recorded result counts against the budget (the vendor did not refuse
    it as invalid). Parsed once per result: a finished trial's never changes and Optuna hands the same
    string back at every read, so a read of a 100-trial study is not 100 JSON parses (75% of its Python
    work)."""
    return json.loads(result)["failure_kind"] != "invalid"


@dataclass(frozen=True)
class Ledger:
    """The study as every process sharing it sees it: points evaluated, points taken (being evaluated
    by a running trial, or lost with a dead worker and about to come back as a retry), points queued
    (enqueued and not yet claimed: seeds, retries, untried points handed to the sampler), and running
    trials not decided yet.

    Every trial is kept, not one per point: two trials can hold one point for a moment (two claims
    read each other's draws late; the later withdraws, kt_cli.search.objective._confirm_claim), and
    the ledger as one of them sees it must still show the other. Kept one per point, the later claim
    hid the earlier from the later trial itself, and both evaluated the point (a study of 8 ended
    with 9, the fresh-clone CI of 2026-11-27)."""

    finished: tuple  # (point key, trial) of every evaluated trial (its result recorded, not a duplicate)
    claims: tuple  # (point key, trial) of every trial holding a unit of budget: running and claimed, or
    # dead after claiming and awaiting its retry
    waiting: tuple  # (point key, trial) of every queued trial, waiting or running but not claimed yet
    retrying: frozenset  # numbers of the queued retries of trials that had claimed: each holds the unit of
    # budget its dead trial took
    undecided: dict  # running trials that have not claimed, skipped or been answered: number -> the key of
    # the point drawn so far (its fixed point where enqueued; a partial draw's key matches no full point)

    @classmethod
    def read(cls, study, me: int | None = None) -> "Ledger":
        """The study as trial `me` sees it (itself left out; None: as a process outside any trial)."""
        from kt_cli.search.shared_reads import fresh_reads

        with fresh_reads():  # what kt decides on holds every write made before the look
            ledger = cls.of(study.get_trials(deepcopy=False))
        return ledger if me is None else ledger.without(me)

    @classmethod
    def of(cls, trials: list) -> "Ledger":
        import optuna

        state = optuna.trial.TrialState
        retried = {t.system_attrs.get("failed_trial") for t in trials}
        finished, claims, waiting, undecided = [], [], [], {}
        for t in trials:
            # An enqueued trial's point lives in its fixed params: its params stay empty until it runs.
            # A retry (Optuna's retry callback) carries its dead trial's params from the start, and
            # fixed params only where the dead trial was itself enqueued.
            fixed = t.system_attrs.get("fixed_params")
            if fixed is None and "failed_trial" in t.system_attrs:
                fixed = t.params
            if t.state == state.RUNNING:
                if claimed(t):
                    claims.append((point_key(t.params), t))
                elif not {"result", "duplicate_of", SKIPPED} & set(t.user_attrs):
                    undecided[t.number] = point_key(fixed if fixed is not None else t.params)
                    if fixed is not None:  # keeps its point and unit until it claims (a retry must not lose them)
                        waiting.append((point_key(fixed), t))
            elif t.state == state.WAITING:
                waiting.append((point_key(fixed if fixed is not None else t.params), t))
            elif "result" in t.user_attrs:
                if ran_a_candidate(t):
                    finished.append((point_key(t.params), t))
            elif awaits_retry(t, retried):
                claims.append((point_key(t.params), t))
        # A retry holds a unit only where its dead trial had claimed one: a trial that died before
        # claiming (inside ask(), or while waiting its turn) had taken none, and its retry must not keep
        # a claimed point's retry from running (it is a suggestion like any other).
        number = {t.number: t for t in trials}
        retrying = frozenset(t.number for _, t in waiting
                             if t.system_attrs.get("failed_trial") in number
                             and claimed(number[t.system_attrs["failed_trial"]]))
        return cls(tuple(finished), tuple(claims), tuple(waiting), retrying, undecided)

    @functools.cached_property
    def evaluated(self) -> dict:
        """Point key -> its first evaluated trial."""
        return _first_per_point(self.finished)

    @functools.cached_property
    def taken(self) -> dict:
        """Point key -> the first trial holding it (the one that keeps it)."""
        return _first_per_point(self.claims)

    @functools.cached_property
    def queued(self) -> dict:
        """Point key -> the first queued trial of it."""
        return _first_per_point(self.waiting)

    @functools.cached_property
    def spent(self) -> int:
        """Evaluated trials that count against the budget (not refused as invalid by the vendor)."""
        return sum(_spends_a_unit(t.user_attrs["result"]) for _, t in self.finished)

    @property
    def units_taken(self) -> int:
        """Units of budget held by trials evaluating now (or lost with a dead worker): one a trial."""
        return len(self.claims)

    @property
    def retries(self) -> int:
        return len(self.retrying)

    def without(self, number: int) -> "Ledger":
        """The ledger as trial `number` sees it: itself left out (a queued retry may claim its own point,
        a running trial is not ahead of itself). One read serves every trial of a process this way."""
        def others(pairs: tuple) -> tuple:
            return tuple((key, t) for key, t in pairs if t.number != number)

        return Ledger(others(self.finished), others(self.claims), others(self.waiting), self.retrying - {number},
                      {n: k for n, k in self.undecided.items() if n != number})


def _first_per_point(pairs: tuple) -> dict:
    """Point key -> the lowest-numbered trial of `pairs` with that key."""
    first: dict = {}
    for key, t in sorted(pairs, key=lambda pair: pair[1].number):
        first.setdefault(key, t)
    return first


@dataclass(frozen=True)
class Budget:
    """How many candidates a study evaluates: the recipe's budget, or every valid point of a space
    smaller than that (`valid_points`, None when the space is too large to count)."""

    trials: int
    valid_points: int | None

    @property
    def limit(self) -> int:
        return self.trials if self.valid_points is None else min(self.trials, self.valid_points)

    def spent(self, ledger: Ledger) -> bool:
        """Nothing is left to evaluate: the budget is spent, or every valid point is evaluated or taken."""
        return ledger.spent >= self.limit or self._exhausted(ledger)

    def taken(self, ledger: Ledger, queued_retries: bool = False, ahead: int = 0) -> bool:
        """Every unit left is taken by a running trial (and, with `queued_retries`, by a queued retry), or
        would be once the `ahead` undecided trials before this one took one each: one more trial must
        not start evaluating."""
        units = ledger.spent + ledger.units_taken + (ledger.retries if queued_retries else 0) + ahead
        return units >= self.limit or self._exhausted(ledger, 1 + ahead)

    def spoken_for(self, ledger: Ledger) -> bool:
        """Every unit left is held by a running trial or by a point queued to run (start-up points,
        seeds, retries): a point sampled now would not be evaluated, whatever it is."""
        return ledger.spent + ledger.units_taken + len(ledger.queued) >= self.limit

    def _exhausted(self, ledger: Ledger, extra: int = 0) -> bool:
        return (self.valid_points is not None
                and len(ledger.evaluated.keys() | ledger.taken.keys()) + extra > self.valid_points)
