"""Markdown tables for REPORT.md from sweep.json and sweep_tpe.json."""
import json, sys
from collections import defaultdict
from analyze import res, summary, DEV
from pick import feasible, score, T
DS = ['s8', 's9', 's15', 's18', 's27', 's14', 'stored', 's28']

def kind(name):
    k = name.split()[0]
    if k == 'c': k += ' (' + name.split()[-1] + ')'
    if k == 'a&c' or k == 'a|c': k += ' (' + name.split()[-1] + ')'
    if k == 'adapt': k += ' (rho guard)' if not name.endswith('rho=0') else ' (no rho)'
    return k

def best_per_kind(fams):
    best = {}
    for name in res:
        if name not in T: continue
        s = feasible(name, fams)
        if not s: continue
        sc = score(name, s)
        k = kind(name)
        if k not in best or sc > best[k][0]:
            best[k] = (sc, name, s)
    return best

def fmt_cell(x):
    return f"{x['saved']*100:.1f} / {x['lost']*100:.1f} / {x['worst']:.3f}" if x else '–'

def per_dataset(name):
    out = [f'**{name}** — saved % / orders missing the best by >1% (%) / worst kept÷best', '',
           '| family | ' + ' | '.join(DS[:-1]) + ' | **s28 (held out)** |', '|---' * (len(DS) + 1) + '|']
    for f in ('matmul', 'attention', 'other'):
        out.append(f'| {f} | ' + ' | '.join(fmt_cell(res[name][d]['fam'].get(f)) for d in DS) + ' |')
    t = T[name]
    out.append(f"| TPE orders (run est / today's est) | matmul {t['run']['matmul']['saved']*100:.1f} / {t['hybrid']['matmul']['saved']*100:.1f}, "
               f"lost {t['run']['matmul']['lost']*100:.1f} / {t['hybrid']['matmul']['lost']*100:.1f}, worst {t['run']['matmul']['worst']:.3f} / {t['hybrid']['matmul']['worst']:.3f}; "
               f"softmax {t['run']['other']['saved']*100:.1f} / {t['hybrid']['other']['saved']*100:.1f}, lost {t['run']['other']['lost']*100:.1f} / {t['hybrid']['other']['lost']*100:.1f} |" + ' |' * (len(DS) - 1))
    return '\n'.join(out)

def kinds_table(fams):
    b = best_per_kind(fams)
    out = ['| rule family | best configuration (chosen on dev + TPE) | dev matmul | dev attention | dev other | dev max lost / worst | TPE matmul (run/today) | TPE softmax | s28 matmul | s28 attention | s28 other |',
           '|---|---|---|---|---|---|---|---|---|---|---|']
    for k, (sc, name, s) in sorted(b.items(), key=lambda kv: -kv[1][0]):
        t = T[name]; h = res[name]['s28']['fam']
        out.append(f"| {k} | `{name}` | {s['matmul']['saved']*100:.1f} | {s['attention']['saved']*100:.1f} | {s['other']['saved']*100:.1f} | "
                   f"{max(s[f]['lost_max'] for f in s)*100:.1f}% / {max(s[f]['worst'] for f in s):.3f} | "
                   f"{t['run']['matmul']['saved']*100:.1f} / {t['hybrid']['matmul']['saved']*100:.1f} | {t['run']['other']['saved']*100:.1f} | "
                   + ' | '.join(fmt_cell(h.get(f)) for f in ('matmul', 'attention', 'other')) + ' |')
    return '\n'.join(out)

if __name__ == '__main__':
    what = sys.argv[1]
    if what == 'kinds':
        print(kinds_table(sys.argv[2].split(',')))
    else:
        for n in sys.argv[2:]:
            print(per_dataset(n)); print()
