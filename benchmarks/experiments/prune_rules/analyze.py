import json, sys, statistics
res = json.load(open('/tmp/kt/prune/sweep.json'))
DEV = ['s8', 's9', 's15', 's18', 's27', 's14', 'stored']
TARGET = ('matmul', 'attention')

def summary(name, datasets, fams=('matmul', 'attention', 'other')):
    r = res[name]; out = {}
    for f in fams:
        rows = [r[d]['fam'][f] for d in datasets if f in r[d]['fam']]
        if not rows: continue
        # pooled over problems (each dataset's family mean weighted by its problems)
        w = [x['problems'] for x in rows]
        out[f] = {'saved': sum(x['saved'] * n for x, n in zip(rows, w)) / sum(w),
                  'saved_min': min(x['saved'] for x in rows),
                  'lost_max': max(x['lost'] for x in rows),
                  'lost': sum(x['lost'] * n for x, n in zip(rows, w)) / sum(w),
                  'worst': max(x['worst'] for x in rows)}
    return out

def ok(s, fams=TARGET, lost=0.02, worst=1.03):
    return all(s[f]['lost_max'] <= lost and s[f]['worst'] <= worst for f in fams if f in s)

if __name__ == '__main__':
    fams = sys.argv[1].split(',') if len(sys.argv) > 1 else list(TARGET)
    rows = []
    for name in res:
        s = summary(name, DEV)
        if ok(s, fams):
            rows.append((min(s[f]['saved'] for f in TARGET), name, s))
    rows.sort(reverse=True)
    for sc, name, s in rows[:40]:
        print(f'{name:45} ' + '  '.join(f"{f[:4]} {s[f]['saved']:.3f} (min {s[f]['saved_min']:.3f}) lost {s[f]['lost_max']:.3f} w {s[f]['worst']:.3f}" for f in ('matmul','attention','other')))
