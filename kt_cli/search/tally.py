"""What a run counts as it goes: per study, candidates evaluated of its budget (earlier runs included),
outcomes and the best so far; for the whole run, outcomes, seconds per phase and an ETA."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kt_cli.types import TrialResult, shape_key


@dataclass
class StudyProgress:
    """One (target, problem) study as its progress line shows it. Trials of earlier runs count."""

    budget: int
    mode: str
    earlier: int = 0  # candidates evaluated before this run
    evaluated: int = 0  # candidates evaluated, earlier runs included (invalid points not counted)
    kinds: dict = field(default_factory=dict)
    best: float | None = None

    def add(self, result: TrialResult) -> None:
        self.kinds[result.failure_kind] = self.kinds.get(result.failure_kind, 0) + 1
        self.evaluated += result.failure_kind != "invalid"
        if result.ok and result.value is not None and (self.best is None or result.value < self.best):
            self.best = result.value

    @property
    def left(self) -> int:
        return max(0, self.budget - self.evaluated)


def study_key(result_or_target, shape: dict | None = None) -> tuple[str, str]:
    """The key of a study in a tally: (target name, shape key), from a TrialResult or from both."""
    if shape is None:
        return result_or_target.target, shape_key(result_or_target.shape)
    return result_or_target, shape_key(shape)


@dataclass
class Tally:
    """Counts for the progress lines and the final summary. `done`, `kinds` and `phase_seconds` count
    this run only; `studies` hold each study whole."""

    done: int = 0
    kinds: dict = field(default_factory=dict)
    raced_out: int = 0  # ok candidates whose timing stopped early: they could not be the best
    raced_out_unverified: int = 0  # of those, the ones stopped at their screen, before verification
    studies: dict = field(default_factory=dict)  # study_key -> StudyProgress
    phase_seconds: dict = field(default_factory=dict)  # compile, screen, verify, time: summed over candidates
    found_complete: bool = True  # every study's budget was spent before this run began
    written_by: dict | None = None  # the process that wrote the artifact, when another did
    last_failure: str = ""
    wall_seconds: float = 0.0
    device_busy_seconds: float = 0.0  # time the device worker spent verifying and timing
    started: float | None = None  # when the first study opened (perf_counter), for the ETA
    results: list | None = None  # the studies' results with the winners paired, by the processes that paired them
    # (None where another process pairs it)

    def expect(self, key: tuple, budget: int, mode: str, earlier: list[TrialResult] = ()) -> StudyProgress:
        """A study this run drives, holding `earlier` results from runs before this one."""
        study = self.studies[key] = StudyProgress(budget, mode)
        for result in earlier:
            study.add(result)
        study.earlier = study.evaluated
        return study

    def opened(self, key: tuple, budget: int, mode: str, earlier: list[TrialResult]) -> StudyProgress:
        """A study was opened (what it holds is read again: a dead run's trials are settled by now)."""
        if self.started is None:
            self.started = time.perf_counter()
        return self.expect(key, budget, mode, earlier)

    def add(self, result: TrialResult) -> None:
        self.kinds[result.failure_kind] = self.kinds.get(result.failure_kind, 0) + 1
        if result.failure_kind != "invalid":
            self.done += 1
        if not result.ok:
            self.last_failure = f"{result.failure_kind}: {result.message}"
        raced = bool(result.ok and result.stats.get("raced_out"))
        self.raced_out += raced
        self.raced_out_unverified += raced and "verify" not in result.phase_seconds
        for phase, seconds in result.phase_seconds.items():
            self.phase_seconds[phase] = self.phase_seconds.get(phase, 0.0) + seconds
        key = study_key(result)
        if key not in self.studies:
            self.studies[key] = StudyProgress(0, result.mode)
        self.studies[key].add(result)

    def eta_seconds(self) -> float | None:
        """Seconds until every study of the run has spent its budget, at this run's pace so far (its
        start-up included: candidates in flight together finish in bursts, and an ETA that is too
        short is worse than one that shrinks). None before this run evaluated anything."""
        new = sum(s.evaluated - s.earlier for s in self.studies.values())
        if not new or self.started is None:
            return None
        per = (time.perf_counter() - self.started) / new
        return per * sum(s.left for s in self.studies.values())

    def summary(self) -> list[str]:
        """The final lines: what became of this run's candidates, and where the time went."""
        from kt_cli.reports.format import duration, outcomes

        rate = self.done / self.wall_seconds * 60 if self.wall_seconds else 0.0
        ok = self.kinds.get("ok", 0)
        estimated = any(s.mode == "estimated" for s in self.studies.values())
        failed = {k: n for k, n in self.kinds.items() if k not in ("ok", "invalid", "pruned")}
        parts = [f"{ok - self.raced_out} {'verified and estimated' if estimated else 'timed fully'}"]
        if self.raced_out:
            parts.append(f"{self.raced_out} raced out (stopped once surely slower than the best; "
                         f"{self.raced_out_unverified} at their first samples, before verification)")
        by_model, refused = self.kinds.get("pruned", 0), self.kinds.get("invalid", 0)
        parts.append(f"{by_model} pruned" + (" (predicted far slower by the cost model, not sent to the device)"
                                             if by_model else ""))
        parts.append(f"{sum(failed.values())} failed ({outcomes(failed)})" if failed else "0 failed")
        # points a constraint or a resource limit refused are not candidates (the budget does not count them)
        lines = [f"this run: {self.done} candidate{'' if self.done == 1 else 's'} in {duration(self.wall_seconds)} "
                 f"({rate:.1f}/min): "
                 + ", ".join(parts)
                 + (f"; {refused} more point{'' if refused == 1 else 's'} pruned by a constraint or a resource limit"
                    f" (not counted)" if refused else "")]
        if self.phase_seconds:
            phases = ", ".join(f"{name} {duration(self.phase_seconds[name])}"
                               for name in ("compile", "screen", "verify", "time") if name in self.phase_seconds)
            busy = (f"; device busy {self.device_busy_seconds / self.wall_seconds:.0%} of the run"
                    if self.device_busy_seconds and self.wall_seconds else "")
            lines.append(f"time in each phase, summed over candidates: {phases}{busy}")
        return lines

    def merge(self, other: "Tally") -> None:
        """Add another process's tally of the same run (kt tune --workers)."""
        self.done += other.done
        self.raced_out += other.raced_out
        self.raced_out_unverified += other.raced_out_unverified
        for kind, n in other.kinds.items():
            self.kinds[kind] = self.kinds.get(kind, 0) + n
        for phase, seconds in other.phase_seconds.items():
            self.phase_seconds[phase] = self.phase_seconds.get(phase, 0.0) + seconds
        for key, study in other.studies.items():  # each process saw the whole study: keep the fullest view
            mine = self.studies.get(key)
            if mine is None or study.evaluated > mine.evaluated:
                self.studies[key] = study
        self.found_complete = self.found_complete and other.found_complete
        self.last_failure = other.last_failure or self.last_failure
        self.wall_seconds = max(self.wall_seconds, other.wall_seconds)
        self.device_busy_seconds += other.device_busy_seconds
        # each study's result from the process that paired it (studies.run_studies' `pairs`)
        if self.results is None or other.results is None:
            self.results = self.results if self.results is not None else other.results
        else:
            self.results = [mine if mine is not None else theirs for mine, theirs in zip(self.results, other.results)]
