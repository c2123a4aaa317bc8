"""TPE-order replays (sessions s14-s20) for every rule in sweep.json; rewrites sweep_tpe.json."""
import json, time
import engine as E, tpe, sweep, sweep2, sweep3
if __name__ == '__main__':
    t = time.time(); out = {}
    rules = list(sweep.configs()) + list(sweep2.configs()) + list(sweep3.configs())
    for rule in rules:
        out[rule.name] = {m: tpe.summarize(tpe.replay_mode(rule, m)) for m in ('run', 'hybrid')}
    json.dump(out, open('/tmp/kt/prune/sweep_tpe.json', 'w')); print('done', len(out), f'{time.time()-t:.0f}s')
