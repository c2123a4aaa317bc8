"""A static artifact's shortlist, `kt finalize` and first-call finalization in `kt_cli.load`, on the fake
CPU device (tests/fake_vendor.py). The static artifact is tuned once, for target fake:cpu with no fake
device present, by kt's own static path; each test works on a copy of it."""

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import warnings

import pytest

from tests.helpers import SCALED_ADD, dsl_recipe_text, kt, kt_process, one_error_line, process_env

# BLOCK=128 launches nothing: the fastest config there is, and wrong (its outputs stay poisoned)
SKIPS_AT_128 = SCALED_ADD.replace("    block = params[\"BLOCK\"]\n",
                                  "    block = params[\"BLOCK\"]\n    if block == 128:\n        return\n")
WRONG = {"BLOCK": 128, "num_warps": 4}
SPACE = "BLOCK = [512, 1024]\nnum_warps = [4]"


@pytest.fixture(scope="module")
def static_artifact(tmp_path_factory):
    """A static artifact for fake:cpu (shortlist 2 of a 2-point space), tuned with no fake device present."""
    root = tmp_path_factory.mktemp("static")
    (root / "kernel.py").write_text(SKIPS_AT_128)
    recipe = root / "recipe.toml"
    recipe.write_text(dsl_recipe_text(SPACE, "shortlist = 2", trials=2).replace("nvidia:sm_90", "fake:cpu"))
    result = kt_process("tune", recipe, "--out", root / "out", cwd=root, timeout=600,
                        env={"KT_PLUGINS": "tests.fake_vendor", "KT_FAKE_DEVICES": "0"})
    assert result.returncode == 0, result.stderr
    return root / "out" / "recipe.kt"


def _copy(static_artifact, tmp_path, shortlist=None):
    """A copy of the static artifact; `shortlist` (a list of (params, estimate)) replaces its shortlist."""
    path = tmp_path / "recipe.kt"
    shutil.copytree(static_artifact, path)
    if shortlist is not None:
        manifest = _manifest(path)
        manifest["results"][0]["shortlist"] = [{"params": p, "seconds": s} for p, s in shortlist]
        (path / "manifest.json").write_text(json.dumps(manifest))
    return path


def _manifest(path) -> dict:
    return json.loads((path / "manifest.json").read_text())


def test_a_static_artifact_keeps_the_best_distinct_configs_by_estimate(static_artifact):
    entry = _manifest(static_artifact)["results"][0]
    trials = [json.loads(line) for line in (static_artifact / "trials.jsonl").read_text().splitlines()]
    ok = sorted((t["value"], json.dumps(t["params"], sort_keys=True)) for t in trials if t["failure_kind"] == "ok")
    assert entry["mode"] == "estimated" and len(ok) == 2
    assert [(p["seconds"], json.dumps(p["params"], sort_keys=True)) for p in entry["shortlist"]] == ok
    assert entry["shortlist"][0]["params"] == entry["params"]


def test_a_bad_shortlist_in_the_recipe_is_one_line_naming_the_key(write):
    write("kernel.py", SCALED_ADD)
    result = kt("tune", write("recipe.toml", dsl_recipe_text(extra="shortlist = 0")))
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "recipe.toml: search.shortlist: must be at least 1" in line and "kt finalize" in line


def test_finalize_times_the_shortlist_and_never_picks_a_wrong_config(static_artifact, tmp_path, fake_device):
    estimated = _manifest(static_artifact)["results"][0]
    # the cost model's favourite is a config that computes the wrong answer on the device
    shortlist = [(WRONG, 1e-9)] + [(p["params"], p["seconds"]) for p in estimated["shortlist"]]
    path = _copy(static_artifact, tmp_path, shortlist)
    result = kt("finalize", path)
    assert result.exit_code == 0, result.output
    entry = _manifest(path)["results"][0]
    assert entry["mode"] == "measured" and entry["device"]["name"] == "Fake CPU device"
    tried = {json.dumps(t["params"], sort_keys=True): t for t in entry["shortlist"]}
    assert tried[json.dumps(WRONG, sort_keys=True)]["failure"] == "wrong"
    timed = [t for t in entry["shortlist"] if "measured_seconds" in t]
    assert len(timed) == 2 and entry["params"] != WRONG
    assert entry["seconds"] == min(t["measured_seconds"] for t in timed)
    assert entry["params"] == min(timed, key=lambda t: t["measured_seconds"])["params"]
    assert entry["stats"]["speedup"] > 0 and entry["finalized"]["estimated_params"] == estimated["params"]
    assert "<- winner" in result.output and "wrong" in result.output
    assert "measured" in kt("show", path).output  # the rewritten artifact reads back
    again = kt("finalize", path)
    assert again.exit_code == 0 and "nothing to finalize" in again.output


def test_finalize_ranks_the_shortlist_by_the_ratio_to_the_baseline_timed_beside_each(tmp_path, fake_device,
                                                                                    monkeypatch):
    # as measured tuning does (tests/test_measured_mode.py): a config four times as fast, timed while the
    # device's clock runs forty times slower, is still the one finalize keeps
    from kt_cli.artifact import finalize
    from kt_cli.evaluate import race
    from tests.kernels_measured import REPEATS_BESIDE_ITSELF

    (tmp_path / "kernel.py").write_text(REPEATS_BESIDE_ITSELF)
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(dsl_recipe_text("BLOCK = [1024]\nREPEAT = [1, 4]", "shortlist = 2", trials=2)
                      .replace("nvidia:sm_90", "fake:cpu"))
    made = kt_process("tune", recipe, "--out", tmp_path / "out", cwd=tmp_path, timeout=600,
                      env={"KT_PLUGINS": "tests.fake_vendor", "KT_FAKE_DEVICES": "0"})
    assert made.returncode == 0, made.stderr
    (tmp_path / "copy").mkdir()
    path = _copy(tmp_path / "out" / "recipe.kt", tmp_path / "copy",
                 [({"BLOCK": 1024, "REPEAT": 4}, 1e-6), ({"BLOCK": 1024, "REPEAT": 1}, 2e-6)])
    clock = tmp_path / "clock"
    monkeypatch.setenv("KT_FAKE_CLOCK_FILE", str(clock))
    monkeypatch.setattr(race, "RATIO_TOO_NOISY", 1.0)  # a shared CPU's first ratio may read wider than a GPU's
    timed = []
    time_config = finalize._time_config

    def clocked(*args, **kwargs):  # the second config timed at a clock forty times slower
        clock.write_text("1" if not timed else "40")
        timed.append(args[3]["params"])
        return time_config(*args, **kwargs)

    monkeypatch.setattr(finalize, "_time_config", clocked)
    result = kt("finalize", path)
    assert result.exit_code == 0, result.output
    entry = _manifest(path)["results"][0]
    own = {t["params"]["REPEAT"]: t for t in entry["shortlist"]}
    assert [p["REPEAT"] for p in timed] == [4, 1] and entry["params"]["REPEAT"] == 1
    assert entry["stats"]["median"] > own[4]["measured_seconds"]  # by its own samples it ran slower
    assert entry["seconds"] == entry["stats"]["ranked"]["seconds"] < own[4]["measured_seconds"]


def test_a_failed_finalize_leaves_the_artifact_unchanged(static_artifact, tmp_path, fake_device):
    path = _copy(static_artifact, tmp_path, [(WRONG, 1e-9)])
    before = (path / "manifest.json").read_bytes()
    result = kt("finalize", path)
    assert result.exit_code == 1 and "no shortlisted config passed verification" in result.output
    assert (path / "manifest.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recipe.kt"]  # no temporary folder left


def test_a_time_past_the_peak_is_wrong_in_finalize_as_in_tuning(static_artifact, tmp_path, fake_device):
    path = _copy(static_artifact, tmp_path)
    manifest = _manifest(path)
    # a module claiming far more work than it does: any real time is then past 100% of the peak
    manifest["results"][0]["stats"]["bytes_per_s"] = 1e30
    (path / "manifest.json").write_text(json.dumps(manifest))
    result = kt("finalize", path)
    assert result.exit_code == 1 and "of the device's peak: a measurement error" in result.output


def test_finalize_holds_a_time_against_the_present_devices_peak_not_the_targets_reference_part(
        static_artifact, tmp_path, fake_device):
    # an artifact estimated against the target's reference part (an sm_90 artifact: an H100's 3.35 TB/s),
    # finalized on a faster device of that target (an H200: 4.8 TB/s). On an H200 (2026-11-28) finalize
    # judged the fastest softmax configs `wrong` at "120% of the device's peak", the H100's, and picked
    # slower ones. Here the reference part is a billion times slower than the device present.
    path = _copy(static_artifact, tmp_path)
    manifest = _manifest(path)
    entry = manifest["results"][0]
    entry["peaks"] = {k: v * 1e-9 for k, v in entry["peaks"].items()}
    entry["stats"]["fraction_of_peak"] = 1e9
    (path / "manifest.json").write_text(json.dumps(manifest))
    result = kt("finalize", path)
    assert result.exit_code == 0, result.output
    finalized = _manifest(path)["results"][0]
    assert finalized["mode"] == "measured" and finalized["params"] != WRONG
    assert finalized["peaks"]["dram_bytes_per_s"] == 1e11  # the device's table, kept with the result
    assert 0 < finalized["stats"]["fraction_of_peak"] < 1


KILLED_AT_RENAME = """
import os, signal, sys, types
import kt_cli.artifact.store as store
from kt_cli.cli import main
renames = []
def replace(a, b):
    renames.append(b)
    if len(renames) == {n}:
        os.kill(os.getpid(), signal.SIGKILL)
    os.replace(a, b)
store.os = types.ModuleType("os")
store.os.__dict__.update(vars(os), replace=replace)
sys.argv = ["kt", "finalize", {path!r}]
main()
"""


def test_a_finalize_killed_while_writing_leaves_the_artifact_as_it_was(static_artifact, tmp_path):
    """Killed between the two renames of the rewrite (the old artifact moved aside, the new one complete
    beside it): what kt does first (remove_dead_writes) puts the old one back, byte for byte."""
    from kt_cli.artifact.store import remove_dead_writes

    path = _copy(static_artifact, tmp_path)
    before = (path / "manifest.json").read_bytes()
    killed = subprocess.run([sys.executable, "-c", KILLED_AT_RENAME.format(n=2, path=str(path))],
                            env=process_env(KT_PLUGINS="tests.fake_vendor"), capture_output=True, timeout=600)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    remove_dead_writes(tmp_path, "recipe")
    assert (path / "manifest.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recipe.kt"]


def test_finalize_without_a_device_of_the_target_is_one_line(static_artifact, tmp_path, fake_device, monkeypatch):
    path = _copy(static_artifact, tmp_path)
    other = kt("finalize", path, "--device", "5")
    assert other.exit_code == 2 and "no device 5 of fake:cpu here (devices present: #0 Fake CPU device (fake:cpu))" \
        in one_error_line(other)
    monkeypatch.setenv("KT_FAKE_DEVICES", "0")
    result = kt("finalize", path)
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "no device of fake:cpu here" in line and "run kt finalize on a GPU of that target" in line


USE = """
import json, torch, kt_cli
{patch}
kernel = kt_cli.load({path!r})
x, y = torch.randn(4096), torch.randn(4096)
inputs = kernel({{"x": x, "y": y, "out": torch.empty(4096)}})
assert torch.allclose(inputs["out"], 0.5 * x + y)
entry = kernel.config({{"N": 4096}})
print(json.dumps({{"mode": entry["mode"], "params": entry["params"]}}))
"""
NO_TIMING = ("import kt_cli.artifact.finalize as f\n"
             "def refuse(*args, **kwargs):\n    raise AssertionError('timed again')\n"
             "f.finalize_entries = f.time_shortlist = refuse")


def _use(path, tmp_path, patch=""):
    env = process_env(KT_PLUGINS="tests.fake_vendor", TRITON_INTERPRET="1", KT_CACHE_DIR=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(USE.format(path=str(path), patch=patch))],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0 and "timed again" not in result.stderr, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def test_the_first_call_finalizes_and_a_later_process_reuses_the_cache(static_artifact, tmp_path):
    path = _copy(static_artifact, tmp_path)
    shortlisted = [p["params"] for p in _manifest(path)["results"][0]["shortlist"]]
    first, _ = _use(path, tmp_path)
    assert first["mode"] == "measured" and first["params"] in shortlisted
    assert len(list((tmp_path / "cache" / "finalized").iterdir())) == 1
    second, stderr = _use(path, tmp_path, NO_TIMING)  # a new process: read from the cache, not timed
    assert second == first and "Warning" not in stderr


def test_without_a_device_or_when_turned_off_load_uses_the_estimate(static_artifact, tmp_path, fake_device,
                                                                    monkeypatch):
    import kt_cli

    path = _copy(static_artifact, tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert kt_cli.load(path, target="fake:cpu", finalize=False).config({"N": 4096})["mode"] == "estimated"
        monkeypatch.setenv("KT_FINALIZE", "0")
        assert kt_cli.load(path, target="fake:cpu").config({"N": 4096})["mode"] == "estimated"
        assert not caught
        monkeypatch.delenv("KT_FINALIZE")
        monkeypatch.setenv("KT_FAKE_DEVICES", "0")
        kernel = kt_cli.load(path, target="fake:cpu")
        assert kernel.config({"N": 4096})["mode"] == "estimated"
        assert kernel.config({"N": 2048})["mode"] == "estimated"
    assert len(caught) == 1 and "no fake:cpu device here" in str(caught[0].message)
