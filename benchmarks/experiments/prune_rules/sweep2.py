import json, time, itertools
import engine as E
def configs():
    for k in (2, 3, 4, 5, 6):
        for q in (0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5):
            for z in (0.5, 1.0, 1.5, 2.0):
                yield E.rule_c_conf(q, z, k)
    for ra, ka in ((1.5, 3), (1.4, 3), (1.4, 1), (1.5, 1)):
        for q, kc in itertools.product((0.4, 0.45, 0.5, 0.55, 0.6), (3, 4, 5, 6)):
            for rg in (0, 1.05, 1.1):
                yield E.rule_guarded(ra, ka, q, kc, rg)
    for ra, ka in ((1.5, 3), (1.4, 3)):
        for q, z, kc in itertools.product((0.2, 0.25, 0.3, 0.35), (0.5, 1.0, 1.5), (3, 4, 5)):
            for rg in (0, 1.05, 1.1):
                yield E.rule_guarded_conf(ra, ka, q, z, kc, rg)
    for k in (3, 4, 5, 6):
        for r in (1.02, 1.05, 1.1):
            for q in (0.35, 0.4, 0.45):
                yield E.rule_and(r, q, k)
if __name__ == '__main__':
    t = time.time(); res = json.load(open('/tmp/kt/prune/sweep.json')); n = 0
    for i, rule in enumerate(configs()):
        if rule.name in res: continue
        res[rule.name] = {ds: dict(zip(('fam', 'per'), E.replay(probs, rule))) for ds, probs in E.POINTS.items()}
        n += 1
        if i % 100 == 0: print(i, rule.name, f'{time.time()-t:.0f}s', flush=True)
    json.dump(res, open('/tmp/kt/prune/sweep.json', 'w')); print('added', n, f'{time.time()-t:.0f}s')
