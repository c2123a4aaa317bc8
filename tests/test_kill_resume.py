"""kill -9 of `kt tune` at any moment, then the same command again: the rerun finishes (no hang) with
the budget spent, every trial finished before the kill kept as it was, no point evaluated twice, an
artifact that loads and names the best trial, and nothing left behind (temporary folders, scratch
directories). Each scenario is a list of kill points (tests/kill_points.py) run one after the other,
then a clean run; scenarios run in parallel, each on a study of its own."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import KT_COMMAND, SCALED_ADD, dsl_recipe_text, process_env, wait_until_gone
from tests.kill_points import KILLABLE_KT

TRIALS = 3
RUN_TIMEOUT = 300  # a rerun that takes longer hangs
PARALLEL = 2
RECIPE = dsl_recipe_text(space="BLOCK = [128, 256, 512, 1024]\nnum_warps = [2, 4]", trials=TRIALS,
                         extra="seed = 0") + '\n[output]\nname = "{name}"\n'
POSTGRES_URL = os.environ.get("KT_TEST_POSTGRES_URL")
# Each scenario: the kill points of successive runs (None: a run that is not killed), then a clean run.
SCENARIOS = {
    "study-opened": ["study-opened"],
    "in-ask": ["in-ask"],
    "in-sampler": ["in-sampler:2"],
    "suggesting": ["suggesting:2"],
    "claimed": ["claimed"],
    "compiling, then settling the dead trial": ["compiling:2", "settling-dead"],
    "verifying": ["verifying"],
    "result-recorded": ["result-recorded"],
    "told, then replacing the artifact": ["told:2", None, "artifact-replacing"],
    "artifact-writing": ["artifact-writing"],
}
# The same on a PostgreSQL study (shared storage): the moments where the study's own records matter.
POSTGRES_SCENARIOS = {name: SCENARIOS[name] for name in ("in-ask", "verifying")}


def _name(case) -> str:
    return (case / "name").read_text()


def _storage(case) -> str:
    url = (case / "storage").read_text()
    return url or f"sqlite:///{case / 'out' / 'recipe.study.db'}"


def _run(case, kill_at: str | None):
    env = process_env(PYTHONWARNINGS="ignore", TMPDIR=str(case / "tmp"), OMP_NUM_THREADS="1",
                      **({"KT_TEST_KILL_AT": kill_at} if kill_at else {}))
    command = KILLABLE_KT if kill_at else KT_COMMAND
    started = time.monotonic()
    with open(case / "log.txt", "a") as log:
        log.write(f"\n=== {kill_at or 'clean run'}\n")
        log.flush()
        storage = ["--storage", _storage(case)] if (case / "storage").read_text() else []
        done = subprocess.run([*command, "tune", "recipe.toml", "--out", "out", *storage], cwd=case, env=env,
                              stdout=log, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT)
    return done.returncode, time.monotonic() - started


def _study(case):
    import optuna

    from kt_cli.search.storage import open_storage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = open_storage(_storage(case))
    names = [s.study_name for s in optuna.get_all_study_summaries(url, include_best_trial=False)
             if s.study_name.startswith(_name(case) + "|")]
    return optuna.load_study(study_name=names[0], storage=url) if names else None


def _finished(case) -> dict:
    """number -> (state, value, result) of every trial that had finished evaluating its point."""
    import optuna

    study = _study(case)
    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL)
    trials = study.get_trials(deepcopy=False, states=done) if study else []
    return {t.number: (t.state, t.value, t.user_attrs["result"]) for t in trials if "result" in t.user_attrs}


def _check_final(case) -> None:
    import optuna

    from kt_cli.artifact.store import read
    from kt_cli.search.storage import evaluated

    study = _study(case)
    assert not study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))
    points = [json.dumps(t.params, sort_keys=True) for t in evaluated(study)]
    assert len(points) == TRIALS and len(set(points)) == TRIALS, points  # the budget, each point once
    art = case / "out" / f"{_name(case)}.kt"
    manifest = read(art)  # loads: schema and source hash checked
    trials = [json.loads(line) for line in (art / "trials.jsonl").read_text().splitlines()]
    counted = [json.dumps(t["params"], sort_keys=True) for t in trials if t["failure_kind"] != "invalid"]
    assert sorted(counted) == sorted(points)
    best = min((t for t in trials if t["failure_kind"] == "ok"), key=lambda t: t["value"])
    assert manifest["results"][0]["params"] == best["params"]
    assert not list((case / "out").glob(f".{_name(case)}.kt.*")), "a temporary folder was left behind"
    assert not list((case / "tmp").glob("kt-worker-*")), "a worker's scratch directory was left behind"


def _scenario(root, name: str, kills: list, storage: str = "") -> str:
    """Runs one scenario; returns "" when it held, else what went wrong. `storage`: a shared storage's
    URL (the study then gets a name of its own), else the recipe's own SQLite file."""
    case = root / name
    (case / "tmp").mkdir(parents=True)
    (case / "kernel.py").write_text(SCALED_ADD)
    study = f"kill_{uuid.uuid4().hex[:10]}" if storage else "recipe"
    (case / "name").write_text(study)
    (case / "storage").write_text(storage)
    (case / "recipe.toml").write_text(RECIPE.replace("{name}", study))
    kept = {}
    try:
        for kill_at in kills:
            code, seconds = _run(case, kill_at)
            expected = 0 if kill_at is None else -9
            assert code == expected, f"{kill_at or 'clean run'}: exit {code} after {seconds:.0f} s, not {expected}"
            assert not wait_until_gone(case / "tmp"), f"{kill_at}: processes of the killed kt still run"
            now = _finished(case)
            assert all(now.get(n) == was for n, was in kept.items()), f"{kill_at}: a finished trial changed"
            kept = now
            if kill_at and kill_at.startswith("artifact-"):
                assert list((case / "out").glob(f".{study}.kt.*")), f"{kill_at}: killed before the write began"
        code, seconds = _run(case, None)
        assert code == 0, f"rerun: exit {code} after {seconds:.0f} s"
        now = _finished(case)
        assert all(now.get(n) == was for n, was in kept.items()), "the rerun changed a finished trial"
        _check_final(case)
    except (AssertionError, subprocess.TimeoutExpired) as exc:
        return f"{name}: {exc}\n{(case / 'log.txt').read_text()[-3000:]}"
    return ""


def test_every_kill_point_resumes_with_nothing_lost_or_repeated(tmp_path):
    with ThreadPoolExecutor(PARALLEL) as pool:
        problems = [p for p in pool.map(lambda n: _scenario(tmp_path, n, SCENARIOS[n]), SCENARIOS) if p]
    assert not problems, "\n\n".join(problems)


@pytest.mark.skipif(not POSTGRES_URL, reason="KT_TEST_POSTGRES_URL is unset: no PostgreSQL server (.ci/run starts one)")
def test_kill_points_resume_on_a_postgresql_study(tmp_path):
    with ThreadPoolExecutor(PARALLEL) as pool:
        problems = [p for p in pool.map(lambda n: _scenario(tmp_path, n, POSTGRES_SCENARIOS[n], POSTGRES_URL),
                                        POSTGRES_SCENARIOS) if p]
    assert not problems, "\n\n".join(problems)
