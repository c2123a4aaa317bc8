"""How busy a run's kt processes and the host's CPUs are, sampled from /proc while `kt tune` runs under
KT_PROFILE_DIR: whether a worker's process is held by its own CPU (its GIL) or waits.

    python benchmarks/experiments/proc_cpu.py sample DIR OUT.jsonl [--every 0.25] [--spy PY_SPY]   # until killed
    python benchmarks/experiments/proc_cpu.py report OUT.jsonl [--from S --to S]

`sample` finds the kt processes by the stamp files they write in DIR (pipe-cli-PID.log: the processes that
drive the studies) and writes a line per sample: the time, the host's busy and total CPU ticks (/proc/stat),
and each such process's CPU ticks and threads. With --spy, py-spy records each such process from when it is
found (100 Hz, raw, without blocking it) into DIR/spy-PID.txt, for benchmarks/experiments/spy_cpu.py. `report` prints, per process, the share of one CPU it used
and the host's busy share, over the samples between --from and --to (epoch seconds; default all)."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path


def _host_ticks() -> tuple[int, int]:
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def _proc_ticks(pid: int) -> tuple[int, int] | None:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    rest = stat[stat.rindex(")") + 2:].split()
    return int(rest[11]) + int(rest[12]), int(rest[17])  # utime + stime, num_threads


def sample(folder: Path, out: Path, every: float, spy: str | None = None) -> None:
    spied = set()
    with out.open("a") as sink:
        while True:
            pids = [int(m.group(1)) for p in folder.glob("pipe-cli-*.log") if (m := re.match(r"pipe-cli-(\d+)", p.name))]
            for pid in set(pids) - spied if spy else ():
                subprocess.Popen([spy, "record", "-p", str(pid), "-r", "100", "--nonblocking", "-f", "raw",
                                  "-o", str(folder / f"spy-{pid}.txt")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                spied.add(pid)
            busy, total = _host_ticks()
            procs = {pid: t for pid in pids if (t := _proc_ticks(pid)) is not None}
            sink.write(json.dumps({"t": time.time(), "host": [busy, total], "procs": procs}) + "\n")
            sink.flush()
            time.sleep(every)


def report(path: Path, start: float, end: float) -> None:
    rows = [json.loads(line) for line in path.open() if line.strip()]
    rows = [r for r in rows if start <= r["t"] <= end]
    if len(rows) < 2:
        sys.exit("fewer than two samples in the window")
    hz = os.sysconf("SC_CLK_TCK")
    first, last = rows[0], rows[-1]
    span = last["t"] - first["t"]
    host = (last["host"][0] - first["host"][0]) / max(1, last["host"][1] - first["host"][1])
    print(f"{span:.1f} s, host busy {host:.0%} of its CPUs")
    for pid in sorted({pid for r in rows for pid in r["procs"]}, key=int):
        seen = [r for r in rows if pid in r["procs"]]
        if len(seen) < 2:
            continue
        wall = seen[-1]["t"] - seen[0]["t"]
        cpu = (seen[-1]["procs"][pid][0] - seen[0]["procs"][pid][0]) / hz
        peak = max((b["procs"][pid][0] - a["procs"][pid][0]) / hz / (b["t"] - a["t"]) for a, b in zip(seen, seen[1:]))
        print(f"  pid {pid}: {cpu / wall:.0%} of one CPU over {wall:.1f} s (busiest sample {peak:.0%}), "
              f"{max(r['procs'][pid][1] for r in seen)} threads at most")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample")
    s.add_argument("folder", type=Path)
    s.add_argument("out", type=Path)
    s.add_argument("--every", type=float, default=0.25)
    s.add_argument("--spy", help="py-spy's executable: record each kt process found")
    r = sub.add_parser("report")
    r.add_argument("path", type=Path)
    r.add_argument("--from", dest="start", type=float, default=0.0)
    r.add_argument("--to", dest="end", type=float, default=float("inf"))
    args = parser.parse_args()
    if args.command == "sample":
        sample(args.folder, args.out, args.every, args.spy)
    else:
        report(args.path, args.start, args.end)


if __name__ == "__main__":
    main()
