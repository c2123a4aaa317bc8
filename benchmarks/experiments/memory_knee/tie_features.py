"""Which compiled features differ between the candidates the cost model ties (estimates within 0.1%) whose
measured times differ by more than 5%, on the calibrated held-out and fresh runs, and how often the one with
the larger value is the slower. python benchmarks/experiments/memory_knee/tie_features.py"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT / d) for d in ('benchmarks', 'plugins', '.', 'tests')]
import rank
from test_costmodel_rank import FRESH
from collections import defaultdict, Counter

def flat(f):
    out = {}
    for k, v in f["instructions"].items(): out["mix." + k] = v
    for k, v in f["resources"].items():
        if not isinstance(v, dict): out["res." + k] = v
    out["programs"] = f["programs"]
    for k, v in f["work"].items(): out["work." + k] = v
    return out

diff_count, slower_when_larger = Counter(), Counter()
kinds = Counter()
for run in ("s28", "s33b", "s34c", "s34d", "s27", "s9", "s18"):
    d, c, _, _ = FRESH[run]
    rank.CALIBRATIONS.clear()
    if c: rank.use_calibrations([c])
    by = defaultdict(list)
    for r in rank.load([d]):
        by[rank.problem_of(r)].append((rank.estimate(r), r))
    for p, rs in by.items():
        for i in range(len(rs)):
            for j in range(i + 1, len(rs)):
                (ei, ri), (ej, rj) = rs[i], rs[j]
                a, b = ei["seconds"], ej["seconds"]
                mi, mj = ri["measured_s"], rj["measured_s"]
                if abs(a - b) <= 1e-3 * max(a, b) and max(mi, mj) > 1.05 * min(mi, mj):
                    kinds[(p[1], ei["bound"])] += 1
                    fi, fj = flat(ri["features"]), flat(rj["features"])
                    for k in set(fi) | set(fj):
                        vi, vj = fi.get(k, 0), fj.get(k, 0)
                        if vi != vj and isinstance(vi, (int, float)) and isinstance(vj, (int, float)):
                            diff_count[k] += 1
                            slower_when_larger[k] += ((vi > vj) == (mi > mj))
print(kinds.most_common())
for k, n in diff_count.most_common(30):
    print(f"{k:28s} differs in {n:3d} ties; the larger is slower in {slower_when_larger[k]/n:.0%}")
