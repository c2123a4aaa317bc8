"""The timing protocol: statistics over repeated timings, and a timer built on a vendor's
DeviceRuntime (events, graph capture, synchronisation). Vendors configure it in `Vendor.timer`.

What each rule defends against (docs/timing.md):
- warm-up by time (>= 25 ms and 3 calls): lazy compilation, first-touch allocation and clock ramp-up
  are never timed;
- a cache flush before each call: a call never reads what the previous one left in cache;
- graph replay for short calls (where the device can capture): the host's launch work is not timed;
- one method per problem, chosen once from the baseline op and used for the candidate and its
  baseline alike, with their samples interleaved: a speedup is the ratio of two timings taken the
  same way at the same moments, never of two differently biased estimators;
- samples queued behind a hold (device work that outlasts the host's queueing of the whole batch) and
  read after one synchronisation per batch: the device never waits for the host's launch work inside a
  timed window (a Triton launch costs tens of µs of host time, hundreds while the compile pool takes
  every core, and how many varies between processes); a batch in which the device reached a window
  before its launch was queued is taken again behind a longer hold;
- `before_batch` (kt re-poisons the outputs there) before every batch: what the last batch left is
  checked, so a kernel that does its work once and skips it on repeat calls has poison to show;
- a block bootstrap of the median: timings drift and are serially correlated, so an interval that
  assumes independent samples is too narrow;
- `precise`: whether the interval reached its target before the time cap; a result that did not
  says so in the artifact and in `kt show`;
- a preheat (off unless `preheat_s` or KT_TIMING_PREHEAT_S sets it): before a timing of calls of
  PREHEAT_ABOVE_S or longer on a board the timer has not held at load for PREHEAT_GAP_S, the calls run
  back to back for `preheat_s`, so that they are sampled at the power state a sustained workload runs
  in. On a cold H200 the ratio of two 8192³ GEMMs drifted 6% within one timing as the board climbed to
  its power cap (docs/performance.md, twenty-third session); a quarter of a second of load settled it.

What a timer keeps between timings (a device worker has one a device): the graph and probe of each
problem's baseline op (`Reused`: the same op on the same memory for every candidate), which the
candidates beside it share, and the graph of the flushes alone: device time spent on the protocol's
set-up, not on a rule.
"""

from __future__ import annotations

import math
import os
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Callable, Hashable

WARMUP_S = 0.025
WARMUP_CALLS = 3
# Racing: a candidate's first batch when it races (its interval can end its timing after any batch):
# a candidate far slower than the best is stopped after 5 samples instead of 20 (on the matmul recipe
# a raced-out candidate sampled 0.26 s with a first batch of 20). An interval counts as tight only once
# MIN_SAMPLES are in, whichever the first batch.
RACE_FIRST_SAMPLES = 5
MIN_SAMPLES = 20
# A batch's hold: twice what queueing its samples took the host in the batch before (the median round of
# samples, times the batch's rounds; at least HOLD_MIN_S, at most HOLD_MAX_S), so that the device is still
# held when the host has launched the last sample. On an H200 with the compile pool on every core, a
# 91 µs fp8 GEMM whose launch builds three TMA descriptors read 230-570 µs behind the lead of 8 cache
# flushes this replaced (benchmarks/results/s19/fp8).
HOLD_MIN_S = 1e-3
HOLD_MAX_S = 0.25
HOLD_TRIES = 3  # a batch in which the device reached a timed window before its launch was queued is
#               taken again behind a hold twice as long as the host took: at most this many times
PAIRS_IN_FLIGHT = 50  # paired samples queued before one synchronisation
# The preheat (module docstring): calls this long or longer are preheated, on a board the timer last held
# at load longer ago than the gap.
PREHEAT_ABOVE_S = 0.5e-3
PREHEAT_GAP_S = 0.5
# Graph samplers of Reused callables a timer keeps (each holds its callable, and so the memory its graph
# replays on): a worker's baseline ops of the last few problems
KEPT_SAMPLERS = 4


# A queued sample: what reads its time once the device has synchronised, and whether the device reached
# its timed window before the host had launched the work (then the window may hold host time)
Sample = tuple[Callable[[], float], bool]


@dataclass(frozen=True)
class Stats:
    median: float
    p10: float
    p90: float
    ci_low: float  # 95% block-bootstrap interval of the median
    ci_high: float
    calls: int
    method: str  # "events", "graph", or the external tool's name
    precise: bool = True  # the interval reached the timer's target before its time cap
    raced_out: bool = False  # sampling stopped early: the interval showed it could not be the best

    def to_json(self) -> dict:
        return dict(self.__dict__)

    @property
    def rel_ci(self) -> float:
        return (self.ci_high - self.ci_low) / 2 / self.median if self.median > 0 else math.inf


class Reused:
    """`fn`, timed again and again on the same memory: the baseline op of a problem, called on the same
    held tensors for every candidate. A timer keeps its graph sampler (the probe and both captures)
    under `key`, which must name that memory (the tensors' addresses, shapes and types), instead of
    capturing it again for every timing: on an H100 the baseline's capture was 8 ms of a raced-out
    4096^3 GEMM's 60 ms screen (docs/performance.md). The kept sampler holds this object, so the
    tensors `fn` reads stay allocated, and their addresses theirs, for as long as its graph may replay."""

    def __init__(self, fn: Callable[[], None], key: Hashable):
        self.fn, self.key = fn, key

    def __call__(self) -> None:
        self.fn()


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of an already sorted list."""
    if not sorted_values:
        raise ValueError("no samples")
    pos = (len(sorted_values) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def block_bootstrap_median_ci(samples: list[float], rounds: int = 1000, seed: int = 0,
                              level: float = 0.95) -> tuple[float, float]:
    """Interval of the median from a circular block bootstrap: resampling runs of consecutive samples
    (length about n^(1/3)) keeps the serial correlation of timings, which an i.i.d. bootstrap hides.
    numpy, single-threaded: the device's worker runs it between batches, and torch's CPU operations there
    (16 OpenMP threads beside a busy compile pool) took 17 ms a call on an H100 host for 5 samples."""
    import numpy as np

    n = len(samples)
    if n < 2:
        return samples[0], samples[0]
    block = max(1, round(n ** (1 / 3)))
    blocks = math.ceil(n / block)
    starts = np.random.default_rng(seed).integers(0, n, (rounds, blocks, 1))
    index = ((starts + np.arange(block)) % n).reshape(rounds, -1)[:, :n]
    medians = np.median(np.asarray(samples, dtype=np.float64)[index], axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(medians, [tail, 1 - tail])
    return float(low), float(high)


def summarize(samples: list[float], method: str, precise: bool = True, raced_out: bool = False) -> Stats:
    """Stats of timings in the order they were taken (the interval depends on that order)."""
    ordered = sorted(samples)
    low, high = block_bootstrap_median_ci(samples)
    return Stats(quantile(ordered, 0.5), quantile(ordered, 0.1), quantile(ordered, 0.9), low, high,
                 len(samples), method, precise, raced_out)


def sample_until_tight(sample_batch: Callable[[int], list[list[float]]], method: str, rel_ci: float = 0.01,
                       max_seconds: float = 2.0, min_samples: int = MIN_SAMPLES, max_samples: int = 2000,
                       stop: Callable[[list[Stats]], bool] | None = None, judged: int | None = None,
                       ranked_by: str = "") -> list[Stats]:
    """Draw batches of timings of one or more interleaved series (sample_batch(n) returns n more
    samples of each) until the median of each of the first `judged` series (all when None) is within
    ±rel_ci at 95% over at least `min_samples`, or a cap is reached, or `stop` says after a batch that
    the series so far settle what they are measured for (racing: then the first batch is
    RACE_FIRST_SAMPLES). The series after `judged` ride along (same moments, same count); each
    series' `precise` says whether its own interval is tight. Batches double what is in until
    `min_samples`, then grow by what the widest judged interval says is still missing (next_batch).
    With `ranked_by` (what the first series is ranked by: kt_cli.evaluate.race.Bound.ranking), one more
    Stats comes last (and `stop` sees it): that of the first series over the second, pair by pair
    (paired_ratios). Then whose interval ends the sampling: "own", the judged series' (the ratio rides
    along); "ratio", the ratio's alone: a candidate ranked by its ratio to its baseline is known as soon
    as that is, while the clock moves both (docs/timing.md, "Ranking by the ratio to the baseline");
    "either", whichever is tight first."""
    series: list[list[float]] = []
    start = time.perf_counter()
    batch = min(RACE_FIRST_SAMPLES, min_samples) if stop is not None else min_samples
    while True:
        for i, new in enumerate(sample_batch(batch)):
            series.extend([] for _ in range(i + 1 - len(series)))
            series[i].extend(new)
        kept = series + ([paired_ratios(series[0], series[1])] if ranked_by else [])
        stats = [summarize(s, method) if s else NO_STATS for s in kept]
        n, widest = len(series[0]), max(s.rel_ci for s in stats[:judged])
        if ranked_by == "ratio":
            widest = stats[-1].rel_ci if stats[-1].calls else math.inf
        elif ranked_by == "either" and stats[-1].calls:
            widest = min(widest, stats[-1].rel_ci)
        tight = n >= min_samples and widest <= rel_ci
        # (the Stats just made, marked: a bootstrap of each series again cost a raced-out screen 1.5 ms)
        if not tight and stop is not None and stop(stats):
            return [replace(st, precise=False, raced_out=True) if s else NO_STATS for s, st in zip(kept, stats)]
        if tight or time.perf_counter() - start >= max_seconds or n >= max_samples:
            return [replace(st, precise=tight and st.rel_ci <= rel_ci) if s else NO_STATS
                    for s, st in zip(kept, stats)]
        batch = min(next_batch(n, widest, rel_ci, min_samples), max_samples - n)


def paired_ratios(kernel: list[float], reference: list[float]) -> list[float]:
    """kernel/reference for each pair timed side by side (pairs whose reference read 0 left out): what a
    full timing ranks by, and what kt check compares."""
    return [k / r for k, r in zip(kernel, reference) if r > 0]


# The Stats of a series with no sample (a ratio whose every baseline sample read 0): no call, never
# below a bound (its users check `calls`)
NO_STATS = Stats(math.inf, math.inf, math.inf, math.inf, math.inf, 0, "none", precise=False)


def next_batch(n: int, widest: float, rel_ci: float, min_samples: int = MIN_SAMPLES) -> int:
    """How many more samples to draw after `n` whose widest judged interval is ±`widest`: doubling up
    to `min_samples`; past it, what the interval's 1/sqrt(n) narrowing says is still missing, plus a
    fifth, between a quarter of `n` and `n` (doubling). Doubling alone overshot: on an H200 most fully
    timed 8192³ GEMMs ended on a last batch of 320 pairs (about 1 s of device time) that
    carried their intervals from just over ±1% to ±0.1-0.6% (benchmarks/results/s14/final)."""
    if n < min_samples or not math.isfinite(widest):
        return n
    missing = n * ((widest / rel_ci) ** 2 - 1) * 1.2
    return int(min(n, max(n // 4, math.ceil(missing))))


class EventTimer:
    """Times callables on the current device with the vendor runtime's events (see the module's
    docstring for the protocol). Calls whose event-timed probe is under `graph_below_s` are replayed
    from a device graph where the runtime can capture one: `repeat` x (flush, call) minus `repeat` x
    (flush), so launch overhead is not timed. The bound is 200 µs, not the 20 µs a kernel's own time
    would suggest: an event pair also times the host's launch work whenever it outlasts the flush, and
    a Triton launch with many arguments costs tens of µs of host time (seen on an H200: every LSTM/GRU
    step and the 1000³ GEMM sat at 27–47 µs under events while cuBLAS's 1000³ was graph-timed)."""

    def __init__(self, runtime, flush_bytes: int, graph_below_s: float = 200e-6, rel_ci: float = 0.01,
                 max_seconds: float = 2.0, name: str = "device-events", host_clock: Callable[[], float] = time.perf_counter,
                 preheat_s: float | None = None):
        self.runtime, self.flush_bytes, self.graph_below_s = runtime, flush_bytes, graph_below_s
        # off (0) unless asked: not yet measured against `kt check`'s detection and false alarms
        self.preheat_s = float(os.environ.get("KT_TIMING_PREHEAT_S", "0")) if preheat_s is None else preheat_s
        self._loaded_at = -math.inf  # the host clock when the timer last held the board at load
        self._long_calls = False  # whether the timing under way samples calls of PREHEAT_ABOVE_S or longer
        self.host_clock = host_clock  # what sizes the holds: the host's time to queue a batch
        self.rel_ci, self.max_seconds, self.name = rel_ci, max_seconds, name
        self._flush = None
        self._queue_s = 0.0  # the host's time to queue one sample, in the last batch
        self._hold_supported = False  # whether the runtime held the device before the batch being queued
        self.last_steps: dict[str, float] = {}  # seconds of the last measure_interleaved's steps
        self.retaken = 0  # batches taken again: the device reached a window before its launch (all time)
        self.retaken_s = 0.0  # seconds spent on the tries taken again (all time)
        self.kept_late = 0  # batches kept late after HOLD_TRIES tries (all time)
        self._kept: OrderedDict = OrderedDict()  # Reused key -> (graph sampler, the Reused it samples, its probe)
        self._flush_graphs: dict = {}  # repeat -> the captured graph of that many flushes alone
        self._warmed: set = set()  # keys of the Reused ops this timer has warmed up
        self.captures = 0  # graphs captured (all time)
        self._probing_s = 0.0  # seconds spent probing (all time)
        self._round_flushes: dict = {}  # repeat -> the flushes-alone reading of the round being queued

    def _flush_buffer(self):
        import torch

        if self._flush is None:
            self._flush = torch.empty(self.flush_bytes // 4, dtype=torch.int32, device=self.runtime.torch_device)
        return self._flush

    def _warm_up(self, *fns: Callable[[], None], seconds: float = WARMUP_S) -> float | None:
        """Call each of `fns` until `seconds` have passed and each ran WARMUP_CALLS times. Returns the host
        clock's seconds a call took on average (None when there was nothing to warm)."""
        if not fns:
            return None
        began, started, calls = self.host_clock(), time.perf_counter(), 0
        while calls < WARMUP_CALLS or time.perf_counter() - started < seconds:
            for fn in fns:
                fn()
            calls += 1
            if calls % 8 == 0 or calls == WARMUP_CALLS:
                self.runtime.synchronize()
            if calls >= 10_000:
                break
        self.runtime.synchronize()
        return (self.host_clock() - began) / (calls * len(fns))

    def choose_method(self, fn: Callable[[], None]) -> str:
        """"graph" when `fn`'s event-timed probe is under graph_below_s and the device can capture it,
        else "events". kt chooses once per problem, from the baseline op. The probe is the fastest of
        5 event samples: a sample also holds whatever kept the host from launching `fn` on time, and
        with kt's compile pool busy on every core the device worker can wait for a core between
        launches (on an H100 the median of 5 most likely chose events for a 10 µs GEMM: every Triton
        candidate of the problem read 107-115 µs, their host launch work)."""
        flush = self._flush_buffer()
        self._warm_up(fn)
        if isinstance(fn, Reused):
            self._warmed.add(fn.key)
        probe = self._probe_s(fn, flush)
        if probe < self.graph_below_s and self._graph_sampler(fn, flush, probe) is not None:
            return "graph"
        return "events"

    def measure(self, fn: Callable[[], None], method: str | None = None,
                before_batch: Callable[[], None] | None = None) -> Stats:
        """Stats of `fn` with `method` (chosen by choose_method when None)."""
        method = method or self.choose_method(fn)
        return self.measure_interleaved([fn], method, before_batch)[0]

    def measure_interleaved(self, fns: list[Callable[[], None]], method: str,
                            before_batch: Callable[[], None] | None = None,
                            stop: Callable[[list[Stats]], bool] | None = None, warm_up_s: float = WARMUP_S,
                            max_samples: int = 2000, judged: int | None = None, ranked_by: str = "") -> list[Stats]:
        """Stats of each of `fns`, timed with one `method`, one sample of each in turn (the order
        alternating), until the medians of the first `judged` (all when None) are tight or the time cap or
        `max_samples` is reached, or `stop` (racing) ends it early. `before_batch` runs (untimed) before
        every batch. With `ranked_by` ("own", "ratio" or "either": sample_until_tight), the Stats of the
        first's samples over the second's, pair by pair, come last."""
        started = time.perf_counter()
        flush = self._flush_buffer()
        # a timing's first batch is held HOLD_MIN_S, not sized by the last timing's queueing (another
        # candidate's launches, on a host then more or less busy): a device worker's timer serves every
        # candidate, and so sized its screens held an H100 2-3 ms longer each (results/s27/call1)
        self._queue_s = 0.0
        # a Reused op this timer has run before (a problem's baseline, called for every candidate) is
        # warm: its code loaded, its memory allocated, and the device's clock is the candidates' to raise
        per_call = self._warm_up(*[fn for fn in fns if not (isinstance(fn, Reused) and fn.key in self._warmed)],
                                 seconds=warm_up_s)
        self._warmed.update(fn.key for fn in fns if isinstance(fn, Reused))
        heating = time.perf_counter()
        self._preheat(fns, per_call)
        heated = time.perf_counter() - heating
        warm, probed = time.perf_counter(), self._probing_s
        samplers = self._samplers(fns, flush, method)
        ready, probe = time.perf_counter(), self._probing_s - probed

        spent = {"poison": 0.0, "sampling": 0.0, "retaken": 0.0}

        def batch(n: int) -> list[list[float]]:
            began = time.perf_counter()
            if before_batch is not None:
                before_batch()
                self.runtime.synchronize()
            queued, retaken = time.perf_counter(), self.retaken_s
            try:
                return self._take(samplers, n, before_batch)
            finally:
                spent["poison"] += queued - began
                spent["retaken"] += self.retaken_s - retaken
                spent["sampling"] += time.perf_counter() - queued - (self.retaken_s - retaken)

        kept_late = self.kept_late
        stats = sample_until_tight(batch, method, self.rel_ci, self.max_seconds, stop=stop, max_samples=max_samples,
                                   judged=judged, ranked_by=ranked_by)
        if self.kept_late > kept_late:  # a batch may hold host time: the result says it is not precise
            stats = [replace(s, precise=False) for s in stats]
        # sampling: the samples queued, run and read; retaken: batches taken again (a window opened before
        # its launch was queued); statistics: the intervals between batches
        # probe: the event samples that size a graph's repeat count; capture: the rest of readying the samplers
        self.last_steps = {"warm-up": warm - started - heated, "preheat": heated, "probe": probe,
                           "capture": ready - warm - probe, **spent,
                           "statistics": time.perf_counter() - ready - sum(spent.values())}
        if self._long_calls:
            self._loaded_at = self.host_clock()
        return stats

    def _preheat(self, fns: list[Callable[[], None]], per_call: float | None) -> None:
        """Hold the board at load before sampling calls of PREHEAT_ABOVE_S or longer (module docstring):
        `fns` back to back for `preheat_s` by the host clock, unless the timer held the board at load
        within PREHEAT_GAP_S. `per_call`: what a call took in the warm-up (None where every callable was
        warm already: one round then tells). Nothing when off."""
        self._long_calls = False
        if not self.preheat_s or not fns:
            return
        began = self.host_clock()
        if per_call is None:
            for fn in fns:
                fn()
            self.runtime.synchronize()
            per_call = (self.host_clock() - began) / len(fns)
        self._long_calls = per_call >= PREHEAT_ABOVE_S
        if self._long_calls and began - self._loaded_at > PREHEAT_GAP_S:
            rounds = 0
            while self.host_clock() - began < self.preheat_s:
                for fn in fns:
                    fn()
                rounds += 1
                if rounds % 8 == 0:
                    self.runtime.synchronize()
            self.runtime.synchronize()

    def screen(self, fn: Callable[[], None], method: str, bound_s: float,
               before_batch: Callable[[], None] | None = None,
               first_call: Callable[[], None] | None = None, baseline: Callable[[], None] | None = None,
               bound_ratio: float | None = None) -> Stats:
        """Racing's cheap first timing, before a candidate is verified: `first_call` where given (the
        same launch, watched more closely than a timed call can be), WARMUP_CALLS calls with no warm-up
        by time, then one batch of RACE_FIRST_SAMPLES samples of `fn` by the problem's `method`.
        `raced_out` when the interval's lower end lies above `bound_s` (the best so far plus the race's
        margin): such a candidate cannot win, and nothing more of it runs on the device. With `baseline`
        and `bound_ratio`, the samples are pairs with the baseline and it is their ratio's interval that
        is held against `bound_ratio`: a clock that slowed since the best was timed slows both (and a
        candidate it would have raced out by its own time alone may still win). Otherwise the caller
        verifies it and times it fully, beside the baseline. The device is kept warm by the candidates
        timed before it; what a new binary's first calls cost (its load) is in the warm-up."""
        started = time.perf_counter()
        if first_call is not None:
            first_call()
        first = time.perf_counter() - started
        if baseline is not None and bound_ratio is not None:
            stats, _, _ = self.measure_interleaved(
                [fn, baseline], method, before_batch, stop=lambda s: s[-1].calls > 0 and s[-1].ci_low > bound_ratio,
                warm_up_s=0.0, max_samples=RACE_FIRST_SAMPLES, judged=1, ranked_by="ratio")
        else:
            (stats,) = self.measure_interleaved([fn], method, before_batch, stop=lambda s: s[0].ci_low > bound_s,
                                                warm_up_s=0.0, max_samples=RACE_FIRST_SAMPLES)
        self.last_steps["warm-up"] += first
        return stats

    def paired(self, first: Callable[[], None], second: Callable[[], None], rounds: int,
               method: str = "events") -> tuple[list[float], list[float]]:
        """`rounds` timings of each callable, taken in pairs back to back (order alternating) so that
        drift hits both alike; `method` as measure() chose it, so a ratio compares with tuning's."""
        flush = self._flush_buffer()
        self._warm_up(first, second)
        samplers = self._samplers([first, second], flush, method)
        a, b = [], []
        for done in range(0, rounds, PAIRS_IN_FLIGHT):
            more_a, more_b = self._take(samplers, min(PAIRS_IN_FLIGHT, rounds - done))
            a += more_a
            b += more_b
        return a, b

    def _take(self, samplers: list[Callable[[], Sample]], n: int,
              before_batch: Callable[[], None] | None = None) -> list[list[float]]:
        """`n` samples of each sampler, interleaved (the order alternating), all queued on the device
        behind a hold and read after one synchronisation. Waiting for each sample instead leaves the
        device idle when the next call is launched, so its start event fires before the host has
        finished launching: a Triton launch's tens of µs of host work, which vary from one process to
        the next, were timed as the kernel's (on an H100, softmax's best config read 196-252 µs in six
        fresh processes against 189-193 µs for back-to-back calls). The hold keeps the device busy
        while the host queues; a batch in which the device reached a sample's window before the host
        had launched its work is taken again (`before_batch` first: the outputs poisoned afresh)
        behind a hold twice as long as the host took to queue it; one still late after HOLD_TRIES is
        kept and counted (`kept_late`: its measurement is then not `precise`)."""
        for attempt in range(HOLD_TRIES):
            if attempt:
                self.retaken += 1
                self.retaken_s += time.perf_counter() - tried
                if before_batch is not None:
                    before_batch()
            tried = time.perf_counter()
            self._hold(min(HOLD_MAX_S, max(HOLD_MIN_S, 2 * self._queue_s * n)))
            pending: list[list[Callable[[], float]]] = [[] for _ in samplers]
            late, rounds = False, []
            for i in range(n):
                began = self.host_clock()
                self._round_flushes = {}
                order = range(len(samplers)) if i % 2 == 0 else reversed(range(len(samplers)))
                for j in order:
                    read, was_late = samplers[j]()
                    pending[j].append(read)
                    late = late or was_late
                rounds.append(self.host_clock() - began)
            self._queue_s = sorted(rounds)[len(rounds) // 2]  # the median: one stall of the host does not
            #                                                   stretch every later hold
            self.runtime.synchronize()
            if not late:
                break
        else:
            self.kept_late += 1
        return [[read() for read in series] for series in pending]

    def _hold(self, seconds: float) -> None:
        """The runtime's hold (DeviceRuntime.hold), where it has one: a third-party runtime written
        before kt asked for it, or a synchronous device (its hold says False), queues its batches
        without one and is never asked whether the device reached a window early."""
        hold = getattr(self.runtime, "hold", None)
        self._hold_supported = hold is not None and bool(hold(seconds))

    def _samplers(self, fns: list[Callable[[], None]], flush, method: str) -> list[Callable[[], Sample]]:
        """One sampler per callable, all with `method` (events where a graph fails): a sampler queues one
        timed sample and returns what reads it once the device has synchronised, and whether the device
        reached the sample's window before its launch was queued."""
        by_events = [lambda fn=fn: self._queue_event_sample(fn, flush) for fn in fns]
        if method != "graph":
            return by_events
        # A problem's baseline (its Reused op) is probed once, when first kept; the candidates timed beside
        # it take its probe, so their graphs hold as many calls as its own and share its graph of flushes.
        # Each candidate's own probe (5 event samples, their hold and a synchronisation) was 7-8 ms of a
        # raced-out GEMM's 53 ms screen on an H100, where every candidate's graph held 5 calls anyway
        # (results/s27/call4); a candidate far slower than the baseline samples longer windows instead.
        graphed = {id(fn): self._graph_sampler(fn, flush) for fn in fns if isinstance(fn, Reused)}
        probe = next((self._kept[fn.key][2] for fn in fns if isinstance(fn, Reused) and fn.key in self._kept), None)
        graphed.update({id(fn): self._graph_sampler(fn, flush, probe) for fn in fns if id(fn) not in graphed})
        samplers = [graphed[id(fn)] for fn in fns]
        return by_events if None in samplers else samplers

    def _graph_sampler(self, fn, flush, probe_s: float | None = None) -> Callable[[], Sample] | None:
        """_graph_sampler_or_none, kept for a Reused `fn` (and taken from what was kept): its probe and
        captures are made once while its key stays among the KEPT_SAMPLERS last used."""
        key = fn.key if isinstance(fn, Reused) else None
        if key is not None and key in self._kept:
            self._kept.move_to_end(key)
            return self._kept[key][0]
        probe_s = self._probe_s(fn, flush) if probe_s is None else probe_s
        sampler = self._graph_sampler_or_none(fn, flush, probe_s)
        if key is not None and sampler is not None:
            self._kept[key] = (sampler, fn, probe_s)
            while len(self._kept) > KEPT_SAMPLERS:
                self._kept.popitem(last=False)
        return sampler

    def _queue_event_sample(self, fn, flush) -> Sample:
        flush.fill_(1)
        start, end = self.runtime.event(), self.runtime.event()
        start.record()
        fn()
        late = self._reached(start)
        end.record()
        return (lambda: start.seconds_until(end)), late

    def _reached(self, event) -> bool:
        """Whether the device has reached `event` (recorded just before a launch that has now been
        queued): then it opened the timed window before the host had launched the work, and the window
        may hold host time. Asked only of runtimes that hold (synchronous devices reach every event)."""
        return self._hold_supported and event.done()

    def _probe_s(self, fn, flush) -> float:
        """The fastest of 5 event samples of `fn`: its device time, less whatever held the host back."""
        started = time.perf_counter()
        try:
            return min(self._event_samples(fn, flush, 5))
        finally:
            self._probing_s += time.perf_counter() - started

    def _event_samples(self, fn, flush, n: int) -> list[float]:
        return self._take([lambda: self._queue_event_sample(fn, flush)], n)[0]

    def _graph_sampler_or_none(self, fn, flush, estimate_s: float) -> Callable[[], Sample] | None:
        """Capture `repeat` x (flush, call) and `repeat` x (flush); a sample is their difference per call.
        None where the runtime cannot capture, or `fn` is not capturable (a host sync inside, say)."""
        repeat = max(5, min(100, int(200e-6 / max(estimate_s, 1e-7))))

        def flushes():
            for _ in range(repeat):
                flush.fill_(1)

        def calls():
            for _ in range(repeat):
                flush.fill_(1)
                fn()

        try:
            with_call = self.runtime.capture(calls)
            self.captures += 1
            # the flushes alone are the same graph for every callable of a repeat count: captured once
            flush_only = self._flush_graphs.get(repeat)
            if with_call is not None and flush_only is None:
                flush_only = self._flush_graphs[repeat] = self.runtime.capture(flushes)
                self.captures += 1
        except Exception:  # not capturable: plain events
            self.runtime.synchronize()
            return None
        if with_call is None or flush_only is None:
            return None

        def replay(graph) -> Sample:
            start, end = self.runtime.event(), self.runtime.event()
            start.record()
            graph.replay()
            late = self._reached(start)
            end.record()
            return (lambda: start.seconds_until(end)), late

        def sample() -> Sample:
            calls_and_flushes, late = replay(with_call)
            # the flushes alone, replayed once a round: every graph of the round holding as many calls (a
            # candidate and its baseline, which takes its probe) subtracts the same reading, taken beside
            # one of them, the order alternating by round; each replayed its own before, a quarter of a
            # graph-timed pair's device time (a 1000^3 GEMM's flushes of 100 MB outlast its calls)
            if repeat not in self._round_flushes:
                self._round_flushes[repeat] = replay(flush_only)
            flushes_alone, late_too = self._round_flushes[repeat]
            return (lambda: max(calls_and_flushes() - flushes_alone(), 0.0) / repeat), late or late_too

        return sample
