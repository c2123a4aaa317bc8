"""Early exits: a candidate whose compile takes far longer than the others' (`slow_compile`), or whose
binary spills more than the recipe allows (`spills`), ends after the compile pool and never reaches
the device. Pathological points (very wide blocks on one or two warps) otherwise hold a compile worker
for minutes and then run slowly through the whole timing protocol."""

from __future__ import annotations

import statistics
import threading

from kt_cli.evaluate.failure import WorkerFailure

COMPILES_SEEN_MIN = 3  # successful compiles before their times set the deadline
COMPILE_MULTIPLE = 5.0  # the deadline: this many times the median compile so far...
COMPILE_FLOOR_S = 10.0  # ...but never less than this (a busy machine, a cold worker)


class CompileDeadline:
    """How long one candidate's compile request may take: the recipe's `search.compile_timeout` when
    it sets one, else COMPILE_MULTIPLE times the median of the successful compiles seen so far in this
    run (at least COMPILE_FLOOR_S), and never more than the per-candidate `timeout`. A compile's time
    leaves out the time its worker and compilers waited for a core (the compile pool runs niced: on a
    busy host that wait is most of its wall time; kt_cli.evaluate.core_wait), up to the per-candidate
    timeout of wall time. Shared by the threads that compile at once."""

    def __init__(self, timeout: float, fixed: float | None = None):
        self.timeout, self.fixed = timeout, fixed
        self._seen: list[float] = []
        self._lock = threading.Lock()

    def seconds(self) -> float:
        if self.fixed is not None:
            return min(self.fixed, self.timeout)
        with self._lock:
            if len(self._seen) < COMPILES_SEEN_MIN:
                return self.timeout
            median = statistics.median(self._seen)
        return min(self.timeout, max(COMPILE_FLOOR_S, COMPILE_MULTIPLE * median))

    def record(self, seconds: float) -> None:
        """A successful compile took `seconds`."""
        with self._lock:
            self._seen.append(seconds)

    def verdict(self, failure: WorkerFailure, deadline: float) -> WorkerFailure:
        """What a failed compile request ends as: a timeout cut short by a deadline below the
        per-candidate timeout is `slow_compile` (its worker was killed and is replaced like any
        timed-out one); anything else keeps its kind."""
        if failure.kind != "timeout" or deadline >= self.timeout:
            return failure
        how = "the recipe's search.compile_timeout" if self.fixed is not None else \
            f"{COMPILE_MULTIPLE:g}x the median compile of this run, at least {COMPILE_FLOOR_S:g} s"
        return WorkerFailure("slow_compile", f"compiling took longer than {deadline:.3g} s ({how}; time "
                                             "waiting for a core not counted); compile worker killed and replaced")


def spill_breach(resources: dict, max_spill_bytes: int) -> str:
    """Why a compiled candidate spills too much to be worth timing, or "" when it does not.
    `resources` is Resources.to_json() of its main kernel; spills are bytes per thread (per lane)."""
    spilled = resources.get("spill_bytes") or 0
    if spilled > max_spill_bytes:
        return (f"spills {spilled} B per thread to local memory, more than search.max_spill_bytes = "
                f"{max_spill_bytes} (raise it in the recipe to time such candidates)")
    return ""
