"""Per session of real tunes: the run's own pruned share, today's rule and the recommended rule replayed in
trial order (run's estimates / today's model)."""
import sys
from collections import defaultdict
import engine as E, tpe
RULES = [E.rule_a(1.5, 3), E.rule_a(1.45, 1), E.rule_adapt(1.5, 1, 0.3, 1.5, 5, 1.05, 0)]
rows = {}
for rule in RULES:
    for m in ('run', 'hybrid'):
        for r in tpe.replay_mode(rule, m):
            sess = r['file'].split('/')[0] + ('/fp8' if 'fp8' in r['file'] else '')
            rows.setdefault((sess, r['family']), defaultdict(list))[(rule.name, m)].append(r)
print('| session | recipe | problems | run pruned itself | ' + ' | '.join(f'{r.name} (run est / today est)' for r in RULES) + ' |')
print('|---' * (4 + len(RULES)) + '|')
for (sess, fam), d in sorted(rows.items()):
    first = d[(RULES[0].name, 'run')]
    cells = []
    for rule in RULES:
        a, b = d[(rule.name, 'run')], d.get((rule.name, 'hybrid'), [])
        f = lambda rs: (f"{sum(x['saved'] for x in rs)/len(rs)*100:.0f}%" + (f" ({sum(x['lost'] for x in rs)} lost, {max(x['kept_vs_best'] for x in rs):.3f})" if any(x['lost'] for x in rs) else '')) if rs else '–'
        cells.append(f'{f(a)} / {f(b)}')
    print(f"| {sess} | {'matmul' if fam == 'matmul' else 'softmax'} | {len(first)} | {sum(x['run_saved'] for x in first)/len(first)*100:.0f}% | " + ' | '.join(cells) + ' |')
