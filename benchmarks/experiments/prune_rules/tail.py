"""Tail check on the development sets: the rank-rule variants in 1000 random orders (seed 7), scored like pick.py;
s28 is printed only for the variants, not used to choose."""
import itertools, json, random, statistics, sys, zlib
from collections import defaultdict
import engine as E, tpe
N = 1000
DEV = ['s8', 's9', 's15', 's18', 's27', 's14', 'stored']

def replay_n(rule, ds):
    fam = defaultdict(lambda: [[], 0, 0, 1.0])
    for p in E.POINTS[ds]:
        pts = [(e, m) for e, m, *_ in p['points']]; best = min(m for _, m in pts); n = len(pts)
        rng = random.Random(zlib.crc32(p['problem'].encode()) + 7)
        for _ in range(N):
            pr, kept = E.run_order(rng.sample(pts, n), rule)
            a = fam[p['family']]; a[0].append(pr / n); a[1] += kept > best * 1.01; a[2] += 1; a[3] = max(a[3], kept / best)
    return {f: {'saved': statistics.fmean(a[0]), 'lost': a[1] / a[2], 'worst': a[3], 'n': len(a[0])} for f, a in fam.items()}

if __name__ == '__main__':
    rules = [E.rule_a(1.5, 3), E.rule_a(1.45, 1)]
    for q, z, kc, rho in itertools.product((0.25, 0.3, 0.35), (1.5, 2.0), (3, 4, 5, 6), (0, 0.3)):
        rules.append(E.rule_adapt(1.5, 1, q, z, kc, 1.05, rho))
    out = {}
    for rule in rules:
        r = {ds: replay_n(rule, ds) for ds in DEV + ['s28']}
        t = {m: tpe.summarize(tpe.replay_mode(rule, m)) for m in ('run', 'hybrid')}
        ok = all(x['lost'] <= 0.02 and x['worst'] <= 1.03 for ds in DEV for x in r[ds].values())
        pooled = {f: sum(r[d][f]['saved'] * r[d][f]['n'] for d in DEV if f in r[d]) / sum(r[d][f]['n'] for d in DEV if f in r[d]) for f in ('matmul', 'attention', 'other')}
        worst = max(x['worst'] for ds in DEV for x in r[ds].values()); lost = max(x['lost'] for ds in DEV for x in r[ds].values())
        out[rule.name] = {'res': r, 'tpe': t, 'ok': ok, 'pooled': pooled}
        print(f"{'OK ' if ok else '   '}{rule.name:52} dev mm {pooled['matmul']*100:.1f} att {pooled['attention']*100:.1f} oth {pooled['other']*100:.1f} max lost {lost*100:.2f}% worst {worst:.3f} | "
              f"tpe mm {t['run']['matmul']['saved']*100:.1f}/{t['hybrid']['matmul']['saved']*100:.1f} | s28 " +
              ' '.join(f"{f[:3]} {x['saved']*100:.1f}/{x['lost']*100:.1f}/{x['worst']:.3f}" for f, x in r['s28'].items()), flush=True)
    json.dump(out, open('/tmp/kt/prune/tail.json', 'w'))
