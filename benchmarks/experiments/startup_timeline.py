"""Experiment (not part of kt): the first seconds of a `kt tune`, worker by worker, from KT_PROFILE_DIR.

    T0=$(date +%s.%N) KT_PROFILE_DIR=/tmp/pipes kt tune recipes/matmul.toml --out /tmp/a
    python benchmarks/experiments/startup_timeline.py /tmp/pipes --t0 $T0 [--until 15]

Each worker process logs when it was forked and ready ("start") and every request it served
(kt_cli/stamps.py), and the CLI marks its own steps (stamps.mark). This prints, per worker, its role
(guessed from the requests it served), those events in seconds after T0, and the first requests,
so that the question "what did the first candidate wait for" reads off one table.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

ROLES = {"compile": "compile pool", "launch_held": "device worker", "time_held": "device worker",
         "hold_cases": "judge", "judge_cases": "judge", "inspect_module": "interpreter", "knobs_read": "interpreter"}


def read(directory: Path) -> dict:
    """{pid: [(op, stamps...)]} of every worker's log."""
    out = {}
    for path in sorted(directory.glob("pipe-worker-*.log")):
        pid = int(path.stem.rsplit("-", 1)[1])
        rows = []
        for line in path.read_text().splitlines():
            op, *stamps = line.split()
            rows.append((op, *map(float, stamps)))
        out[pid] = rows
    return out


def cli_marks(path: Path) -> list[tuple[str, float, float]]:
    """A process's marks (kt_cli.stamps.mark) from its pipe-cli-PID.log: (event, when, the CPU seconds kt's
    process had used by then)."""
    return [(" ".join(line.split()[:-2]), *map(float, line.split()[-2:])) for line in path.read_text().splitlines()]


def role(rows: list) -> str:
    ops = collections.Counter(r[0] for r in rows if r[0] != "start")
    for op, _ in ops.most_common():
        for prefix, name in ROLES.items():
            if op.startswith(prefix):
                return name
    return ",".join(ops) or "idle"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", type=Path)
    parser.add_argument("--t0", type=float, required=True, help="the command's start, seconds since the epoch")
    parser.add_argument("--until", type=float, default=20.0, help="show events up to this many seconds")
    parser.add_argument("--requests", type=int, default=4, help="first requests shown per worker")
    args = parser.parse_args()
    logs = read(args.directory)
    for pid, rows in sorted(logs.items(), key=lambda kv: min((r[1] for r in kv[1]), default=0)):
        name = role(rows)
        if name == "compile pool" and pid != min(p for p, r in logs.items() if role(r) == name):
            continue  # one compile worker shown: the others start alike
        events = []
        shown = 0
        for op, *stamps in rows:
            rel = [s - args.t0 for s in stamps]
            if rel[0] > args.until:
                break
            if op != "start":  # a request: the first few only
                if shown == args.requests:
                    continue
                shown += 1
            events.append(f"{op} {rel[0]:.2f}->{rel[1]:.2f}")
        print(f"{name:>14} {pid:>7}: " + "; ".join(events))
    for path in sorted(args.directory.glob("pipe-cli-*.log")):
        marks = cli_marks(path)
        # each mark: seconds after T0 and, where logged (kt_cli.stamps.mark), the CPU seconds kt's process had used
        print("CLI: " + "; ".join(f"{event} {at - args.t0:.2f}" + (f" (cpu {cpu:.2f})" if cpu < 1e6 else "")
                                  for event, at, cpu in marks if at - args.t0 <= args.until))
    callers = sorted(args.directory.glob("pipe-caller-*.log"))
    firsts: dict = {}
    for path in callers:
        for line in path.read_text().splitlines():
            op, *stamps = line.split()
            firsts.setdefault(op, float(stamps[0]) - args.t0)
    print("first sent by the CLI: " + "; ".join(f"{op} {t:.2f}" for op, t in sorted(firsts.items(), key=lambda x: x[1])))


if __name__ == "__main__":
    main()
