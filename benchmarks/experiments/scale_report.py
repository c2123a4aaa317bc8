"""Where a `kt tune --workers N` run's span goes, from benchmarks/scale.py's JSON rows (each run's timeline) and,
where the run had KT_PROFILE_DIR, its stamps (docs/performance.md, thirty-fourth session).

    python benchmarks/experiments/scale_report.py SCALE.jsonl [--pipes DIR ...]

Per run: its rate, when its first tenth, its middle 80% and its last tenth of trials ended, and what the first tenth
did with the devices (when the first candidate's turn came, the candidates timed fully); then per process, for
the trials that started in the middle 60% of its span, a trial's mean wall and what it holds: the evaluation,
search.ask, search.turn, search.write (its point drawn and its claim) and the rest (its result and state
writes, its thread waiting to run), and the trials it kept in flight. With --pipes (one folder a run, in the
order of the rows: the KT_PROFILE_DIR each ran with), the process's write transactions in that middle window:
how many a trial, their mean and median wall, and the share of 80 ms or more, and how long they held the
database's write lock (pipe-db-PID.log; kt_cli/search/lock_holds.py); and when a `--workers` run's processes were
ready beside when the parent sent their jobs (pipe-cli-PID.log)."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scale import tenths  # noqa: E402  (benchmarks/scale.py: the run's rate reads the same tenths)


def spans(timeline: list) -> tuple[float, float, float, float]:
    """(seconds to the first tenth's last end, the middle 80%, the last tenth, the whole span) of a run's trials."""
    start = min(t["start"] for t in timeline)
    ends = sorted(t["end"] - start for t in timeline)
    first, ninth = tenths(ends)
    return first, ninth - first, ends[-1] - ninth, ends[-1]


def middle(trials: list) -> list:
    """The trials that started in the middle 60% of their process's span."""
    begin, end = min(t["start"] for t in trials), max(t["end"] for t in trials)
    return [t for t in trials if begin + 0.2 * (end - begin) <= t["start"] <= begin + 0.8 * (end - begin)]


def in_flight(trials: list, window: list) -> float:
    """Trials running at once, sampled 100 times over the window's starts."""
    low, high = min(t["start"] for t in window), max(t["start"] for t in window)
    points = [low + i * (high - low) / 100 for i in range(100)]
    return statistics.fmean(sum(1 for t in trials if t["start"] <= x < t["end"]) for x in points)


def stamped(pipes: Path, pid: int, op: str, low: float, high: float) -> list[tuple[float, float]]:
    """(wall, last field) of a process's `op` stamps (write: a transaction, hold: its lock held) that began
    between `low` and `high` (seconds since the epoch)."""
    path = pipes / f"pipe-db-{pid}.log"
    if not path.exists():
        return []
    rows = [line.split() for line in path.read_text().splitlines()]
    return [(float(r[2]) - float(r[1]), float(r[3])) for r in rows if r[0] == op and low <= float(r[1]) <= high]


def transactions(pipes: Path, pid: int, low: float, high: float, trials: int) -> list[str]:
    """What a process's write transactions took in a window of `trials` trials: their walls, and (stamped
    since the thirty-fifth session) how long each held the write lock, every other writer waiting."""
    lines = []
    walls = [w for w, _ in stamped(pipes, pid, "write", low, high)]
    if walls:
        lines.append(f"    write transactions: {len(walls) / trials:.1f} a trial, mean {1e3 * statistics.fmean(walls):.1f} ms, "
                     f"median {1e3 * statistics.median(walls):.1f} ms, {sum(w >= 0.08 for w in walls) / len(walls):.0%} "
                     "of 80 ms or more")
    holds = stamped(pipes, pid, "hold", low, high)
    if holds:
        held = [w for w, _ in holds]
        lines.append(f"    the write lock held: {1e3 * sum(held) / trials:.1f} ms a trial over {len(held) / trials:.1f} holds, "
                     f"a hold mean {1e3 * statistics.fmean(held):.1f} ms, median {1e3 * statistics.median(held):.1f} ms, "
                     f"{statistics.fmean(n for _, n in holds):.1f} statements")
    return lines


DEVICE_PHASES = ("screen", "verify", "time")


def start(timeline: list, first: float) -> str:
    """What the run's first tenth did with its devices: when the first candidate's turn on a device came (its
    start, search, compile and waits added up), and the candidates verified and timed fully in that tenth, with
    their device seconds (what a second GPU would split, were the processes' bests shared at once)."""
    begin = min(t["start"] for t in timeline)
    reached = [t["start"] - begin + sum(t["phases"].get(k, 0.0) for k in ("search.ask", "search.turn", "search.write",
                                                                           "compile", "wait.compile", "wait.device"))
               for t in timeline if any(t["phases"].get(k) for k in DEVICE_PHASES)]
    full = [t for t in timeline if t["phases"].get("time") and t["end"] - begin <= first]
    seconds = sum(t["phases"].get("verify", 0.0) + t["phases"].get("time", 0.0) for t in full)
    turn = f"the first device turn at about {min(reached):.2f} s" if reached else "no candidate reached a device"
    return f"  start: {turn}; in the first tenth {len(full)} timed fully ({seconds:.1f} s of device)"


def report(row: dict, pipes: Path | None) -> list[str]:
    timeline = row["timeline"]
    first, mid, last, span = spans(timeline)
    lines = [f"--workers {row['workers']}: {row['per_min']:.0f} trials/min over {span:.1f} s (first tenth {first:.1f} s, "
             f"middle 80% {mid:.1f} s, last tenth {last:.1f} s), wall {row['wall_s']:.1f} s", start(timeline, first)]
    for pid in sorted({t["pid"] for t in timeline}):
        trials = [t for t in timeline if t["pid"] == pid]
        window = middle(trials)
        phase = lambda name: statistics.fmean(t["phases"].get(name, 0.0) for t in window)  # noqa: E731
        wall = statistics.fmean(t["end"] - t["start"] for t in window)
        evaluation = statistics.fmean(t["evaluator_s"] for t in window)
        rest = wall - evaluation - phase("search.ask") - phase("search.turn") - phase("search.write")
        lines.append(f"  pid {pid}: {len(window)} trials in the middle, a trial {wall:.3f} s: evaluation {evaluation:.3f}, "
                     f"ask {phase('search.ask'):.3f}, turn {phase('search.turn'):.3f}, write {phase('search.write'):.3f}, "
                     f"rest {rest:.3f}; {in_flight(trials, window):.1f} in flight")
        if pipes is not None and "started_at" in row:
            t0 = row["started_at"]
            lines += transactions(pipes, pid, t0 + min(t["start"] for t in window), t0 + max(t["start"] for t in window),
                                  len(window))
    if pipes is not None and "started_at" in row:
        lines += lock_share(pipes, row["started_at"], middle(timeline))
        lines += readiness(pipes, row["started_at"])
    return lines


def readiness(pipes: Path, t0: float) -> list[str]:
    """When a `--workers` run's processes were ready (kt_cli/search/scale.py's stamps, since the thirty-ninth
    session): the parent's "workers started" and "jobs sent", each worker's "worker ready" and "job received", in
    seconds since the command started."""
    from startup_timeline import cli_marks  # (benchmarks/experiments, beside this script)

    marks: dict = {}
    for path in sorted(pipes.glob("pipe-cli-*.log")):
        for event, at, _cpu in cli_marks(path):
            marks.setdefault(event, []).append(at - t0)
    if "worker ready" not in marks:
        return []
    when = lambda event: ", ".join(f"{t:.2f}" for t in sorted(marks.get(event, [])))  # noqa: E731
    return [f"  ready: workers started {when('workers started')} s, jobs sent {when('jobs sent')} s, workers ready "
            f"{when('worker ready')} s, jobs received {when('job received')} s"]


def lock_share(pipes: Path, t0: float, window: list) -> list[str]:
    """The share of the run's middle that some process held the database's write lock (every process's holds)."""
    low, high = t0 + min(t["start"] for t in window), t0 + max(t["start"] for t in window)
    held = [w for path in pipes.glob("pipe-db-*.log")
            for w, _ in stamped(pipes, int(path.stem.rsplit("-", 1)[1]), "hold", low, high)]
    return [f"  the write lock held {sum(held) / (high - low):.0%} of the run's middle"] if held else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scale", type=Path, help="benchmarks/scale.py --json FILE")
    parser.add_argument("--pipes", type=Path, nargs="*", default=[], help="each run's KT_PROFILE_DIR, in order")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.scale.read_text().splitlines() if line.strip()]
    for i, row in enumerate(rows):
        print("\n".join(report(row, args.pipes[i] if i < len(args.pipes) else None)))


if __name__ == "__main__":
    main()
