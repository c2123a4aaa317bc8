"""The timing protocol's statistics and its timer on the fake device's clock (no GPU needed)."""

import random

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


def test_interleaved_timing_runs_before_batch_before_every_batch_and_times_both_alike():
    import time

    timer = EventTimer(CpuRuntime(), flush_bytes=1 << 16, rel_ci=0.0001, max_seconds=0.2)
    batches = []
    fast, slow = (lambda: time.sleep(0.0002)), (lambda: time.sleep(0.0006))
    k, b = timer.measure_interleaved([fast, slow], "events", before_batch=lambda: batches.append(1))
    assert len(batches) >= 2  # what the last batch left is what gets checked
    assert k.calls == b.calls and k.method == b.method == "events"
    assert 2 < b.median / k.median < 4


def test_the_cpu_device_never_uses_graphs():
    timer = EventTimer(CpuRuntime(), flush_bytes=1 << 16)
    assert timer.choose_method(lambda: None) == "events"
