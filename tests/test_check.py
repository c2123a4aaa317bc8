"""kt check: the verdict over paired samples, and every exit code of the command on recorded
measurements (--replay), the way Kernel Tuner's simulation runner replays a GPU's timings."""

import json
from xml.etree import ElementTree as ET

import pytest

from kt_cli.reports.check import decide, parse_threshold
from kt_cli.errors import BadInput
from tests.recorded import amd_artifact, kt_cli_runner, nvidia_artifact, paired_samples, recording, tamper

BIG, WIDE = "nvidia:sm_90|M=32768,N=4096", "nvidia:sm_90|M=4096,N=32768"
H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture
def kt():
    return kt_cli_runner()


def samples(kernel_s, reference_s, **kw):
    kernel, reference = paired_samples(kernel_s, reference_s, **kw)
    return {"device": H100, "kernel": kernel, "baseline": reference, "timer": "cuda-events"}


# --- the decision --------------------------------------------------------------------------------


def test_a_twenty_percent_slowdown_is_a_regression():
    kernel, reference = paired_samples(1.2 * 100e-6, 150e-6)  # the artifact had 150/100 = 1.5x
    verdict = decide(kernel, reference, stored_speedup=1.5, threshold=0.05)
    assert verdict.status == "regression"
    assert 1.15 < verdict.low <= verdict.slowdown <= verdict.high < 1.25


def test_a_slowdown_inside_the_threshold_passes():
    kernel, reference = paired_samples(1.03 * 100e-6, 150e-6)
    verdict = decide(kernel, reference, 1.5, 0.05)
    assert verdict.status == "pass" and 1.0 < verdict.slowdown < 1.05


def test_noise_without_confidence_is_not_a_regression():
    # the median is 8% slower, but ten very noisy pairs cannot tell that from chance
    kernel, reference = paired_samples(1.08 * 100e-6, 150e-6, n=10, noise=0.3, seed=3)
    verdict = decide(kernel, reference, 1.5, 0.05)
    assert verdict.status == "pass" and verdict.high > 1.05 > verdict.low


def test_drift_shared_by_a_pair_does_not_hide_a_regression():
    # each pair drifts together by up to 2x (a busy or throttled GPU); the kernel is really 10% slower
    kernel, reference = paired_samples(1.10 * 100e-6, 150e-6, noise=0.005, seed=5)
    drifted_k = [k * (1 + (i % 7) / 7) for i, k in enumerate(kernel)]
    drifted_r = [r * (1 + (i % 7) / 7) for i, r in enumerate(reference)]
    verdict = decide(drifted_k, drifted_r, 1.5, 0.05)
    assert verdict.status == "regression" and abs(verdict.slowdown - 1.10) < 0.02


def test_a_ratio_that_moves_between_input_blocks_widens_the_interval_instead_of_failing():
    # five blocks of fresh inputs whose ratios spread 0.99-1.07 (placement, data): taken as one block
    # the 3% median shift looks certain; taken as blocks it is not, and a 2% gate must not fire
    kernel, reference = [], []
    for i, factor in enumerate([0.99, 1.01, 1.03, 1.05, 1.07]):
        k, r = paired_samples(factor * 100e-6, 150e-6, n=40, noise=0.01, seed=i)
        kernel, reference = kernel + k, reference + r
    assert decide(kernel, reference, 1.5, 0.02).status == "regression"
    verdict = decide(kernel, reference, 1.5, 0.02, blocks=[40] * 5)
    assert verdict.status == "pass" and verdict.low < 1.02 < 1.05 < verdict.high
    # consistent blocks keep a real 10% slowdown certain
    kernel, reference = paired_samples(1.10 * 100e-6, 150e-6, n=200, noise=0.01, seed=9)
    stored = [1 / 1.5 * f for f in (0.99, 1.0, 1.01, 1.0, 1.0)]
    assert decide(kernel, reference, 1.5, 0.05, blocks=[40] * 5, stored_ratios=stored).status == "regression"


def test_threshold_and_samples_are_validated():
    assert parse_threshold("5%") == pytest.approx(0.05) and parse_threshold("0.1") == 0.1
    with pytest.raises(BadInput, match="--threshold"):
        parse_threshold("five")
    with pytest.raises(BadInput, match="at least 5 paired"):
        decide([1e-4, 1e-4], [1e-4], 1.0, 0.05)


# --- the command, on recorded measurements ---------------------------------------------------------


def test_pass_within_noise_exits_0_and_writes_reports(kt, tmp_path):
    art = nvidia_artifact(tmp_path)
    rec = recording(tmp_path / "rec.json", art, {BIG: samples(100e-6, 151e-6), WIDE: samples(100e-6, 119e-6)})
    junit, md = tmp_path / "junit.xml", tmp_path / "check.md"
    result = kt("check", art, "--replay", rec, "--junit", junit, "--markdown", md)
    assert result.exit_code == 0, result.output
    assert "2 configs pass" in result.stdout
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "0", "1")  # sm_100 estimated
    assert "| softmax" in md.read_text() and "pass" in md.read_text()


def test_a_regression_exits_1_and_names_it(kt, tmp_path):
    art = nvidia_artifact(tmp_path)
    rec = recording(tmp_path / "rec.json", art, {BIG: samples(125e-6, 150e-6), WIDE: samples(100e-6, 120e-6)})
    junit = tmp_path / "junit.xml"
    result = kt("check", art, "--replay", rec, "--junit", junit)
    assert result.exit_code == 1
    assert "kt: error: 1 of 2 checked configs failed: softmax nvidia:sm_90 M=32768,N=4096: regression" in result.stderr
    failures = ET.parse(junit).getroot().findall(".//failure")
    assert [f.get("type") for f in failures] == ["regression"]
    # the same samples with a looser threshold: 1.25x is inside 30%
    assert kt("check", art, "--replay", rec, "--threshold", "30%").exit_code == 0
    as_json = kt("check", art, "--replay", rec, "--json")  # the same verdicts, as JSON
    assert as_json.exit_code == 1
    assert sorted(o["status"] for o in json.loads(as_json.stdout) if o["status"] in ("pass", "regression")) == \
        ["pass", "regression"]


def test_check_reads_the_blocks_of_a_recording_and_the_artifact(kt, tmp_path):
    """The same 200 pairs, 3% slower than the artifact: with the blocks the measurement says it had
    (fresh inputs whose ratios spread 0.99-1.07) a 2% gate passes; taken as one block it fires."""
    art = nvidia_artifact(tmp_path)
    kernel, reference = [], []
    for i, factor in enumerate([0.99, 1.01, 1.03, 1.05, 1.07]):
        k, r = paired_samples(factor * 100e-6, 150e-6, n=40, noise=0.01, seed=i)
        kernel, reference = kernel + k, reference + r
    blocked = {"device": H100, "kernel": kernel, "baseline": reference, "timer": "cuda-events", "blocks": [40] * 5}
    flat = {k: v for k, v in blocked.items() if k != "blocks"}
    rec = recording(tmp_path / "blocked.json", art, {BIG: blocked, WIDE: samples(100e-6, 120e-6)})
    assert kt("check", art, "--replay", rec, "--threshold", "2%").exit_code == 0
    rec = recording(tmp_path / "flat.json", art, {BIG: flat, WIDE: samples(100e-6, 120e-6)})
    result = kt("check", art, "--replay", rec, "--threshold", "2%")
    assert result.exit_code == 1 and "M=32768,N=4096: regression" in result.stderr


def test_samples_that_may_hold_host_launch_time_are_said_in_the_verdict(kt, tmp_path):
    """A measurement whose timer kept batches still late after every try (EventTimer.kept_late): the
    verdict stands, and its message says how many batches may hold host launch time."""
    art = nvidia_artifact(tmp_path)
    rec = recording(tmp_path / "rec.json", art, {BIG: {**samples(100e-6, 150e-6), "late_batches": 2},
                                                 WIDE: samples(100e-6, 120e-6)})
    result = kt("check", art, "--replay", rec, "--json")
    assert result.exit_code == 0, result.output
    messages = [o.get("message", "") for o in json.loads(result.stdout)]
    assert sum("2 batch(es) of samples may hold host launch time" in m for m in messages) == 1, messages


def test_a_wrong_result_exits_1(kt, tmp_path):
    art = nvidia_artifact(tmp_path)
    wrong = {"device": H100, "failure_kind": "wrong",
             "message": "output 'y' shape {'M': 32768, 'N': 4096}: relative error 0.41 > 0.01"}
    rec = recording(tmp_path / "rec.json", art, {BIG: wrong, WIDE: samples(100e-6, 120e-6)})
    result = kt("check", art, "--replay", rec)
    assert result.exit_code == 1
    assert "wrong" in result.stderr and "relative error 0.41" in result.stdout


def test_no_device_for_any_target_exits_2(kt, tmp_path):
    from kt_cli.plugins import devices

    if devices():
        pytest.skip("a GPU is present")
    art = nvidia_artifact(tmp_path)
    result = kt("check", art)
    assert result.exit_code == 2
    assert result.stderr.strip() == ("kt: error: no device here for any measured target of the artifacts "
                                     "(nvidia:sm_90); run kt check on a GPU of one of those targets")


def test_a_target_without_a_device_is_skipped_when_another_is_checked(kt, tmp_path):
    nv, amd = nvidia_artifact(tmp_path), amd_artifact(tmp_path)
    rec = recording(tmp_path / "rec.json", nv, {BIG: samples(100e-6, 150e-6), WIDE: samples(100e-6, 120e-6)})
    result = kt("check", nv, amd, "--replay", rec)
    assert result.exit_code == 0, result.output
    assert result.stdout.count("no_device") == 2 and "2 configs pass" in result.stdout


def test_a_tampered_artifact_exits_2(kt, tmp_path):
    art = nvidia_artifact(tmp_path)
    rec = recording(tmp_path / "rec.json", art, {BIG: samples(100e-6, 150e-6)})
    tamper(art)
    result = kt("check", art, "--replay", rec)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "sha256 does not match" in result.stderr


def test_an_artifact_with_only_estimates_exits_2(kt, tmp_path):
    from tests.recorded import B200, entry, write_artifact

    art = write_artifact(tmp_path, "softmax", [entry("nvidia:sm_100", {"M": 4096, "N": 4096},
                                                     {"BLOCK_N": 4096, "num_warps": 8}, 9e-6, B200, None)])
    result = kt("check", art)
    assert result.exit_code == 2 and "has only estimated results" in result.stderr


def test_a_measured_result_without_its_ratio_is_refused(kt, tmp_path):
    art = nvidia_artifact(tmp_path)
    manifest = json.loads((art / "manifest.json").read_text())
    del manifest["results"][0]["stats"]["speedup"]
    (art / "manifest.json").write_text(json.dumps(manifest))
    result = kt("check", art)
    assert result.exit_code == 2 and "stats.speedup: missing" in result.stderr


def test_a_recording_of_other_code_checks_nothing(kt, tmp_path):
    art = nvidia_artifact(tmp_path)
    rec = tmp_path / "rec.json"
    rec.write_text(json.dumps({"kt_check_samples": 1, "artifacts": {"f" * 64: {"entries": {BIG: samples(1, 1)}}}}))
    result = kt("check", art, "--replay", rec)
    assert result.exit_code == 2 and "no device here" in result.stderr
    rec.write_text("{}")
    result = kt("check", art, "--replay", rec)
    assert result.exit_code == 2 and "not a kt check recording" in result.stderr


@pytest.mark.gpu
def test_check_measures_on_a_gpu_and_replays_the_same_verdict(kt, tmp_path):
    from pathlib import Path

    recipe = Path(__file__).resolve().parent.parent / "recipes" / "softmax.toml"
    tuned = kt("tune", recipe, "--trials", "3", "--out", tmp_path)
    assert tuned.exit_code == 0, tuned.output
    art, rec = tmp_path / "softmax.kt", tmp_path / "rec.json"
    live = kt("check", art, "--record", rec, "--threshold", "25%")
    assert live.exit_code in (0, 1), live.output
    assert kt("check", art, "--replay", rec, "--threshold", "25%").exit_code == live.exit_code


def test_a_winner_whose_pairing_with_its_reference_failed_says_so(monkeypatch):
    # kt tune pairs each measured winner with its reference as kt check will; a pairing that failed was
    # passed over in silence (check then falls back to the tuning's own ratio): now the artifact keeps
    # why, and the results table flags the time
    import types

    from kt_cli import tune
    from kt_cli.evaluate.failure import WorkerFailure
    from kt_cli.reports import check
    from kt_cli.reports.format import timing_flags
    from kt_cli.types import TrialResult

    def failing(*args, **kwargs):
        raise WorkerFailure("crash", "CUDA error: an illegal memory access was encountered\nmore")

    monkeypatch.setattr(check, "time_interleaved", failing)
    best = TrialResult("ok", {"BLOCK": 256}, "nvidia:sm_90", {"N": 4096}, "measured", value=1e-5,
                       stats={"median": 1e-5, "speedup": 1.2, "method": "events"})
    results = [{"mode": "measured", "best": best, "target": "nvidia:sm_90", "device": {"index": 0}}]
    recipe = types.SimpleNamespace(problem=types.SimpleNamespace(dtype="float32", tolerance=None),
                                   search=types.SimpleNamespace(timeout=5))
    evaluator = types.SimpleNamespace(device_pool=lambda vendor: None, device_judge=lambda spec: None)
    tune.pair_with_reference(results, None, recipe, evaluator)
    stats = results[0]["best"].stats
    assert "check_speedup" not in stats and stats["speedup"] == 1.2  # check falls back to it
    assert stats["check_pairing_failed"] == "crash: CUDA error: an illegal memory access was encountered"
    assert "not paired with its reference" in timing_flags(stats)
