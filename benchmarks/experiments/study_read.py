"""Experiment (not part of kt): what reading a whole study costs on SQLite, as a study grows to 100
trials whose `result` attribute is a real trial record (3.7 KB, from results/s19/ab_late): Optuna's
get_trials, kt's Ledger.read, and a second storage object (as another process has): its first read,
and its read after the first wrote one more trial.

    python benchmarks/experiments/study_read.py
"""
import os
import sys
import tempfile
import time
from pathlib import Path

import optuna

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from kt_cli.search.ledger import Ledger  # noqa: E402
from kt_cli.search.storage import open_storage  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
RECORD = (ROOT / "benchmarks/results/s19/ab_late/mm_new_1.trials.jsonl").read_text().splitlines()[0]


def per_call_ms(fn, n: int = 5) -> float:
    started = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - started) / n * 1e3


with tempfile.TemporaryDirectory() as tmp:
    url = f"sqlite:///{os.path.join(tmp, 'study.db')}"
    study = optuna.create_study(storage=open_storage(url), study_name="read")
    for i in range(100):
        trial = study.ask({"a": optuna.distributions.IntDistribution(0, 1000)})
        trial.set_user_attr("result", RECORD)
        study.tell(trial, 1.0)
        if i in (10, 50, 99):
            print(f"{i + 1} trials: get_trials {per_call_ms(lambda: study.get_trials(deepcopy=False)):.1f} ms, "
                  f"Ledger.read {per_call_ms(lambda: Ledger.read(study)):.1f} ms ({len(RECORD)} B a result)")
    other = optuna.load_study(study_name="read", storage=open_storage(url))
    print(f"a second storage's first read: {per_call_ms(lambda: other.get_trials(deepcopy=False), 1):.1f} ms")
    trial = study.ask()
    trial.set_user_attr("result", RECORD)
    study.tell(trial, 1.0)
    print(f"its read after a trial was written: {per_call_ms(lambda: other.get_trials(deepcopy=False), 1):.1f} ms")
