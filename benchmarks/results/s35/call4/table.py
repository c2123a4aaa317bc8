"""Per run: pruned / sent to the device per recipe, and each problem's best as its ratio to the baseline timed
beside it (s35 call 1). python table.py"""
import json, glob
for f in sorted(glob.glob("bench_*.json"), key=lambda f: (f.split("_")[-1], f)):
    d = json.load(open(f))
    cells = []
    for k in d["kernels"]:
        kinds = k["kinds"]
        best = {r["shape_key"]: (r["stats"].get("ratio") or {}).get("median", 0) for r in k["results"]}
        params = {r["shape_key"]: r["params"] for r in k["results"]}
        cells.append(f"{k['recipe'][:4]}: pruned {kinds.get('pruned', 0):2d} sent {kinds.get('ok', 0)} ratios "
                     + " ".join(f"{v:.3f}" for v in best.values()))
    print(f[6:-5].ljust(10), " | ".join(cells))
