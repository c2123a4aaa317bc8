"""Does the search layer itself scale across processes? kt's studies (Optuna on SQLite, the ledger,
the turn-taking, TPE) driven by N processes, with the compile pool and the device replaced by sleeps:
each candidate waits `--compile-s` (in parallel, as the compile pool does) and then holds its
process's one device for `--device-s`. With nothing else in the way, N processes finish N times as
many trials a minute; what they lose is the search layer's.

    python benchmarks/experiments/search_scaling.py --processes 1,2 --compile-s 1.5 --device-s 0.35 [--recipe R]
        [--in-flight N] [--no-repair] [--host-ms MS]

Environment: KT_EXP_JOURNAL=1 keeps the studies in a journal file instead of SQLite; KT_EXP_SWITCH_S sets
each process's sys.setswitchinterval (Python's default 0.005 s); KT_EXP_CPU=1 prints each process's CPU
seconds at its end.

Prints, per process count: trials evaluated, their span, trials/min, per trial the mean wall and
the search's own phases (search.ask, search.turn), and the trials that evaluated nothing (a point
already evaluated answered as a duplicate, a point or budget unit taken by another trial skipped).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]


def _space(recipe_path: str):
    """The recipe's space and constraints for nvidia:sm_90 and its first problem (the kernel's own
    constraints, known once a worker inspects the module, are left out), and its valid points."""
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.recipe.space import constraint_env
    from kt_cli.search.plan import plan_targets
    from kt_cli.search.studies import plan_spaces

    recipe = load_recipe(Path(recipe_path))
    plan, shape, space, valid = plan_spaces(recipe, plan_targets(recipe, ("nvidia:sm_90",)), {}, [])[0]
    return space, lambda p: constraint_env(p, shape, plan.spec.properties, recipe.problem.dtype_bytes), valid


def _busy(seconds: float) -> None:
    """Python work that holds the GIL as the evaluator's does (its relays, pickles, estimates), for `seconds` of CPU."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        sum(i * i for i in range(200))


def _drive(url: str, recipe: str, studies: int, trials: int, in_flight: int, compile_s: float, device_s: float,
           seed: int, repair: bool, host_s: float = 0.0) -> None:
    import types

    sys.setswitchinterval(float(os.environ.get("KT_EXP_SWITCH_S", "0.005")))
    from kt_cli.search.driver import StudyRun
    from kt_cli.search.fair_slots import FairSlots
    from kt_cli.search.storage import open_storage
    from kt_cli.search.studies import _run_at_once
    from kt_cli.types import TrialResult

    device = threading.Lock()
    space, env, valid = _space(recipe)

    def evaluate(params):
        _busy(host_s / 2)
        time.sleep(compile_s)
        with device:
            time.sleep(device_s)
        _busy(host_s / 2)
        return TrialResult("ok", params, "nvidia:sm_90", {"M": 1}, "measured", value=sum(map(float, params.values())) * 1e-6)

    problem = types.SimpleNamespace(space=space, env=env, evaluate=evaluate, valid=valid if repair else None,
                                    invalid_result=lambda p, why: TrialResult("invalid", p, "nvidia:sm_90", {"M": 1},
                                                                              "measured", message=why))
    store, slots = open_storage(url), FairSlots(in_flight)
    runs = [StudyRun(f"study{i}", store, problem, budget=trials, sampler="tpe", seed=seed + i, slots=slots)
            for i in range(studies)]
    _run_at_once(runs, [None] * studies, in_flight)
    if os.environ.get("KT_EXP_CPU"):
        t = os.times()
        print(f"process {os.getpid()}: CPU {t.user + t.system:.1f} s", flush=True)


def run(processes: int, args) -> dict:
    import optuna

    from kt_cli.search.storage import evaluated, idle, open_storage

    with tempfile.TemporaryDirectory(prefix="kt-search-scaling-") as tmp:
        url = f"{tmp}/study.log" if os.environ.get("KT_EXP_JOURNAL") else f"sqlite:///{tmp}/study.db"
        ctx = multiprocessing.get_context("spawn")
        procs = [ctx.Process(target=_drive, args=(url, args.recipe, args.studies, args.trials, args.in_flight, args.compile_s,
                                                  args.device_s, 1000 * i, not args.no_repair, args.host_ms / 1e3))
                 for i in range(processes)]
        started = time.time()
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
        store = open_storage(url)
        studies = [optuna.load_study(study_name=f"study{i}", storage=store) for i in range(args.studies)]
        trials = [t for study in studies for t in evaluated(study)]
        nothing = [idle(study) for study in studies]
    import json

    span = max(t.datetime_complete.timestamp() for t in trials) - min(t.datetime_start.timestamp() for t in trials)
    phases = [json.loads(t.user_attrs["result"]).get("phase_seconds", {}) for t in trials]
    mean = lambda xs: sum(xs) / max(1, len(xs))  # noqa: E731
    return {"processes": processes, "trials": len(trials), "span_s": span, "per_min": 60 * len(trials) / span,
            "wall_s": time.time() - started,
            "trial_wall_s": mean([(t.datetime_complete - t.datetime_start).total_seconds() for t in trials]),
            "ask_s": mean([p.get("search.ask", 0.0) for p in phases]),
            "turn_s": mean([p.get("search.turn", 0.0) for p in phases]),
            "duplicates": sum(n["duplicates"] for n in nothing), "skipped": sum(n["skipped"] for n in nothing)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", default="1,2")
    parser.add_argument("--recipe", default=str(ROOT / "recipes" / "matmul.toml"), help="whose space is searched")
    parser.add_argument("--studies", type=int, default=3)
    parser.add_argument("--trials", type=int, default=24, help="per study")
    parser.add_argument("--in-flight", type=int, default=9)
    parser.add_argument("--compile-s", type=float, default=1.5)
    parser.add_argument("--device-s", type=float, default=0.35)
    parser.add_argument("--host-ms", type=float, default=0.0,
                        help="CPU a trial's evaluation spends in the kt process (the GPU hosts': 30-45 ms)")
    parser.add_argument("--no-repair", action="store_true", help="TPE's proposals as they come (before 2026-11-26)")
    args = parser.parse_args()
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rows = [run(int(n), args) for n in args.processes.split(",")]
    base = rows[0]["per_min"]
    for row in rows:
        print(f"{row['processes']} processes: {row['trials']} trials, span {row['span_s']:.1f} s, "
              f"{row['per_min']:.0f}/min ({row['per_min'] / base:.2f}x), trial wall {row['trial_wall_s']:.2f} s, "
              f"ask {row['ask_s']:.3f} s, turn {row['turn_s']:.3f} s, wall {row['wall_s']:.1f} s; besides, "
              f"{row['duplicates']} duplicates answered and {row['skipped']} trials skipped", flush=True)


if __name__ == "__main__":
    main()
