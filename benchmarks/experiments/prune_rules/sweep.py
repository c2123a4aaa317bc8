"""Replay every rule configuration on every dataset in 200 random orders; write sweep.json."""
import json, time, sys
import engine as E

def configs():
    for k in range(1, 6):
        for r in (1.1, 1.15, 1.2, 1.25, 1.3, 1.35, 1.4, 1.45, 1.5, 1.6, 1.75, 2.0):
            yield E.rule_a(r, k)
    for k in range(1, 6):
        for r in (1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.75, 2.0):
            yield E.rule_b(r, k)
    for pool in ('seen', 'measured'):
        for k in (2, 3, 4, 5, 6, 8):
            for q in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7):
                yield E.rule_c(q, k, pool)
    for k in (2, 3, 4, 5):
        for r0 in (1.5, 1.75, 2.0):
            for rmin in (1.1, 1.2, 1.3, 1.4):
                for step in (0.025, 0.05, 0.1):
                    yield E.rule_d_tight(r0, rmin, step, k)
    for k in (3, 4, 5):
        for r in (1.05, 1.1, 1.15, 1.2, 1.25, 1.3):
            for q in (0.3, 0.4, 0.5, 0.6):
                yield E.rule_and(r, q, k)
                yield E.rule_and(r, q, k, 'measured')
    for k in (3, 5):
        for r in (1.5, 2.0):
            for q in (0.5, 0.6, 0.7):
                yield E.rule_or(r, q, k)
    for k in (3, 4, 5):
        for r in (0.9, 1.0, 1.1, 1.2, 1.3):
            for ql in (0.0, 0.1, 0.25):
                yield E.rule_env(r, k, ql)

if __name__ == '__main__':
    t = time.time(); res = {}
    for i, rule in enumerate(configs()):
        res[rule.name] = {}
        for ds, probs in E.POINTS.items():
            fam, per = E.replay(probs, rule)
            res[rule.name][ds] = {'fam': fam, 'per': per}
        if i % 50 == 0: print(i, rule.name, f'{time.time()-t:.0f}s', flush=True)
    json.dump(res, open('/tmp/kt/prune/sweep.json', 'w'))
    print('done', len(res), f'{time.time()-t:.0f}s')
