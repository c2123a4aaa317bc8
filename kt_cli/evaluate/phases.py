"""How long one candidate spent in each phase of its evaluation: compile, screen (racing's first timing,
measured mode), verify, time; and each step inside them ("verify.launches", ...)."""

from __future__ import annotations

import contextlib
import time


class PhaseClock:
    """Wall seconds per phase of one candidate, kept when the phase ends in a failure too."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds

    @contextlib.contextmanager
    def phase(self, name: str):
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - started)
