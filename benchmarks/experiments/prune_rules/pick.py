"""Joint selection on the development data only (never s28): random orders of s8 s9 s15 s18 s27 s14 stored
and the TPE trial orders (run and hybrid estimates)."""
import json, sys
from analyze import res, summary, DEV
T = json.load(open('/tmp/kt/prune/sweep_tpe.json'))

def feasible(name, fams, dev=DEV, lost=0.02, worst=1.03, use_tpe=True):
    s = summary(name, dev)
    for f in fams:
        if f in s and (s[f]['lost_max'] > lost or s[f]['worst'] > worst):
            return None
    if use_tpe:
        for m in ('run', 'hybrid'):
            for f in fams:
                x = T[name][m].get(f)
                if x and (x['lost'] > lost or x['worst'] > worst):
                    return None
    return s

def score(name, s, use_tpe=True):
    parts = [s['matmul']['saved'], s['attention']['saved']]
    if use_tpe:
        parts += [T[name]['run']['matmul']['saved'], T[name]['hybrid']['matmul']['saved']]
    return min(parts)

def ranked(fams, dev=DEV, use_tpe=True):
    rows = []
    for name in res:
        if name not in T: continue
        s = feasible(name, fams, dev, use_tpe=use_tpe)
        if s: rows.append((score(name, s, use_tpe), name, s))
    return sorted(rows, reverse=True)

if __name__ == '__main__':
    fams = sys.argv[1].split(',')
    for sc, name, s in ranked(fams)[:int(sys.argv[2]) if len(sys.argv) > 2 else 20]:
        t = T[name]
        print(f"{sc*100:4.1f} {name:48} dev mm {s['matmul']['saved']*100:4.1f} at {s['attention']['saved']*100:4.1f} oth {s['other']['saved']*100:4.1f} "
              f"(lost {max(s[f]['lost_max'] for f in s)*100:.1f}% w {max(s[f]['worst'] for f in s):.3f}) | tpe mm {t['run']['matmul']['saved']*100:4.1f}/{t['hybrid']['matmul']['saved']*100:4.1f} oth {t['run']['other']['saved']*100:4.1f}")
