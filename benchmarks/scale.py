"""Trials per minute of `kt tune --workers N` against `--workers 1`, on a host with N GPUs.

    python benchmarks/scale.py                       # recipes/softmax.toml, 1 and 2 workers, 40 trials
    python benchmarks/scale.py --workers 1,2,4 --trials 80 --recipe recipes/matmul.toml

Each run tunes a fresh study (its own SQLite file in a temporary directory, or with --storage journal a
journal file) and the rate is read from the study itself: evaluated trials divided by the time from the
first trial's start to the last one's end over all the recipe's studies (they run side by side), so the
workers' start-up (importing torch and triton) is not counted; the wall time with start-up is printed
beside it. Each run compiles into a Triton cache of its own, so a later run does not find an earlier
one's binaries; with --warm-cache DIR every run compiles into DIR instead, after one untimed run of the
recipe has filled it (Triton's compiles are then cache hits). The goal: 2 workers on 2 GPUs reach at
least 1.8x the trials per minute of one. Beside the rate: the trials that evaluated nothing (a point
evaluated before, answered as a duplicate; a point or the budget's last units taken by another trial,
skipped).
With --json FILE, each run's row is appended to FILE as it finishes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]


def run_once(recipe: Path, workers: int, trials: int, target: str | None, cache: Path | None = None,
             kind: str = "sqlite") -> dict:
    import optuna

    from kt_cli.search.storage import evaluated, idle, open_storage

    with tempfile.TemporaryDirectory(prefix="kt-scale-bench-") as tmp:
        storage = f"sqlite:///{tmp}/study.db" if kind == "sqlite" else f"{tmp}/study.log"
        cmd = [sys.executable, "-c", "from kt_cli.cli import main; main()", "tune", str(recipe),
               "--trials", str(trials), "--workers", str(workers), "--storage", storage, "--out", tmp]
        if target:
            cmd += ["--target", target]
        paths = [str(ROOT), str(ROOT / "plugins")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "TRITON_CACHE_DIR": str(cache or f"{tmp}/triton-cache")}
        started, started_at = time.perf_counter(), time.time()
        done, printed, exited, closed = _run_timed(cmd, env)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"kt tune --workers {workers} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        store = open_storage(storage)
        ran = []  # (study name, trial): the studies run side by side, the rate is over the span of all their trials
        nothing = {"duplicates": 0, "skipped": 0}  # trials that evaluated nothing (storage.idle)
        for summary in optuna.get_all_study_summaries(store, include_best_trial=False):
            if not summary.study_name.startswith("kt-artifact|"):
                study = optuna.load_study(study_name=summary.study_name, storage=store)
                ran += [(summary.study_name, t) for t in evaluated(study)]
                nothing = {k: v + n for (k, v), n in zip(nothing.items(), idle(study).values())}
        busy = 0.0
        if ran:
            busy = (max(t.datetime_complete for _, t in ran) - min(t.datetime_start for _, t in ran)).total_seconds()
        trials_done = len(ran)
        pairings = unpaired(Path(tmp))
        return {"workers": workers, "storage": kind, "trials": trials_done, "wall_s": wall, "unpaired": pairings,
                **nothing,
                "per_min": 60.0 * trials_done / busy if busy else float("nan"),
                **middle_and_tail(sorted(t.datetime_complete.timestamp() for _, t in ran)),
                "timeline": timeline(ran, started_at), "summary": done.stdout.strip().splitlines()[-3:],
                "started_at": started_at, "results_printed_s": printed - started_at, "exited_s": exited - started_at,
                "stdout_closed_s": closed - started_at}


def unpaired(out: Path) -> dict:
    """The winners of the run's artifact whose pairing with their reference failed, and why
    (stats.check_pairing_failed): read before the run's folder goes."""
    found = {}
    for manifest in out.glob("*.kt/manifest.json"):
        for entry in json.loads(manifest.read_text())["results"]:
            why = (entry.get("stats") or {}).get("check_pairing_failed")
            if why:
                found[entry["shape_key"]] = why
    return found


def tenths(ends: list) -> tuple:
    """When the first tenth of a run's trials had ended, and when nine tenths had (their end times, sorted)."""
    return ends[len(ends) // 10], ends[-(len(ends) // 10) - 1]


def middle_and_tail(ends: list) -> dict:
    """Where a run's rate goes, from its trials' end times (sorted): the rate between the ends of the
    first and the last tenth of its trials (the run without its start, whose first compiles find no
    binary and no best to race against, and without its end), and the seconds from the end of nine
    tenths of its trials to the last (the last trials in flight: a slow compile there holds the run)."""
    if len(ends) < 20:
        return {"middle_per_min": float("nan"), "tail_s": float("nan")}
    first, last = tenths(ends)
    middle = len(ends) - 2 * (len(ends) // 10) - 1
    return {"middle_per_min": 60.0 * middle / (last - first) if last > first else float("nan"),
            "tail_s": ends[-1] - last}


def _run_timed(cmd: list, env: dict):
    """Run `cmd`; returns (the completed process, when its first line of results reached stdout, when
    the kt process exited, when its stdout closed). The last waits for every process that holds the
    pipe, kt's descendants included: a run whose wall is far past its results (83 s against 40, once in
    a session) says here whether kt itself or a process it left behind took the time."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err, first = [], [], []

    def read_out() -> None:
        for line in proc.stdout:
            if not first:
                first.append(time.time())
            out.append(line)

    readers = [threading.Thread(target=read_out, daemon=True),
               threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)]
    for reader in readers:
        reader.start()
    proc.wait()
    exited = time.time()
    for reader in readers:
        reader.join()
    closed = time.time()
    done = subprocess.CompletedProcess(cmd, proc.returncode, "".join(out), "".join(err))
    return done, (first[0] if first else exited), exited, closed


def timeline(trials: list, started_at: float) -> list:
    """Each evaluated trial's study, process, start and end (seconds since the command started) and
    phases: where the time of a run goes, worker by worker. `trials`: (study name, trial) pairs."""
    rows = []
    for study, t in trials:
        result = json.loads(t.user_attrs.get("result", "{}"))
        rows.append({"study": study, "number": t.number,
                     "pid": t.user_attrs.get("pid"), "start": t.datetime_start.timestamp() - started_at,
                     "end": t.datetime_complete.timestamp() - started_at,
                     "kind": result.get("failure_kind"), "phases": result.get("phase_seconds", {}),
                     "evaluator_s": result.get("seconds"),  # the evaluator's wall: the rest is the search's
                     "timing": timing_stats(result.get("stats") or {})})
    return sorted(rows, key=lambda r: r["start"])


def timing_stats(stats: dict) -> dict:
    """What says whether a timed candidate's samples were many, spread or throttled: its calls, the
    median and interval of its own samples, the method, whether the timer reached its target interval
    and whether the device reported throttling (empty where it was not timed)."""
    keys = ("calls", "median", "ci_low", "ci_high", "method", "precise", "raced_out", "throttled")
    return {k: stats[k] for k in keys if k in stats}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", type=Path, default=ROOT / "recipes" / "softmax.toml")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts (the first is the base)")
    parser.add_argument("--trials", type=int, default=40, help="trials per target and problem")
    parser.add_argument("--target", help="tune only this target (default: the GPUs present)")
    parser.add_argument("--json", type=Path, help="append each run's row to this file (JSON lines) as it finishes")
    parser.add_argument("--storage", choices=("sqlite", "journal"), default="sqlite",
                        help="each run's study in a SQLite file (kt's default) or a journal file "
                             "(--storage PATH.log)")
    parser.add_argument("--warm-cache", type=Path, help="one Triton cache for every run, filled by an untimed run first")
    args = parser.parse_args()

    from tabulate import tabulate

    from kt_cli.plugins import devices

    present = devices()
    counts = [int(n) for n in args.workers.split(",")]
    if max(counts) > max(1, len(present)):
        raise SystemExit(f"--workers {max(counts)} needs {max(counts)} GPUs; this host has {len(present)}")
    rows = []
    if args.warm_cache:
        run_once(args.recipe, 1, args.trials, args.target, args.warm_cache, args.storage)
    for n in counts:
        rows.append(run_once(args.recipe, n, args.trials, args.target, args.warm_cache, args.storage))
        print(f"--workers {n}: { {k: v for k, v in rows[-1].items() if k != 'timeline'} }", flush=True)
        if args.json:
            with args.json.open("a") as out:
                out.write(json.dumps({**rows[-1], "recipe": args.recipe.name, "trials_per_study": args.trials,
                                      "warm_cache": bool(args.warm_cache),
                                      "devices": [d.name for d in present]}) + "\n")
    base = rows[0]["per_min"]
    print(f"{args.recipe.name}, {args.trials} trials per study, on {', '.join(sorted({d.name for d in present})) or 'CPU (static mode)'}")
    print(tabulate([[r["workers"], r["trials"], f"{r['wall_s']:.0f}", f"{r['per_min']:.1f}",
                     f"{r['per_min'] / base:.2f}x", f"{r['middle_per_min']:.1f}", f"{r['tail_s']:.1f}",
                     r["duplicates"], r["skipped"]] for r in rows],
                   headers=["workers", "trials", "wall s", "trials/min", "vs first", "middle trials/min",
                            "last tenth s", "duplicates", "skipped"]))
    for r in rows:
        for problem, why in r["unpaired"].items():
            print(f"workers {r['workers']}: {problem} not paired with its reference: {why}")


if __name__ == "__main__":
    main()
