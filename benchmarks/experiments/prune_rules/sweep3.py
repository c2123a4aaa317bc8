import json, time, itertools
import engine as E, tpe
def configs():
    for ra, ka in ((1.5, 1), (1.5, 3)):
        for (q, z), kc, rg, rho in itertools.product(((0.4, 0), (0.45, 0), (0.5, 0), (0.25, 1.0), (0.25, 1.5), (0.3, 1.0), (0.3, 1.5), (0.2, 1.5)),
                                                     (3, 4, 5), (0, 1.05), (0.0, 0.3, 0.5, 0.6, 0.7)):
            yield E.rule_adapt(ra, ka, q, z, kc, rg, rho)
if __name__ == '__main__':
    t = time.time(); res = json.load(open('sweep.json')); T = json.load(open('sweep_tpe.json'))
    for m in ('run', 'hybrid'): tpe.sequences(m)
    for i, rule in enumerate(configs()):
        res[rule.name] = {ds: dict(zip(('fam', 'per'), E.replay(probs, rule))) for ds, probs in E.POINTS.items()}
        T[rule.name] = {m: tpe.summarize(tpe.replay_mode(rule, m)) for m in ('run', 'hybrid')}
        if i % 40 == 0: print(i, rule.name, f'{time.time()-t:.0f}s', flush=True)
    json.dump(res, open('sweep.json', 'w')); json.dump(T, open('sweep_tpe.json', 'w')); print('done', f'{time.time()-t:.0f}s')
