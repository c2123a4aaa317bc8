"""`kt tune` end to end in static mode: the artifact, resuming, surviving kill -9, `kt show`."""

import json
import signal
import subprocess
import time

import pytest

from tests.helpers import KT_COMMAND, ROOT, dsl_recipe, kt, kt_process, process_env


def test_softmax_for_two_vendors_writes_an_estimated_artifact(tmp_path):
    out = tmp_path / "art"
    result = kt("tune", ROOT / "recipes" / "softmax.toml", "--target", "nvidia:sm_90", "--target", "amd:gfx942",
                "--trials", "2", "--out", out)
    assert result.exit_code == 0, result.stderr
    art = out / "softmax.kt"
    assert sorted(p.name for p in art.iterdir()) == ["manifest.json", "softmax.py", "trials.jsonl"]
    manifest = json.loads((art / "manifest.json").read_text())
    assert manifest["schema"] == 1 and manifest["kernel"]["generator"] == "templates"
    assert {r["target"] for r in manifest["results"]} == {"nvidia:sm_90", "amd:gfx942"}
    for r in manifest["results"]:
        assert r["mode"] == "estimated" and r["seconds"] > 0 and r["params"]
        assert r["verification"]["worst_excess"] <= 1
        assert r["resources"]["registers"] > 0
        vendor_knobs = {"waves_per_eu"} & set(r["params"])
        assert bool(vendor_knobs) == r["target"].startswith("amd")  # AMD knobs never reach NVIDIA
    assert {"kt", "torch", "triton"} <= set(manifest["provenance"])
    assert "(est)" in result.stdout and "estimated" in result.stdout
    shown = kt("show", art)
    assert shown.exit_code == 0 and "~" in shown.stdout and "(est)" in shown.stdout and "measured" not in shown.stdout


def _trial_count(art) -> int:
    return len((art / "trials.jsonl").read_text().splitlines())


def test_running_again_adds_no_trial_once_the_budget_is_spent(write, tmp_path):
    recipe = dsl_recipe(write, trials=3)
    assert kt("tune", recipe, "--out", tmp_path / "art").exit_code == 0
    art = tmp_path / "art" / "recipe.kt"
    first = (art / "trials.jsonl").read_text()
    again = kt("tune", recipe, "--out", tmp_path / "art")
    assert again.exit_code == 0 and "no new trials" in again.stdout
    assert (art / "trials.jsonl").read_text() == first
    more = kt("tune", recipe, "--out", tmp_path / "art", "--trials", "5")
    evaluated = [json.loads(l) for l in (art / "trials.jsonl").read_text().splitlines()]
    assert more.exit_code == 0 and len({json.dumps(t["params"], sort_keys=True) for t in evaluated}) >= 5


def test_kill_9_mid_study_loses_no_finished_trial(write, tmp_path):
    slow = (ROOT / "recipes" / "examples" / "scaled_add.py").read_text().replace(
        "def launch(k, inputs, params):", "def launch(k, inputs, params):\n    for _ in range(30_000_000):  # ~1 s of host work (a timer would be rejected)\n        pass")
    recipe = dsl_recipe(write, kernel_text=slow, trials=6, space="BLOCK = [128, 256, 512, 1024, 2048, 4096]",
                        extra='sampler = "grid"')
    db = tmp_path / "art" / "recipe.study.db"
    proc = subprocess.Popen([*KT_COMMAND, "tune", str(recipe), "--out", str(tmp_path / "art")],
                            env=process_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while time.time() < deadline and _finished(db) < 2:
        time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _finished(db)
    assert 2 <= before < 6
    result = kt_process("tune", recipe, "--out", tmp_path / "art")
    assert result.returncode == 0, result.stderr
    art = tmp_path / "art" / "recipe.kt"
    trials = [json.loads(l) for l in (art / "trials.jsonl").read_text().splitlines()]
    blocks = sorted(t["params"]["BLOCK"] for t in trials if t["failure_kind"] == "ok")
    assert blocks == [128, 256, 512, 1024, 2048, 4096]  # every point done, none lost, none done twice


def _finished(db) -> int:
    import sqlite3

    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as con:
            return con.execute("select count(*) from trials where state = 'COMPLETE'").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_show_refuses_a_tampered_artifact(write, tmp_path):
    assert kt("tune", dsl_recipe(write, trials=1), "--out", tmp_path / "art").exit_code == 0
    art = tmp_path / "art" / "recipe.kt"
    (art / "kernel.py").write_text((art / "kernel.py").read_text() + "\n# edited\n")
    result = kt("show", art)
    assert result.exit_code == 2 and "sha256 does not match" in result.stderr


@pytest.mark.parametrize("sampler", ["random", "grid"])
def test_other_samplers_run(write, tmp_path, sampler):
    result = kt("tune", dsl_recipe(write, trials=2, extra=f'sampler = "{sampler}"'), "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
