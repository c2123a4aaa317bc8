"""The timing protocol: statistics over repeated device-event timings, and a timer built on torch's
device events (CUDA and HIP builds of torch share that API). Vendors configure it via `kt_timer`."""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Stats:
    median: float
    p10: float
    p90: float
    ci_low: float  # 95% bootstrap interval of the median
    ci_high: float
    calls: int
    method: str  # "events" or "graph"

    def to_json(self) -> dict:
        return dict(self.__dict__)

    @property
    def rel_ci(self) -> float:
        return (self.ci_high - self.ci_low) / 2 / self.median if self.median > 0 else math.inf


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of an already sorted list."""
    if not sorted_values:
        raise ValueError("no samples")
    pos = (len(sorted_values) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bootstrap_median_ci(samples: list[float], rounds: int = 1000, seed: int = 0,
                        level: float = 0.95) -> tuple[float, float]:
    rng = random.Random(seed)
    n = len(samples)
    medians = sorted(
        quantile(sorted(rng.choices(samples, k=n)), 0.5) for _ in range(rounds)
    )
    tail = (1 - level) / 2
    return quantile(medians, tail), quantile(medians, 1 - tail)


def summarize(samples: list[float], method: str) -> Stats:
    ordered = sorted(samples)
    low, high = bootstrap_median_ci(samples)
    return Stats(quantile(ordered, 0.5), quantile(ordered, 0.1), quantile(ordered, 0.9), low, high,
                 len(samples), method)


def sample_until_tight(sample_batch: Callable[[int], list[float]], method: str, rel_ci: float = 0.01,
                       max_seconds: float = 2.0, min_samples: int = 20, max_samples: int = 2000) -> Stats:
    """Draw batches of timings until the median's 95% CI is within ±rel_ci, or a cap is reached."""
    samples: list[float] = []
    start = time.perf_counter()
    batch = min_samples
    while True:
        samples.extend(sample_batch(batch))
        stats = summarize(samples, method)
        spent = time.perf_counter() - start
        if stats.rel_ci <= rel_ci or spent >= max_seconds or len(samples) >= max_samples:
            return stats
        batch = min(len(samples), max_samples - len(samples))


class DeviceEventTimer:
    """Times a callable on the current torch device with events.

    Each timed call follows a write of `flush_bytes` (at least twice the last-level cache) so no call
    reads what the previous one left in cache. Calls whose event-timed probe is under `graph_below_s`
    are replayed from a device graph: `repeat` x (flush, call) minus `repeat` x (flush), interleaved,
    so launch overhead is not timed. The bound is 200 µs, not the 20 µs a kernel's own time would
    suggest: an event pair also times the host's launch work whenever it outlasts the flush, and a
    Triton launch with many arguments costs tens of µs of host time (seen on an H200: every LSTM/GRU
    step and the 1000³ GEMM sat at 27–47 µs under events while cuBLAS's 1000³ was graph-timed).
    """

    def __init__(self, flush_bytes: int, graph_below_s: float = 200e-6, rel_ci: float = 0.01,
                 max_seconds: float = 2.0, name: str = "device-events"):
        self.flush_bytes, self.graph_below_s = flush_bytes, graph_below_s
        self.rel_ci, self.max_seconds, self.name = rel_ci, max_seconds, name
        self._flush = None

    def _flush_buffer(self):
        import torch

        if self._flush is None:
            self._flush = torch.empty(self.flush_bytes // 4, dtype=torch.int32, device="cuda")
        return self._flush

    def measure(self, fn: Callable[[], None]) -> Stats:
        import torch

        flush = self._flush_buffer()
        for _ in range(3):  # first launches and any lazy compilation are never timed
            fn()
        torch.cuda.synchronize()
        probe = self._event_samples(fn, flush, 5)
        if sorted(probe)[2] < self.graph_below_s:
            try:
                return self._graph_stats(fn, flush, sorted(probe)[2])
            except Exception:  # not capturable (a host sync inside, say): fall back to plain events
                torch.cuda.synchronize()
        return sample_until_tight(lambda n: self._event_samples(fn, flush, n), "events",
                                  self.rel_ci, self.max_seconds)

    def _event_samples(self, fn, flush, n: int) -> list[float]:
        import torch

        pairs = []
        for _ in range(n):
            flush.fill_(1)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            pairs.append((start, end))
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1e-3 for s, e in pairs]

    def paired(self, first: Callable[[], None], second: Callable[[], None], rounds: int,
               method: str = "events") -> tuple[list[float], list[float]]:
        """`rounds` timings of each callable, taken in pairs back to back (order alternating) so that
        drift hits both alike. `method` "graph" times each from graph replays, as measure() does for
        short calls, so a ratio compares with one measure() took."""
        import torch

        flush = self._flush_buffer()
        for _ in range(3):
            first()
            second()
        torch.cuda.synchronize()
        samplers = [lambda fn=fn: self._event_samples(fn, flush, 1)[0] for fn in (first, second)]
        if method == "graph":
            try:
                samplers = [self._graph_sampler(fn, flush, sorted(self._event_samples(fn, flush, 5))[2])
                            for fn in (first, second)]
            except Exception:  # not capturable (as in measure()): plain events
                torch.cuda.synchronize()
        a, b = [], []
        for i in range(rounds):
            if i % 2:
                b.append(samplers[1]())
                a.append(samplers[0]())
            else:
                a.append(samplers[0]())
                b.append(samplers[1]())
        return a, b

    def _graph_stats(self, fn, flush, estimate_s: float) -> Stats:
        sample = self._graph_sampler(fn, flush, estimate_s)
        return sample_until_tight(lambda n: [sample() for _ in range(n)], "graph", self.rel_ci, self.max_seconds)

    def _graph_sampler(self, fn, flush, estimate_s: float) -> Callable[[], float]:
        """Capture `repeat` x (flush, call) and `repeat` x (flush); a sample is their difference per call."""
        import torch

        repeat = max(5, min(100, int(200e-6 / max(estimate_s, 1e-7))))
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm the allocator on the capture stream
            fn()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        with_call, flush_only = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
        with torch.cuda.graph(with_call):
            for _ in range(repeat):
                flush.fill_(1)
                fn()
        with torch.cuda.graph(flush_only):
            for _ in range(repeat):
                flush.fill_(1)

        def replay(graph) -> float:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1e-3

        return lambda: max(replay(with_call) - replay(flush_only), 0.0) / repeat
