"""Where `kt tune`'s wall time goes: the CLI process's threads sampled, and every worker request profiled.

    python benchmarks/experiments/wall_profile.py recipes/softmax.toml [--trials 8] [--json OUT.json]

Runs kt's tune in this process. A sampling thread records every 5 ms what each of the other threads
is doing (its innermost frame in kt_cli, and the innermost frame of all), so waiting shows as the
line that waits (the device lock, a pipe, SQLite, Optuna's sampler). Each worker request runs under
cProfile (KT_PROFILE_DIR, kt_cli/evaluate/requests.dispatch); the report lists, per request kind,
the calls with the most cumulative time. Issue 16's question: why trials take seconds of wall time
for about a second of device work.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pstats
import sys
import tempfile
import threading
import time
from pathlib import Path

SAMPLE_S = 0.005


class StackSampler:
    """Counts, per thread, the innermost kt_cli frame and the innermost frame of every sample."""

    def __init__(self):
        self.kt_frames: collections.Counter = collections.Counter()
        self.leaf_frames: collections.Counter = collections.Counter()
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = threading.get_ident()
        while not self._stop.wait(SAMPLE_S):
            self.samples += 1
            for ident, frame in sys._current_frames().items():
                if ident != me:
                    self._count(frame)

    def _count(self, frame) -> None:
        self.leaf_frames[_where(frame)] += 1
        while frame is not None and "kt_cli" not in frame.f_code.co_filename:
            frame = frame.f_back
        self.kt_frames[_where(frame) if frame is not None else "(outside kt)"] += 1


def _where(frame) -> str:
    code = frame.f_code
    path = code.co_filename
    short = path[path.rfind("kt_cli"):] if "kt_cli" in path else os.path.basename(path)
    return f"{short}:{frame.f_lineno} {code.co_name}"


# What the timeline records: (dotted name of a class's method) -> label.
TIMED = {"kt_cli.search.objective.Objective.__call__": "trial",
         "kt_cli.evaluate.evaluator.Evaluator.compile": "compile",
         "kt_cli.evaluate.isolated.IsolatedVerifier.verify_and_time": "device (lock wait included)",
         "kt_cli.evaluate.isolated.IsolatedVerifier.verify": "device: verify",
         "kt_cli.evaluate.isolated.IsolatedVerifier.time": "device: time",
         "kt_cli.search.objective.Objective._my_turn": "turn",
         "kt_cli.search.driver.StudyRun.run": "study",
         "kt_cli.evaluate.evaluator.Evaluator.inspect_module": "inspect_module",
         "kt_cli.tune.plan_targets": "plan_targets", "kt_cli.tune.check_recipe_space": "check_recipe_space",
         "kt_cli.tune.kernel_source": "kernel_source", "kt_cli.tune.pair_with_reference": "pair_with_reference",
         "kt_cli.search.studies.problem_plans": "problem_plans", "kt_cli.tune.artifact.write": "artifact write"}


class Timeline:
    """Start and end of every call of the TIMED methods, by thread, seconds since the run began."""

    def __init__(self):
        self.began = time.perf_counter()
        self.spans: list[tuple[str, int, float, float]] = []

    def install(self) -> None:
        import importlib

        for dotted, label in TIMED.items():
            owner_name, name = dotted.rsplit(".", 1)
            try:
                owner = importlib.import_module(owner_name)
            except ImportError:  # a class's method, or a name a module imported
                module, attribute = owner_name.rsplit(".", 1)
                owner = getattr(importlib.import_module(module), attribute)
            setattr(owner, name, self._wrap(getattr(owner, name), label))

    def _wrap(self, method, label: str):
        import functools

        @functools.wraps(method)
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.spans.append((label, threading.get_ident(), start - self.began, time.perf_counter() - self.began))
        return timed

    def summary(self, wall: float) -> dict:
        """Per label: calls, total seconds, first start, last end; and the device lock's busy share."""
        out: dict = {}
        for label, _, start, end in self.spans:
            entry = out.setdefault(label, {"calls": 0, "total_s": 0.0, "first_start_s": start, "last_end_s": end})
            entry["calls"] += 1
            entry["total_s"] += end - start
            entry["first_start_s"] = min(entry["first_start_s"], start)
            entry["last_end_s"] = max(entry["last_end_s"], end)
        out["wall_s"] = wall
        return out


def pipe_delays(folder: Path) -> dict:
    """Per request kind, mean seconds of each leg of a request's round trip: the caller's send, the
    request's way to the worker, the worker's work, the answer's way back (and the caller's reading
    of the worker's output), matched by timestamps (the worker's log inside the caller's span)."""
    callers = [line.split() for path in folder.glob("pipe-caller-*.log") for line in path.read_text().splitlines()]
    workers = [line.split() for path in folder.glob("pipe-worker-*.log") for line in path.read_text().splitlines()]
    legs: dict = collections.defaultdict(lambda: collections.defaultdict(list))
    for op, sending, sent, done in callers:
        sending, sent, done = float(sending), float(sent), float(done)
        match = [w for w in workers if w[0] == op and sending <= float(w[1]) <= done]
        if len(match) != 1:
            continue
        received, answered, replied = map(float, match[0][1:])
        for leg, seconds in (("send", sent - sending), ("to worker", received - sent), ("work", answered - received),
                             ("reply", replied - answered), ("back", done - replied), ("total", done - sending)):
            legs[op][leg].append(seconds)
    return {op: {leg: sum(v) / len(v) for leg, v in by_leg.items()} | {"n": len(by_leg["total"])}
            for op, by_leg in legs.items()}


def request_profiles(folder: Path, top: int) -> dict:
    """Per request kind: how many, their total seconds, and the calls with the most cumulative time."""
    kinds: dict[str, list[Path]] = collections.defaultdict(list)
    for path in folder.glob("*.prof"):
        kinds[path.name.split("-")[0]].append(path)
    report = {}
    for kind, paths in sorted(kinds.items()):
        stats = pstats.Stats(*map(str, paths))
        entries = sorted(stats.stats.items(), key=lambda kv: -kv[1][3])
        total = max((v[3] for _, v in entries), default=0.0)
        report[kind] = {"requests": len(paths), "seconds": total, "per_request_s": total / len(paths),
                        "top": [{"call": f"{Path(f).name}:{line} {name}", "calls": v[1], "cumulative_s": v[3],
                                 "own_s": v[2]} for (f, line, name), v in entries[:top]]}
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recipe")
    parser.add_argument("--trials", type=int, default=None)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--json", default=None)
    parser.add_argument("--switch-interval", type=float, default=None,
                        help="sys.setswitchinterval for the CLI process (Python's default: 0.005 s)")
    parser.add_argument("--no-profile", action="store_true", help="leave the worker requests unprofiled")
    args = parser.parse_args(argv)
    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval)
    folder = Path(tempfile.mkdtemp(prefix="kt-profile-"))
    os.environ["KT_PROFILE_DIR"] = str(folder)  # the pipe's timestamps (kt_cli/evaluate/pool.py)
    os.environ["KT_PROFILE_REQUESTS"] = "0" if args.no_profile else "1"
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.tune import tune

    out = Path(tempfile.mkdtemp(prefix="kt-wall-"))
    timeline = Timeline()
    timeline.install()
    timeline.began = started = time.perf_counter()
    with StackSampler() as sampler:
        artifact, _, tally = tune(load_recipe(Path(args.recipe)), trials=args.trials, out_dir=out)
    wall = time.perf_counter() - started
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from breakdown import breakdown, table, trials

    steps = breakdown(trials(artifact))
    report = {"recipe": args.recipe, "trials": args.trials, "wall_s": wall, "evaluated": tally.done,
              "device_busy_s": tally.device_busy_seconds, "switch_interval_s": sys.getswitchinterval(),
              "breakdown": steps, "breakdown_table": table(steps),
              "timeline": timeline.summary(wall), "spans": timeline.spans, "samples": sampler.samples, "sample_s": SAMPLE_S,
              "kt_frames": sampler.kt_frames.most_common(args.top),
              "leaf_frames": sampler.leaf_frames.most_common(args.top),
              "requests": request_profiles(folder, args.top), "pipe": pipe_delays(folder)}
    _print(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


def _print(report: dict) -> None:
    print(f"wall {report['wall_s']:.1f} s, {report['evaluated']} evaluated, device busy "
          f"{report['device_busy_s']:.1f} s; {report['samples']} samples of every thread; switch interval "
          f"{report['switch_interval_s']} s")
    print(report["breakdown_table"])
    for label, entry in report["timeline"].items():
        if isinstance(entry, dict):
            print(f"  {label}: {entry['calls']} calls, {entry['total_s']:.1f} s in all, from {entry['first_start_s']:.1f} s "
                  f"to {entry['last_end_s']:.1f} s")
    seconds = report["sample_s"]
    for title in ("kt_frames", "leaf_frames"):
        print(f"\n{title} (thread-seconds)")
        for where, count in report[title]:
            print(f"  {count * seconds:8.1f}  {where}")
    print("\nrequest round trips, mean seconds per leg")
    for op, legs in report["pipe"].items():
        print(f"  {op:20s} " + " ".join(f"{leg}={value:.4f}" for leg, value in legs.items()))
    for kind, entry in report["requests"].items():
        print(f"\nrequest {kind}: {entry['requests']} requests, {entry['per_request_s']:.3f} s each")
        for row in entry["top"][:15]:
            print(f"  {row['cumulative_s']:8.2f} cum {row['own_s']:7.2f} own {row['calls']:6d}  {row['call']}")


if __name__ == "__main__":
    sys.exit(main())
