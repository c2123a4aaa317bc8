"""Soak: three `kt tune` processes share one SQLite study; for a while one of them is killed (SIGKILL)
at a random moment every few seconds and started again; then they are left to finish. The study must
end with exactly the budget of distinct points and nothing running, every process must exit 0, and
every artifact written must load and name the study's best trial. KT_SOAK_SECONDS lengthens the
killing phase (default 30 s, to keep CI short)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time

from tests.helpers import KT_COMMAND, SCALED_ADD, process_env, wait_until_gone

SOAK_S = float(os.environ.get("KT_SOAK_SECONDS", "30"))
FINISH_TIMEOUT = 400
TRIALS = 6
RECIPE = f"""
[kernel]
generator = "dsl"
file = "kernel.py"

[problem]
dtype = "float32"
shapes = [{{N = 4096}}]

[search]
trials = {TRIALS}
timeout = 60
seed = 0

[search.space]
BLOCK = [64, 128, 256, 512, 1024, 2048]
num_warps = [2, 4]

[targets]
names = ["nvidia:sm_90"]
"""


class Slot:
    """One of the three places a `kt tune` process runs in, each with its own --out."""

    def __init__(self, root, index: int, storage: str):
        self.root, self.out, self.storage = root, root / f"out{index}", storage
        self.log = root / f"log{index}.txt"
        self.proc = None

    def start(self) -> None:
        env = process_env(PYTHONWARNINGS="ignore", TMPDIR=str(self.root / "tmp"), OMP_NUM_THREADS="1")
        with open(self.log, "a") as log:
            log.write("\n=== start\n")
            log.flush()
            self.proc = subprocess.Popen([*KT_COMMAND, "tune", "recipe.toml", "--storage", self.storage,
                                          "--out", str(self.out)], cwd=self.root, env=env, stdout=log,
                                         stderr=subprocess.STDOUT)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        with open(self.log, "a") as log:
            log.write("\n=== killed\n")


def _study(storage: str):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    names = [s.study_name for s in optuna.get_all_study_summaries(storage, include_best_trial=False)
             if not s.study_name.startswith("kt-artifact|")]
    return optuna.load_study(study_name=names[0], storage=storage)


def test_three_processes_killed_at_random_keep_one_study_whole(tmp_path):
    import optuna

    from kt_cli.artifact.store import read
    from kt_cli.search.storage import evaluated

    seed = int(os.environ.get("KT_SOAK_SEED", time.time_ns() % 100_000))
    rng = random.Random(seed)
    (tmp_path / "tmp").mkdir()
    (tmp_path / "kernel.py").write_text(SCALED_ADD)
    (tmp_path / "recipe.toml").write_text(RECIPE)
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    slots = [Slot(tmp_path, i, storage) for i in range(3)]
    kills = []
    try:
        for slot in slots:
            slot.start()
        deadline = time.monotonic() + SOAK_S
        while time.monotonic() < deadline:
            time.sleep(rng.uniform(1.0, 8.0))
            victim = rng.choice(slots)
            if victim.proc.poll() is None:
                kills.append(round(SOAK_S - (deadline - time.monotonic()), 1))
                victim.kill()
            victim.start()
        codes = [slot.proc.wait(timeout=FINISH_TIMEOUT) for slot in slots]
    finally:
        for slot in slots:
            if slot.proc.poll() is None:
                slot.proc.kill()
    logs = "\n".join(f"--- process {i}\n{s.log.read_text()[-1500:]}" for i, s in enumerate(slots))
    where = f"seed {seed}, killed at {kills} s\n{logs}"
    assert codes == [0, 0, 0], where

    study = _study(storage)
    assert not study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)), where
    done = evaluated(study)
    points = [json.dumps(t.params, sort_keys=True) for t in done]
    assert len(points) == TRIALS and len(set(points)) == TRIALS, where
    results = [json.loads(t.user_attrs["result"]) for t in done]
    best = min((r for r in results if r["failure_kind"] == "ok"), key=lambda r: r["value"])
    artifacts = [slot.out / "recipe.kt" for slot in slots if (slot.out / "recipe.kt").exists()]
    assert artifacts, where
    for artifact in artifacts:
        assert read(artifact)["results"][0]["params"] == best["params"], where
    assert not [p for s in slots for p in s.out.glob(".recipe.kt.*")], where
    assert not list((tmp_path / "tmp").glob("kt-worker-*")), where
    assert not wait_until_gone(tmp_path / "tmp"), where  # no worker of a killed process left running
