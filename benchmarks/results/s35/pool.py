"""The session's pruning runs pooled by mode (calls 1-4, one H200 each): device evaluations (candidates sent to
the device) per recipe against the runs without pruning, and each problem's best as its ratio to the baseline
timed beside it. python pool.py"""
import glob
import json
import statistics
from collections import defaultdict

MODES = {"new": "arrival", "arrival": "arrival", "bestfirst": "best first", "noprune": "no pruning",
         "old": "before the sampler change"}
runs = defaultdict(list)  # mode -> [(file, {recipe: (sent, pruned, {problem: ratio})})]
for path in sorted(glob.glob("call[1-4]/bench_*.json")):  # (call 5: the matmul recipe at 32 trials, below)
    mode = MODES[path.split("bench_")[1].rsplit("_", 1)[0]]
    kernels = json.load(open(path))["kernels"]
    runs[mode].append((path, {k["recipe"]: (k["kinds"].get("ok", 0), k["kinds"].get("pruned", 0),
                                            {r["shape_key"]: r["stats"]["ratio"]["median"] for r in k["results"]},
                                            k.get("found_s", {}))
                              for k in kernels}))
base = {rec: statistics.fmean(r[rec][0] for _, r in runs["no pruning"]) for rec in ("matmul", "attention")}
for mode, rs in runs.items():
    print(f"== {mode}: {len(rs)} runs")
    for rec in ("matmul", "attention"):
        sent = [r[rec][0] for _, r in rs]
        print(f"  {rec:9s} sent {sent} mean {statistics.fmean(sent):.1f} -> {1 - statistics.fmean(sent) / base[rec]:.0%} "
              f"fewer than without pruning ({base[rec]:.1f})")
        for problem in rs[0][1][rec][2]:
            ratios = [r[rec][2][problem] for _, r in rs]
            found = [r[rec][3].get(problem, 0) for _, r in rs]
            print(f"    {problem:40s} best/baseline median {statistics.median(ratios):.3f} range "
                  f"{min(ratios):.3f}-{max(ratios):.3f}; best found after {statistics.median(found):.1f} s "
                  f"(median; {min(found):.1f}-{max(found):.1f})")

print("== call 5: the matmul recipe at its own budget (32 trials a problem)")
for path in sorted(glob.glob("call5/bench32_*.json")):
    k = json.load(open(path))["kernels"][0]
    print(f"  {path:32s} sent {k['kinds'].get('ok', 0)} pruned {k['kinds'].get('pruned', 0)} best/baseline "
          + " ".join(f"{r['stats']['ratio']['median']:.3f}" for r in k["results"]))
