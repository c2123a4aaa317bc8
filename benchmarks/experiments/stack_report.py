"""What the threads of `kt tune` processes spent their time on, from stack_sample/sitecustomize.py's
files: per process and thread group, the share of the sampled span each stack was seen in (a thread
seen in a stack in 40% of the rounds spent 40% of the span there); then the process's CPU seconds
charged to the stacks that used them.

    python benchmarks/experiments/stack_report.py DIR [--top 12] [--frames 3]

Stacks are cut to their innermost FRAMES frames, so that the same wait reached from different callers
adds up."""

import argparse
import json
from collections import Counter
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--frames", type=int, default=3)
    parser.add_argument("--kt", action="store_true",
                        help="charge the CPU to the innermost frame of kt's own code (and the frame under it)")
    args = parser.parse_args()
    records = [json.loads(path.read_text()) for path in Path(args.dir).glob("*.json")]
    for record in sorted(records, key=lambda r: r["span_s"]):
        rounds = max(1, record["rounds"])
        print(f"pid {record['pid']} (parent {record.get('ppid')}) {' '.join(record['argv'][1:])[:150]}: span {record['span_s']:.1f} s, "
              f"process CPU {record['process_cpu_s']:.1f} s")
        for group, stacks in sorted(record["samples"].items(), key=lambda kv: -sum(kv[1].values())):
            cut = _cut(stacks, args.frames)
            print(f"  {group}: {sum(cut.values()) / rounds:.1f} threads on average")
            for stack, count in cut.most_common(args.top):
                print(f"    {count / rounds:6.2f}  {stack[:160]}")
        tick = record["tick_s"]
        everything = Counter()
        for group, stacks in record["cpu_ticks"].items():
            everything.update({f"[{group}] {k}": v for k, v in
                               (_by_kt(stacks) if args.kt else _cut(stacks, args.frames)).items()})
        print(f"  CPU charged to stacks: {sum(everything.values()) * tick:.1f} s")
        for stack, count in everything.most_common(args.top * 2):
            print(f"    {count * tick:6.2f} s  {stack[:170]}")


def _short(frame: str) -> str:
    path, _, rest = frame.partition(":")
    return f"{'/'.join(path.split('/')[-2:])}:{rest}"


def _cut(stacks: dict, frames: int) -> Counter:
    cut = Counter()
    for stack, count in stacks.items():
        cut[" < ".join(_short(f) for f in stack.split(" < ")[:frames])] += count
    return cut


def _by_kt(stacks: dict) -> Counter:
    """Each stack cut at its innermost frame in kt's code (kt_cli/, vendor_*/, plugins/), with the
    frame it called (what the time went into)."""
    cut = Counter()
    for stack, count in stacks.items():
        frames = stack.split(" < ")
        at = next((i for i, f in enumerate(frames) if "/kt_cli/" in f or "/vendor_" in f or "/plugins/" in f), None)
        key = frames[:2] if at is None else frames[max(0, at - 1):at + 1]
        cut[" < ".join(_short(f) for f in key)] += count
    return cut


if __name__ == "__main__":
    main()
