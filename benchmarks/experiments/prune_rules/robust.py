"""The recommended rule and today's in 1000 fresh random orders per problem (another seed than the sweep)."""
import random, statistics, zlib
from collections import defaultdict
import engine as E
RULES = [E.rule_a(1.5, 3), E.rule_adapt(1.5, 1, 0.3, 1.5, 3, 1.05, 0)]
N = 1000
for rule in RULES:
    print(f'## {rule.name} ({N} orders, seed 7)')
    for ds, probs in E.POINTS.items():
        fam = defaultdict(lambda: [[], 0, 0, 1.0])
        for p in probs:
            pts = [(e, m) for e, m, *_ in p['points']]; best = min(m for _, m in pts); n = len(pts)
            rng = random.Random(zlib.crc32(p['problem'].encode()) + 7)
            for _ in range(N):
                pr, kept = E.run_order(rng.sample(pts, n), rule)
                for f in (p['family'], 'all'):
                    a = fam[f]; a[0].append(pr / n); a[1] += kept > best * 1.01; a[2] += 1; a[3] = max(a[3], kept / best)
        print(f'  {ds:7} ' + '  '.join(f"{f}: {statistics.fmean(a[0])*100:.1f}% lost {a[1]/a[2]*100:.2f}% worst {a[3]:.3f}" for f, a in fam.items()))
