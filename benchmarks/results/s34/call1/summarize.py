"""Per run and problem: the winner (lowest kernel/cuBLAS ratio of the fully timed), the device seconds spent
sampling full timings, how many were imprecise or hit the timer's cap. python summarize.py RUN.trials.jsonl..."""
import json
import sys
from collections import defaultdict

for path in sys.argv[1:]:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    by = defaultdict(list)
    for r in rows:
        by["x".join(str(v) for v in r["shape"].values())].append(r)
    for shape, rs in by.items():
        full = [r for r in rs if r["failure_kind"] == "ok" and r.get("stats") and not r["stats"].get("raced_out")
                and "time.sampling" in r["phase_seconds"]]
        samp = [r["phase_seconds"]["time.sampling"] for r in full]
        best = min(full, key=lambda r: r["stats"]["ratio"]["median"]) if full else None
        print(f"{path.split('/')[-1]:36s} {shape:16s} trials {len(rs):3d} full {len(full):3d} "
              f"sampling {sum(samp):6.2f} s (max {max(samp, default=0):.2f}) imprecise "
              f"{sum(not r['stats'].get('precise', True) for r in full):2d} "
              f"best {best['stats']['median'] * 1e6 if best else 0:9.1f} us ratio "
              f"{best['stats']['ratio']['median'] if best else 0:.4f} "
              f"[{best['stats']['ratio'].get('ci_low', 0) if best else 0:.4f}, "
              f"{best['stats']['ratio'].get('ci_high', 0) if best else 0:.4f}]")
