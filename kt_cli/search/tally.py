"""What a run counts as it goes: candidates done, failures by kind, the best per (target, problem)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kt_cli.types import TrialResult, shape_key


@dataclass
class Tally:
    """Counts for the progress line and the final summary."""

    done: int = 0
    kinds: dict = field(default_factory=dict)
    best: dict = field(default_factory=dict)
    found_complete: bool = True  # every study's budget was spent before this run began
    written_by: dict | None = None  # the process that wrote the artifact, when another did
    last_failure: str = ""
    wall_seconds: float = 0.0
    device_busy_seconds: float = 0.0  # time the device worker spent verifying and timing

    def summary(self) -> str:
        rate = self.done / self.wall_seconds * 60 if self.wall_seconds else 0.0
        text = f"{self.done} candidates in {self.wall_seconds:.0f} s ({rate:.1f}/min)"
        if self.device_busy_seconds:
            text += f", device busy {self.device_busy_seconds / self.wall_seconds:.0%} of the time"
        return text

    def add(self, result: TrialResult) -> None:
        self.kinds[result.failure_kind] = self.kinds.get(result.failure_kind, 0) + 1
        if result.failure_kind != "invalid":
            self.done += 1
        if not result.ok:
            self.last_failure = f"{result.failure_kind}: {result.message}"
        key = (result.target, shape_key(result.shape))
        if result.ok and (key not in self.best or result.value < self.best[key]):
            self.best[key] = result.value

    def merge(self, other: "Tally") -> None:
        """Add another process's tally of the same run (kt tune --workers)."""
        self.done += other.done
        for kind, n in other.kinds.items():
            self.kinds[kind] = self.kinds.get(kind, 0) + n
        for key, value in other.best.items():
            self.best[key] = min(value, self.best.get(key, value))
        self.found_complete = self.found_complete and other.found_complete
        self.last_failure = other.last_failure or self.last_failure
        self.wall_seconds = max(self.wall_seconds, other.wall_seconds)
        self.device_busy_seconds += other.device_busy_seconds
