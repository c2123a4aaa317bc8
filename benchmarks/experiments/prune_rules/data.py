"""Cache (estimate, measured) per problem per dataset, each dataset estimated with its own calibration
(as tests/test_costmodel_rank.py does). Read-only use of benchmarks/rank.py and kt_cli."""
import json, sys, time
from collections import defaultdict
from pathlib import Path
ROOT = Path('/work/main')
sys.path[:0] = [str(ROOT / 'benchmarks'), str(ROOT), str(ROOT / 'plugins')]
import rank  # noqa

R = ROOT / 'benchmarks' / 'results'
DATASETS = {
    's8': (R / 'rank_fresh_h100_s8.jsonl', R / 'calibrate_h100_s8.json'),
    's9': (R / 'rank_fresh_h100_s9.jsonl', R / 'calibrate_h100_s9.json'),
    's15': (R / 'rank_fresh_h100_s15.jsonl', None),
    's18': (R / 'rank_fresh_h100_s18.jsonl', R / 'calibrate_h100_s18b.json'),
    's27': (R / 'rank_fresh_h100_s27.jsonl', R / 'calibrate_h100_s27.json'),
    's14': (R / 'rank_fresh_h200_s14.jsonl', None),
    'stored': (R / 'rank_dataset.jsonl', None),
    's28': (R / 'rank_fresh_h100_s28.jsonl', R / 'calibrate_h100_s28.json'),
}

def family(recipe):
    r = recipe.replace('holdout_', '')
    if r.startswith('matmul'): return 'matmul'
    if r.startswith('attention'): return 'attention'
    return 'other'

def main():
    out = {}
    for name, (path, cal) in DATASETS.items():
        t = time.time()
        rank.CALIBRATIONS.clear()
        if cal: rank.use_calibrations([cal])
        groups = defaultdict(list)
        for r in rank.load([path]):
            groups[rank.problem_of(r)].append([rank.estimate(r)['seconds'], r['measured_s'], r.get('run', '')])
        out[name] = [{'problem': ' | '.join(k), 'recipe': k[1], 'family': family(k[1]), 'points': v}
                     for k, v in groups.items() if len(v) >= rank.MIN_POINTS]
        print(name, len(out[name]), 'problems', sum(len(p['points']) for p in out[name]), 'points', f'{time.time()-t:.1f}s', flush=True)
    rank.CALIBRATIONS.clear()
    Path('/tmp/kt/prune/points.json').write_text(json.dumps(out))

if __name__ == '__main__':
    main()
