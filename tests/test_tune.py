"""`kt tune` end to end in static mode: the artifact, resuming, `kt show` (kill -9 at every moment of a
run: tests/test_kill_resume.py and tests/test_soak.py)."""

import json
import re
import subprocess
import sys
import types

import pytest

from tests.helpers import ROOT, dsl_recipe, kt, process_env


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
    for printed in (result.stdout, shown.stdout):  # every estimated figure as README says: `~… (est)`, % peak too
        marks = re.findall(r"(\S+(?: us| ms)?) \(est\)", printed)
        assert any(m.endswith("%") for m in marks) and all(m.startswith("~") for m in marks), marks


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


def test_a_constrained_space_starts_on_valid_points_not_refused_ones(write, tmp_path):
    """TPE's random start-up draws are made among the points the constraints allow: a space whose
    constraints refuse 6 of every 7 points records no refused point in a 3-trial study (drawn over the
    whole space, most start-up draws were refused, each an Optuna trial of its own)."""
    space = "BLOCK = [64, 128, 256, 512, 1024, 2048, 4096]\nnum_warps = [1, 2, 4, 8]"
    recipe = dsl_recipe(write, space=space, trials=3, extra='constraints = ["BLOCK == 1024"]')
    result = kt("tune", recipe, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    trials = [json.loads(line) for line in (tmp_path / "out" / "recipe.kt" / "trials.jsonl").read_text().splitlines()]
    assert [t["params"]["BLOCK"] for t in trials] == [1024] * 3, [t["params"] for t in trials]
    assert len({t["params"]["num_warps"] for t in trials}) == 3  # three distinct points


def test_the_search_proposes_only_valid_points_once_it_models(write, tmp_path):
    """Past the start-up draws, TPE's proposals are made valid points not yet proposed: a space whose
    constraints allow 10 of its 28 points is searched to all 10 with no refused point and no repeat
    (Optuna's own proposals broke the constraints in 162 of 258 trials of a matmul run)."""
    space = "BLOCK = [64, 128, 256, 512, 1024, 2048, 4096]\nnum_warps = [1, 2, 4, 8]"
    recipe = dsl_recipe(write, space=space, trials=12,
                        extra='constraints = ["BLOCK * num_warps >= 2048", "BLOCK <= 2048"]')
    result = kt("tune", recipe, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    trials = [json.loads(line) for line in (tmp_path / "out" / "recipe.kt" / "trials.jsonl").read_text().splitlines()]
    points = [(t["params"]["BLOCK"], t["params"]["num_warps"]) for t in trials]
    assert [t["failure_kind"] for t in trials if t["failure_kind"] != "ok"] == [], points
    assert sorted(points) == sorted({(b, w) for b in (64, 128, 256, 512, 1024, 2048)
                                   for w in (1, 2, 4, 8) if b * w >= 2048})


def test_a_recipes_problems_are_searched_side_by_side(write, tmp_path):
    """The studies of a recipe's problems run at once, sharing the compile pool and the device: the
    second problem's first candidate starts before the first problem's last one ends (one after the
    other, each study drained the pipeline before the next filled it)."""
    import optuna

    recipe = dsl_recipe(write, shapes="[{N = 4096}, {N = 2048}]", trials=3)
    result = kt("tune", recipe, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    storage = f"sqlite:///{tmp_path / 'out' / 'recipe.study.db'}"
    spans = []
    for summary in optuna.get_all_study_summaries(storage, include_best_trial=False):
        trials = optuna.load_study(study_name=summary.study_name, storage=storage).get_trials(deepcopy=False)
        done = [t for t in trials if t.datetime_complete is not None]
        spans.append((min(t.datetime_start for t in done), max(t.datetime_complete for t in done)))
    assert len(spans) == 2
    (first_start, first_end), (second_start, second_end) = sorted(spans)
    assert second_start < first_end, spans


def test_a_run_refused_while_its_module_is_inspected_stops_the_workers_once_the_inspection_ends(monkeypatch):
    """tune() inspects the module while the devices are detected; a refusal then (no target, a space
    no point of which fits) closes the preparation. Stopping the workers in the middle of the
    inspection's request closed its pipe from two threads (an EBADF instead of the refusal's line):
    the workers stop when the inspection ends, once."""
    import threading

    from kt_cli.search import studies

    started, release, events = threading.Event(), threading.Event(), []

    class Evaluator:
        def __init__(self, *args, **kwargs):
            pass

        def inspect_module(self, shapes):
            started.set()
            release.wait(5)
            events.append("inspected")
            return {}

        def close(self):
            events.append("closed")

    monkeypatch.setattr(studies, "Evaluator", Evaluator)
    recipe = types.SimpleNamespace(problem=types.SimpleNamespace(verify_shapes=(), shapes=({"N": 1},)),
                                   search=types.SimpleNamespace(timeout=1.0))
    prepared = studies.Preparation(recipe, source=None)
    assert started.wait(5)
    prepared.close()
    assert events == []  # not while the inspection's request is in flight
    release.set()
    prepared._inspection.result()
    assert events == ["inspected", "closed"]
    prepared.close()  # after it: at once
    assert events == ["inspected", "closed", "closed"]


def test_a_study_is_finished_as_soon_as_it_ends_while_the_others_still_run():
    """The winner's pairing with its reference (kt check's protocol) runs as its study ends, in the
    tail where the device would otherwise wait for the other studies' last compiles."""
    import time

    from kt_cli.search.studies import _run_at_once

    events = []

    class Run:
        def __init__(self, name, seconds):
            self.name, self.seconds = name, seconds

        def run(self, valid_points, in_flight):
            time.sleep(self.seconds)
            events.append(("ended", self.name))
            return self.name

    done = _run_at_once([Run("slow", 0.5), Run("quick", 0.01)], [None, None], 2,
                        lambda index, study: events.append(("finished", study)))
    assert done == ["slow", "quick"]
    assert events.index(("finished", "quick")) < events.index(("ended", "slow"))


DETECTS_IN_A_WORKER = """
import sys
from kt_cli.cli import cli
try:
    cli(sys.argv[1:], standalone_mode=False)
finally:
    print("torch imported by kt's process:", "torch" in sys.modules)
"""


def test_kt_tune_never_imports_torch_in_its_own_process(write, tmp_path):
    """The devices are detected in a worker forked from kt's fork server (kt_cli/evaluate/detection.py):
    torch's import (3.7 s on the H100 hosts) then runs in the server beside kt's own start, not before
    it, and kt's process imports Optuna and opens the storage meanwhile."""
    recipe = dsl_recipe(write, trials=2)
    done = subprocess.run([sys.executable, "-c", DETECTS_IN_A_WORKER, "tune", str(recipe), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, env=process_env(), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "wrote " in done.stdout and "torch imported by kt's process: False" in done.stdout, done.stdout[-2000:]
