"""What the threads of `kt tune` processes spent their time on, from stack_sample/sitecustomize.py's
files: per process and thread group, the share of the sampled span each stack was seen in (a thread
seen in a stack in 40% of the rounds spent 40% of the span there), with the group's CPU seconds.

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
    args = parser.parse_args()
    for path in sorted(Path(args.dir).glob("*.json")):
        record = json.loads(path.read_text())
        rounds = max(1, record["rounds"])
        print(f"pid {record['pid']} {' '.join(record['argv'][1:4])}: span {record['span_s']:.1f} s, "
              f"process CPU {record['process_cpu_s']:.1f} s")
        for group, stacks in sorted(record["samples"].items(), key=lambda kv: -sum(kv[1].values())):
            cut = Counter()
            for stack, count in stacks.items():
                cut[" < ".join(stack.split(" < ")[:args.frames])] += count
            threads = sum(cut.values()) / rounds
            print(f"  {group}: {threads:.1f} threads on average, CPU {record['thread_cpu_s'].get(group, 0):.1f} s")
            for stack, count in cut.most_common(args.top):
                print(f"    {count / rounds:6.2f}  {stack[:160]}")


if __name__ == "__main__":
    main()
