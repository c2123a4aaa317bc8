"""Per run folder of commit_times/sitecustomize.py: each call site's transactions a trial and their mean wall
time, over the run's kt processes.

    python benchmarks/experiments/commit_report.py DIR TRIALS [DIR TRIALS ...]
"""

import json
import sys
from collections import defaultdict
from pathlib import Path


def main() -> None:
    args = sys.argv[1:]
    for folder, trials in zip(args[::2], map(int, args[1::2])):
        sites = defaultdict(lambda: [0, 0.0])
        for path in Path(folder).glob("*.json"):
            for site, (count, seconds) in json.loads(path.read_text())["sites"].items():
                sites[site][0] += count
                sites[site][1] += seconds
        total = sum(s for _, s in sites.values())
        print(f"{folder}: {trials} trials, transactions {sum(c for c, _ in sites.values()) / trials:.1f} a trial, "
              f"{1000 * total / trials:.0f} ms a trial in them")
        for site, (count, seconds) in sorted(sites.items(), key=lambda kv: -kv[1][1])[:14]:
            print(f"  {count / trials:5.2f} a trial  {1000 * seconds / count:7.2f} ms each  {site}")


if __name__ == "__main__":
    main()
