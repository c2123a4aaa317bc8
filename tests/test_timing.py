"""The timing protocol's statistics and its timer on the fake device's clock (no GPU needed)."""

import random

import pytest

from kt_cli.reports.format import timing_flags
from kt_cli.evaluate.timing import EventTimer, block_bootstrap_median_ci, quantile, sample_until_tight
from tests.fake_vendor import CpuRuntime


def _iid_interval(samples, rounds=1000, seed=0):
    rng = random.Random(seed)
    medians = sorted(quantile(sorted(rng.choices(samples, k=len(samples))), 0.5) for _ in range(rounds))
    return quantile(medians, 0.025), quantile(medians, 0.975)


def test_block_bootstrap_is_wider_than_an_iid_one_on_drifting_timings():
    rng = random.Random(1)
    level, samples = 1.0, []
    for _ in range(400):  # a slow random walk (clock or thermal drift) under the noise
        level += rng.gauss(0, 0.004)
        samples.append(level + rng.gauss(0, 0.01))
    low, high = block_bootstrap_median_ci(samples)
    iid_low, iid_high = _iid_interval(samples)
    assert high - low > 1.5 * (iid_high - iid_low)


def test_a_measurement_that_misses_its_precision_says_so():
    rng = random.Random(2)
    stats = sample_until_tight(lambda n: [[rng.uniform(1, 3) for _ in range(n)]], "events", rel_ci=0.001,
                               max_seconds=0.05)
    assert stats[0].precise is False
    assert "imprecise" in timing_flags(stats[0].to_json())
    tight = sample_until_tight(lambda n: [[1.0 + 1e-6 * rng.random() for _ in range(n)]], "events")
    assert tight[0].precise is True and timing_flags(tight[0].to_json()) == ""


def test_a_racing_candidate_far_slower_than_the_best_stops_after_a_few_samples_and_a_close_one_gets_the_protocol():
    rng = random.Random(3)
    drawn = []

    def batch(n):
        drawn.append(n)
        return [[level * (1 + 0.002 * rng.random()) for _ in range(n)]]

    level = 2.0  # twice the best: raced out after the first, small batch
    stats = sample_until_tight(batch, "events", stop=lambda s: s[0].ci_low > 1.03)
    assert stats[0].raced_out and stats[0].calls == drawn[0] <= 5
    drawn.clear()
    level = 1.0  # as fast as the best: never stopped, and tight only over the protocol's 20 samples or more
    stats = sample_until_tight(batch, "events", stop=lambda s: s[0].ci_low > 1.03)
    assert not stats[0].raced_out and stats[0].precise and stats[0].calls >= 20 and drawn[0] <= 5


def test_only_the_judged_series_decides_when_sampling_stops_and_the_baseline_keeps_its_own_precision():
    rng = random.Random(4)
    drawn = []

    def batch(n):  # a steady candidate beside a baseline whose spread no cap would tighten
        drawn.append(n)
        return [[1.0 + 1e-4 * rng.random() for _ in range(n)], [rng.uniform(1, 3) for _ in range(n)]]

    candidate, baseline = sample_until_tight(batch, "events", judged=1)
    assert sum(drawn) == 20 and candidate.calls == baseline.calls == 20
    assert candidate.precise and not baseline.precise
    drawn.clear()
    candidate, baseline = sample_until_tight(batch, "events", max_seconds=0.05)  # both judged: the cap ends it
    assert not candidate.precise and not baseline.precise and sum(drawn) > 20


def test_a_candidate_and_its_baseline_slowed_alike_are_known_relative_to_each_other_before_their_medians_settle():
    # a GPU's clock falls 15% ten pairs into a timing, for the candidate and the baseline beside it alike
    # (the same 4096^3 GEMMs' own medians moved up to 7.8% between two timings on an H100: results/s26/x4)
    rng = random.Random(7)
    drawn, clock = [], []

    def batch(n):
        drawn.append(n)
        factors = [1.0 if len(clock) + i < 10 else 1.15 for i in range(n)]
        clock.extend(factors)
        return [[2.0 * f * (1 + 0.002 * rng.random()) for f in factors],
                [1.0 * f * (1 + 0.002 * rng.random()) for f in factors]]

    own, baseline, ratio = sample_until_tight(batch, "events", judged=1, ranked_by="ratio")
    assert sum(drawn) == 20 and ratio.calls == own.calls == baseline.calls == 20
    assert ratio.precise and not own.precise and ratio.median == pytest.approx(2.0, rel=0.005)
    drawn.clear()
    clock.clear()
    (own, _) = sample_until_tight(batch, "events", judged=1)
    assert sum(drawn) > 20  # by its own samples alone it needed more


def test_past_twenty_samples_a_batch_is_what_the_interval_says_is_missing_not_a_doubling():
    from kt_cli.evaluate.timing import next_batch

    assert [next_batch(n, 0.05, 0.01) for n in (5, 10)] == [5, 10]  # doubling up to the protocol's 20
    assert next_batch(320, 0.011, 0.01) < 100  # just over ±1%: about a quarter more, not 320 more
    assert next_batch(320, 0.02, 0.01) == 320  # far from it: never more than doubling
    assert next_batch(320, 0.0101, 0.01) == 80  # never less than a quarter of what is in
    rng = random.Random(5)
    drawn = []

    def batch(n):  # a spread that needs 60-120 samples for ±1%
        drawn.append(n)
        return [[rng.gauss(1.0, 0.04) for _ in range(n)]]

    stats = sample_until_tight(batch, "events", max_seconds=30)
    assert stats[0].precise and drawn[:2] == [20, 20] and len(drawn) > 2
    assert all(b < sum(drawn[:i]) for i, b in enumerate(drawn) if i >= 2)  # doubling drew 40, then 80


def test_interleaved_timing_runs_before_batch_before_every_batch_and_times_both_alike():
    import time

    timer = EventTimer(CpuRuntime(), flush_bytes=1 << 16, rel_ci=0.0001, max_seconds=0.2)
    batches = []
    fast, slow = (lambda: time.sleep(0.0002)), (lambda: time.sleep(0.0006))
    k, b = timer.measure_interleaved([fast, slow], "events", before_batch=lambda: batches.append(1))
    assert len(batches) >= 2  # what the last batch left is what gets checked
    assert k.calls == b.calls and k.method == b.method == "events"
    assert 2 < b.median / k.median < 4


def test_a_screen_times_the_candidate_alone_once_and_races_it_out_only_when_surely_above_the_bound():
    import time

    from kt_cli.evaluate.timing import RACE_FIRST_SAMPLES

    timer = EventTimer(CpuRuntime(), flush_bytes=1 << 16)
    calls, batches = [], []

    def kernel():
        calls.append(1)
        time.sleep(0.001)

    def first_call():
        calls.append("watched")
        kernel()

    slow = timer.screen(kernel, "events", bound_s=0.0002, before_batch=lambda: batches.append(len(calls)),
                        first_call=first_call)
    assert slow.raced_out and slow.calls == RACE_FIRST_SAMPLES and not slow.precise
    # the watched first call, three warm-up calls (no warm-up by time), poisoned outputs once, the samples
    assert calls[:2] == ["watched", 1] and calls.count("watched") == 1
    assert batches == [5] and len(calls) == 5 + RACE_FIRST_SAMPLES
    close = timer.screen(kernel, "events", bound_s=0.005)
    assert not close.raced_out  # below the bound: verified and timed fully next


def test_the_cpu_device_never_uses_graphs():
    timer = EventTimer(CpuRuntime(), flush_bytes=1 << 16)
    assert timer.choose_method(lambda: None) == "events"


class _QueuedDevice:
    """A device that runs queued work in order while the host goes on, as a GPU does: the host's clock
    advances by its own launch work only, and the device starts an item once it is free and the item
    has been launched. Times are simulated: nothing sleeps."""

    torch_device = "cpu"

    def __init__(self):
        self.host, self.free_at = 0.0, 0.0

    def launch(self, host_s: float, device_s: float) -> float:
        self.host += host_s
        start = max(self.free_at, self.host)
        self.free_at = start + device_s
        return self.free_at

    def synchronize(self):
        self.host = max(self.host, self.free_at)

    def event(self):
        device = self

        class Event:
            def record(self):
                self.at = device.launch(1e-6, 0.0)

            def seconds_until(self, later):
                return later.at - self.at

            def done(self):
                return self.at <= device.host

        return Event()

    def hold(self, seconds):
        self.launch(1e-6, seconds)
        return True

    def capture(self, work):
        return None

    def timer(self, flush: tuple = (5e-6, 35e-6), **options) -> EventTimer:
        """kt's EventTimer on this device, its cache flush one launch of `flush` (host s, device s)."""
        timer, device = EventTimer(self, flush_bytes=1 << 16, **options), self

        class Flush:
            def fill_(self, value):
                device.launch(*flush)

        timer._flush = Flush()
        return timer


def test_the_host_launch_work_of_a_call_is_not_timed_as_the_calls():
    """A Triton launch costs tens of µs of host time; a device left idle between samples starts the
    timed window before the kernel arrives, and a 190 µs kernel read 196-252 µs on an H100."""
    device = _QueuedDevice()
    timer = device.timer(max_seconds=0.5)
    kernel = lambda: device.launch(60e-6, 190e-6)  # noqa: E731 - a launcher slower than the flush
    anchor = lambda: device.launch(5e-6, 400e-6)  # noqa: E731
    k, a = timer.measure_interleaved([kernel, anchor], "events")
    assert abs(k.median / 190e-6 - 1) < 0.005 and abs(a.median / 400e-6 - 1) < 0.005
    first, second = timer.paired(kernel, anchor, rounds=120)
    assert max(abs(s / 190e-6 - 1) for s in first[1:]) < 0.005
    assert max(abs(s / 400e-6 - 1) for s in second[1:]) < 0.005


def test_a_kernel_shorter_than_its_launch_is_timed_at_its_device_time():
    """With the compile pool on every core, a launch that builds descriptors on the host took longer than
    the kernel (an H200: a 91 µs fp8 GEMM read 230-570 µs behind 8 lead flushes). Every sample, the
    screen's five and the paired ones included, must read the kernel's device time; a batch whose hold
    the host outlasted is taken again behind a longer one, its outputs poisoned afresh."""
    device = _QueuedDevice()
    timer = device.timer(max_seconds=0.5, host_clock=lambda: device.host)
    kernel = lambda: device.launch(400e-6, 90e-6)  # noqa: E731 - host launch work 4x the kernel
    anchor = lambda: device.launch(5e-6, 100e-6)  # noqa: E731
    poisoned = []
    screened = timer.screen(kernel, "events", bound_s=1.0, before_batch=lambda: poisoned.append(device.host))
    assert abs(screened.median / 90e-6 - 1) < 0.005 and screened.calls == 5
    assert timer.retaken >= 1 and len(poisoned) == 1 + timer.retaken  # the first batch's hold was the minimum
    k, a = timer.measure_interleaved([kernel, anchor], "events")
    assert abs(k.median / 90e-6 - 1) < 0.005 and abs(a.median / 100e-6 - 1) < 0.005 and k.precise
    first, second = timer.paired(kernel, anchor, rounds=120)
    assert max(abs(s / 90e-6 - 1) for s in first) < 0.005 and max(abs(s / 100e-6 - 1) for s in second) < 0.005


def test_a_host_stall_while_the_device_is_busy_costs_no_retake():
    """The host descheduled for 1.2 ms between two launches of a 1.4 ms kernel outlasts the batch's hold,
    but the device is still running the samples before: no window opened early, nothing is taken again."""
    import itertools

    device = _QueuedDevice()
    timer = EventTimer(device, flush_bytes=1 << 16, max_seconds=0.5, host_clock=lambda: device.host)
    stalls = itertools.chain([0.0, 1.2e-3], itertools.repeat(0.0))

    class Flush:
        def fill_(self, value):
            device.launch(5e-6 + next(stalls), 35e-6)

    timer._flush = Flush()
    kernel = lambda: device.launch(50e-6, 1.4e-3)  # noqa: E731
    screened = timer.screen(kernel, "events", bound_s=1.0)
    assert abs(screened.median / 1.4e-3 - 1) < 0.005 and timer.retaken == 0
    # nor does it stretch the next batch's hold: that is sized from the batch's median round
    held = []
    device.hold = lambda seconds: held.append(seconds) or _QueuedDevice.hold(device, seconds)
    timer.screen(kernel, "events", bound_s=1.0)
    assert held and max(held) < 2e-3


def test_a_batch_still_late_after_every_try_leaves_a_result_marked_imprecise():
    """A runtime whose hold holds nothing: every window opens before its launch is queued. The batches
    are taken again HOLD_TRIES times, then kept, and the result says it is not precise."""
    from kt_cli.evaluate.timing import HOLD_TRIES

    device = _QueuedDevice()
    device.hold = lambda seconds: True
    timer = device.timer(max_seconds=0.5, host_clock=lambda: device.host)
    (stats,) = timer.measure_interleaved([lambda: device.launch(400e-6, 90e-6)], "events")
    assert not stats.precise and timer.kept_late >= 1 and timer.retaken == (HOLD_TRIES - 1) * timer.kept_late


class _HeatingDevice(_QueuedDevice):
    """_QueuedDevice whose board heats under load, as an H200's climbs to its power cap: the share of the
    last HEAT_WINDOW_S the device was busy slows each kernel by its own `slows` (a compute-bound one more
    than a memory-bound one), so their ratio moves until the board is hot."""

    HEAT_WINDOW_S = 0.5

    def __init__(self):
        super().__init__()
        self.busy: list[tuple[float, float]] = []

    def heat(self, at: float) -> float:
        self.busy = [(a, b) for a, b in self.busy if b > at - self.HEAT_WINDOW_S]
        busy = sum(min(b, at) - max(a, at - self.HEAT_WINDOW_S) for a, b in self.busy)
        return min(1.0, busy / (0.8 * self.HEAT_WINDOW_S))

    def kernel(self, seconds: float, slows: float):
        def call():
            start = max(self.free_at, self.host + 5e-6)
            self.launch(5e-6, seconds * (1 + slows * self.heat(start)))
            self.busy.append((start, self.free_at))
        return call


def test_a_preheated_timing_samples_the_hot_board_and_a_cold_one_does_not():
    """On a cold H200 two 8192³ GEMMs' ratio drifted 6% within one timing, 'precise' at its end; a quarter
    of a second of load settled it (docs/performance.md, twenty-third session). The hot ratio here is
    2.5 x 1.02 / (1.5 x 1.09) = 1.560; cold it is 1.667."""
    hot = 2.5 * 1.02 / (1.5 * 1.09)

    def ratio(preheat_s: float) -> tuple[float, _HeatingDevice, EventTimer]:
        device = _HeatingDevice()
        # caps by calls, not by time: the warm-up and the time cap read the real clock, for which this
        # device's calls take no time (a warm-up of WARMUP_CALLS, at most 80 pairs)
        timer = device.timer(max_seconds=60, host_clock=lambda: device.host, preheat_s=preheat_s, rel_ci=0.002)
        kernel, baseline = device.kernel(2.5e-3, 0.02), device.kernel(1.5e-3, 0.09)
        stats = timer.measure_interleaved([kernel, baseline], "events", ranked_by="ratio", warm_up_s=0.0,
                                          max_samples=80)
        return stats[-1].median, device, timer

    cold, _, _ = ratio(0.0)
    warm, device, timer = ratio(0.5)
    assert abs(warm / hot - 1) < 0.005 and cold / hot - 1 > 0.02  # cold: 1.618 after 80 pairs, imprecise
    assert timer.last_steps["preheat"] >= 0
    # the board is hot now: a timing right after this one is not preheated again
    before = device.host
    kernel, baseline = device.kernel(2.5e-3, 0.02), device.kernel(1.5e-3, 0.09)
    timer.measure_interleaved([kernel, baseline], "events", ranked_by="ratio", warm_up_s=0.0, max_samples=80)
    assert device.host - before < 0.3  # its own samples only: no second half second of load


def test_short_calls_are_not_preheated():
    device = _HeatingDevice()
    timer = device.timer(max_seconds=60, host_clock=lambda: device.host, preheat_s=0.5)
    timer.measure_interleaved([device.kernel(50e-6, 0.0)], "events", warm_up_s=0.0, max_samples=80)
    assert device.host < 0.2  # the timing's own samples, no half second of load


class _CapturingDevice(_QueuedDevice):
    """_QueuedDevice that can capture: a graph replays the captured calls' device time in one launch."""

    def __init__(self):
        super().__init__()
        self.recording: list | None = None

    def launch(self, host_s: float, device_s: float) -> float:
        if self.recording is not None:
            self.recording.append(device_s)
            return self.free_at
        return super().launch(host_s, device_s)

    def capture(self, work):
        self.recording = []
        try:
            work()
        finally:
            captured, self.recording = sum(self.recording), None
        device = self

        class Graph:
            def replay(self):
                device.launch(2e-6, captured)

        return Graph()


def test_a_busy_host_does_not_make_a_short_baseline_look_long_enough_for_event_timing():
    """With kt's compile pool on every core, the device worker is descheduled between launches: an event
    sample then holds the wait. A 10 µs baseline must still get graph timing (a median probe chose
    events on an H100, and the problem's Triton candidates were timed with their launch work)."""
    import itertools

    device = _CapturingDevice()
    timer = device.timer()
    waits = itertools.cycle([400e-6, 400e-6, 0.0, 400e-6, 0.0])  # 3 launches in 5 wait for the CPU
    baseline = lambda: device.launch(5e-6 + next(waits), 10e-6)  # noqa: E731
    assert timer.choose_method(baseline) == "graph"


def test_a_problems_baseline_is_captured_once_for_all_its_candidates_and_still_timed_right():
    """Every screen pairs a candidate with the problem's baseline op on the same held tensors; capturing
    the baseline (and the flushes alone) again for each was a quarter of a raced-out GEMM's screen on an
    H100. A Reused baseline is captured once and replays its own time for every later candidate, whose
    graphs take its repeat count (no probe of their own, one graph of flushes); a baseline on other
    memory (another key) is captured anew, and the oldest kept graph is dropped past KEPT_SAMPLERS."""
    from kt_cli.evaluate.timing import KEPT_SAMPLERS, Reused

    device = _CapturingDevice()
    timer = device.timer((1e-6, 2e-6), max_seconds=0.5)
    calls = []
    baseline = Reused(lambda: calls.append(device.launch(5e-6, 50e-6)), ("gemm", 1000, "held at 0x1000"))
    timer.choose_method(baseline)
    captured, calls[:], probed = timer.captures, [], timer._probing_s
    for device_s in (60e-6, 45e-6, 15e-6):
        candidate = lambda device_s=device_s: device.launch(5e-6, device_s)  # noqa: E731
        screened = timer.screen(candidate, "graph", 1.0, baseline=baseline, bound_ratio=100.0)
        k, b, ratio = timer.measure_interleaved([candidate, baseline], "graph", judged=1, ranked_by="ratio")
        assert screened.median == pytest.approx(device_s, rel=1e-6) and k.median == pytest.approx(device_s, rel=1e-6)
        assert b.median == pytest.approx(50e-6, rel=1e-6) and ratio.median == pytest.approx(device_s / 50e-6)
    assert timer.captures == captured + 2 * 3  # each candidate's graph, twice; neither the baseline's nor the flushes'
    assert not calls  # nor was it warmed up again: every sample of it replayed the kept graph
    assert timer._probing_s == probed  # and no candidate was probed: each took the baseline's repeat count
    moved = Reused(lambda: device.launch(5e-6, 70e-6), ("gemm", 1000, "held at 0x2000"))
    (b,) = timer.measure_interleaved([moved], "graph")
    assert b.median == pytest.approx(70e-6, rel=1e-6) and timer.captures == captured + 7
    for n in range(KEPT_SAMPLERS):
        timer.measure_interleaved([Reused(lambda: device.launch(5e-6, 50e-6), ("other", n))], "graph")
    assert timer.captures == captured + 7 + KEPT_SAMPLERS
    timer.measure_interleaved([baseline], "graph")  # the oldest kept: dropped, captured again
    assert timer.captures == captured + 8 + KEPT_SAMPLERS


def test_a_graph_timed_pair_replays_the_flushes_alone_once_a_round_and_each_still_reads_its_own_time():
    """A candidate and its baseline graph-timed side by side hold as many calls a graph, so one replay of
    the flushes alone a round serves both subtractions: each replayed its own, a quarter of a pair's
    device time where a 100 MB flush outlasts a 1000^3 GEMM."""
    from kt_cli.evaluate.timing import Reused

    device = _CapturingDevice()
    timer = device.timer((1e-6, 30e-6), max_seconds=0.5)
    baseline = Reused(lambda: device.launch(5e-6, 10e-6), ("gemm", 1000, "held at 0x1000"))
    assert timer.choose_method(baseline) == "graph"
    (repeat, flushes), = timer._flush_graphs.items()
    replays, replay = [], flushes.replay
    flushes.replay = lambda: replays.append(1) or replay()
    k, b, ratio = timer.measure_interleaved([lambda: device.launch(5e-6, 14e-6), baseline], "graph", judged=1,
                                            ranked_by="ratio")
    assert len(replays) == k.calls == b.calls and repeat == 20
    assert k.median == pytest.approx(14e-6, rel=1e-6) and b.median == pytest.approx(10e-6, rel=1e-6)
    assert ratio.median == pytest.approx(1.4, rel=1e-6)


def test_a_time_ranked_by_a_tight_ratio_is_not_flagged_imprecise_for_its_own_wider_interval():
    own = {"median": 1.0, "ci_low": 0.9, "ci_high": 1.1, "precise": False}
    assert "±10.0%, imprecise" in timing_flags(own)
    assert timing_flags({**own, "ranked": {"seconds": 1.0, "ci_low": 0.995, "ci_high": 1.005, "precise": True}}) == ""
    ranked = {"seconds": 1.0, "ci_low": 0.97, "ci_high": 1.03, "precise": False}
    assert "±3.0%, imprecise" in timing_flags({**own, "ranked": ranked})


def test_a_problem_ranks_by_the_ratio_to_its_baseline_unless_that_is_far_noisier_than_its_kernels():
    from kt_cli.evaluate.race import Race

    race = Race()
    own = {"median": 2.0, "ci_low": 1.98, "ci_high": 2.02}
    steady = {**own, "baseline": {"median": 1.5}, "ratio": {"median": 1.3, "ci_low": 1.29, "ci_high": 1.31}}
    assert race.interval("gemm", steady) == pytest.approx((1.95, 1.935, 1.965))  # x the first baseline, 1.5
    later = {**own, "baseline": {"median": 1.8}, "ratio": {"median": 1.0, "ci_low": 0.99, "ci_high": 1.01}}
    assert race.interval("gemm", later) == pytest.approx((1.5, 1.485, 1.515))  # the reference stays 1.5
    noisy = {**own, "baseline": {"median": 0.01}, "ratio": {"median": 200.0, "ci_low": 160.0, "ci_high": 480.0}}
    assert race.interval("tiny baseline", noisy) == (2.0, 1.98, 2.02)  # its own time, from then on
    assert race.interval("tiny baseline", {**noisy, "ratio": later["ratio"]}) == (2.0, 1.98, 2.02)
    assert race.bound("tiny baseline", 0.03).seconds is None  # nothing timed yet as the best: no race
    race.timed("tiny baseline", 2.02)
    assert race.bound("tiny baseline", 0.03).ratio is None  # screens and timings race on their own time
    assert race.bound("tiny baseline", 0.03).ranking == "own" and race.bound("gemm", 0.03).ranking == "ratio"
    assert race.bound("not timed yet", 0.03).ranking == "either"  # the first full timing ends on either
