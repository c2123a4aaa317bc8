"""all_results.csv (every rule x dataset x family) and the grids of REPORT.md."""
import csv, json, sys
from analyze import res, summary, DEV
from pick import T
DS = ['s8', 's9', 's15', 's18', 's27', 's14', 'stored', 's28']

with open('/tmp/kt/prune/all_results.csv', 'w', newline='') as fh:
    w = csv.writer(fh)
    w.writerow(['rule', 'dataset', 'family', 'problems', 'saved', 'orders_missing_best_by_1pct', 'worst_kept_vs_best'])
    for name, per in res.items():
        for d in DS:
            for f, x in per[d]['fam'].items():
                w.writerow([name, d, f, x['problems'], f"{x['saved']:.4f}", f"{x['lost']:.4f}", f"{x['worst']:.4f}"])
        for m in ('run', 'hybrid'):
            for f, x in T.get(name, {}).get(m, {}).items():
                w.writerow([name, f'tpe_{m}', f, x['problems'], f"{x['saved']:.4f}", f"{x['lost']:.4f}", f"{x['worst']:.4f}"])

def row(name):
    s = summary(name, DEV); h = res[name]['s28']['fam']; t = T.get(name)
    mmatt_lost = max(s[f]['lost_max'] for f in ('matmul', 'attention'))
    mmatt_worst = max(s[f]['worst'] for f in ('matmul', 'attention'))
    ok = mmatt_lost <= 0.02 and mmatt_worst <= 1.03
    oth = f"{s['other']['saved']*100:.0f} ({s['other']['lost_max']*100:.1f}%, {s['other']['worst']:.2f})"
    tp = f"{t['run']['matmul']['saved']*100:.0f} / {t['hybrid']['matmul']['saved']*100:.0f}" if t else '–'
    return (f"| `{name}` | {s['matmul']['saved']*100:.1f} | {s['attention']['saved']*100:.1f} | {mmatt_lost*100:.1f}% | {mmatt_worst:.3f} | {'yes' if ok else 'no'} | {oth} | {tp} | "
            f"{h['matmul']['saved']*100:.1f} ({h['matmul']['lost']*100:.1f}%, {h['matmul']['worst']:.2f}) | {h['attention']['saved']*100:.1f} ({h['attention']['lost']*100:.1f}%, {h['attention']['worst']:.2f}) |")

HEAD = ('| rule | dev matmul saved % | dev attention saved % | dev mm+att max lost | dev mm+att worst | meets (<=2%, <=1.03) on every dev set | dev other saved % (max lost, worst) | TPE matmul saved % (run/today est) | s28 matmul (lost, worst) | s28 attention (lost, worst) |\n'
        '|---|---|---|---|---|---|---|---|---|---|')
if __name__ == '__main__':
    pat = sys.argv[1]
    print(HEAD)
    for name in res:
        if name.startswith(pat) and all(tok in name.split() for tok in sys.argv[2:]):
            print(row(name))
