"""Replay rules on the real measured tunes' trials, in trial order (TPE search orders).

est='run': the estimate each trial recorded (the model and calibration of that session; a pruned trial's
from its message). est='today': today's model on the features of the same (shape, params) compiled in a
stored rank dataset (uncalibrated, the trial's device); candidates with no stored features are dropped.
A candidate the run pruned has no measurement: if the replayed rule keeps it, it counts as a device
evaluation that did not beat the best (it was estimated > 1.5x a best's estimate). Raced-out candidates
count as measured (their screen value feeds nothing but the count), never as the reference best, as in the
evaluator, and never as the kept best (conservative: the kept best is the fastest kept fully timed candidate)."""
import glob, json, re, sys
from collections import defaultdict
from pathlib import Path
ROOT = Path('/work/main')
sys.path[:0] = [str(ROOT / 'benchmarks'), str(ROOT), str(ROOT / 'plugins')]
import engine as E

ALL_FILES = sorted(glob.glob(str(ROOT / 'benchmarks/results/**/*trials*.jsonl'), recursive=True))
# the sessions present when this study began (s14-s20); s31's tunes (written while it ran, today's model on an
# H200) are kept apart as a held-out check: HELD_OUT
FILES = [f for f in ALL_FILES if f.split('results/')[1].split('/')[0] in {'s14', 's15', 's16', 's17', 's18', 's19', 's20'}]
HELD_OUT = [f for f in ALL_FILES if f.split('results/')[1].startswith('s31/')]
_MSG = re.compile(r'estimates ([0-9.e+-]+) s')


def family(t):
    p = t['params']
    return 'matmul' if 'BLOCK_K' in p and 'K' in t['shape'] else ('attention' if 'S' in t['shape'] else 'other')


_FEATURES = None
def features_of(shape, params):
    global _FEATURES
    if _FEATURES is None:
        _FEATURES = {}
        for p in sorted((ROOT / 'benchmarks/results').glob('rank_*.jsonl')):
            if 's28' in p.name:  # the held-out run lends no features
                continue
            for line in p.read_text().splitlines():
                r = json.loads(line)
                if 'features' in r:
                    _FEATURES.setdefault(json.dumps([r['kernel'], r['shape'], r['params'], r['dtype']], sort_keys=True), r)
    return _FEATURES.get(json.dumps([params[2], shape, params[0], params[1]], sort_keys=True))


def kernel_of(path):
    return 'softmax' if re.search(r'(softmax|/sm_)', str(path)) else 'matmul'


def today_estimate(t, device, dtype):  # t['_kernel']: the trial file's kernel (kernel_of)
    import rank
    r = features_of(t['shape'], (t['params'], dtype, t['_kernel']))
    if r is None:
        return None
    r = dict(r, device=device)
    return rank.estimate(r)['seconds']


def load(path, est='run'):
    """{problem key: [dict(est, meas, raced, run_pruned)] in trial order}, family per problem."""
    trials = [dict(json.loads(l), _kernel=kernel_of(path)) for l in Path(path).read_text().splitlines() if l.strip()]
    device = next((t['stats'].get('device') for t in trials if t.get('stats', {}).get('device')), None) \
        or ('NVIDIA H200' if '/s14/' in str(path) else 'NVIDIA H100 80GB HBM3')
    dtypes = {'s19/fp8': 'float8_e4m3fn'}
    seqs, fams, dropped = defaultdict(list), {}, 0
    for t in trials:
        kind = t['failure_kind']
        if kind not in ('ok', 'pruned') or t.get('mode') != 'measured':
            continue
        key = json.dumps(t['shape'], sort_keys=True)
        fams[key] = family(t)
        if est == 'run':
            e = (t['stats'].get('estimate') or {}).get('seconds') if kind == 'ok' else float(_MSG.search(t['message']).group(1))
        else:
            e = None if 'fp8' in str(path) else today_estimate(t, device, 'bfloat16')
        if not e:
            dropped += 1
            continue
        seqs[key].append({'est': e, 'meas': t.get('value') if kind == 'ok' else None,
                          'raced': bool(t['stats'].get('raced_out')) if kind == 'ok' else False,
                          'run_pruned': kind == 'pruned'})
    return seqs, fams, dropped, device


def replay_seq(seq, rule):
    """Returns (saved, n, lost, kept/best)."""
    final = min(c['meas'] for c in seq if c['meas'] is not None and not c['raced'])
    st = E.State(); pruned = 0; kept = []
    for c in seq:
        if st.best_meas is not None and rule(c['est'], st):
            pruned += 1; st.n_pruned += 1; st.add_seen(c['est']); continue
        st.add_seen(c['est'])
        if c['meas'] is None:          # pruned by the run, kept by this rule: a device evaluation, no time
            st.timed += 1; bisect_insert(st.meas_est, c['est']); continue
        st.add_measured(c['est'], c['meas'], full=not c['raced'])
        if not c['raced']:  # conservative: a raced-out screen value never stands in for the kept best
            kept.append(c['meas'])
    best_kept = min(kept) if kept else float('inf')
    return pruned, len(seq), best_kept > final * 1.01, best_kept / final


def bisect_insert(lst, x):
    import bisect
    bisect.insort(lst, x)


def replay_files(rule, est='run', files=FILES):
    rows = []
    for f in files:
        seqs, fams, dropped, device = load(f, est)
        for key, seq in seqs.items():
            if not any(c['meas'] is not None and not c['raced'] for c in seq):
                continue
            pr, n, lost, kb = replay_seq(seq, rule)
            run_pruned = sum(c['run_pruned'] for c in seq)
            rows.append({'file': f.split('results/')[1], 'problem': key, 'family': fams[key], 'n': n,
                         'saved': pr / n, 'run_saved': run_pruned / n, 'lost': lost, 'kept_vs_best': kb,
                         'dropped': dropped})
    return rows


def summarize(rows):
    out = {}
    for fam in ('matmul', 'other'):
        rs = [r for r in rows if r['family'] == fam]
        if not rs: continue
        out[fam] = {'problems': len(rs), 'saved': sum(r['saved'] for r in rs) / len(rs),
                    'saved_pooled': sum(r['saved'] * r['n'] for r in rs) / sum(r['n'] for r in rs),
                    'run_saved': sum(r['run_saved'] for r in rs) / len(rs),
                    'lost': sum(r['lost'] for r in rs) / len(rs), 'worst': max(r['kept_vs_best'] for r in rs)}
    return out


if __name__ == '__main__':
    for name in sys.argv[1:]:
        pass


def load_hybrid(path):
    """Today's estimate where the (shape, params) has stored features, else the run's estimate times the
    problem's median today/run ratio over its matched trials (keeps every trial in its order)."""
    import statistics
    run, fams, _, device = load(path, 'run')
    trials = [dict(json.loads(l), _kernel=kernel_of(path)) for l in Path(path).read_text().splitlines() if l.strip()]
    out = {}
    idx = defaultdict(int)
    todays = defaultdict(list)
    for t in trials:
        if t['failure_kind'] not in ('ok', 'pruned') or t.get('mode') != 'measured':
            continue
        key = json.dumps(t['shape'], sort_keys=True)
        todays[key].append(None if 'fp8' in str(path) else today_estimate(t, device, 'bfloat16'))
    for key, seq in run.items():
        tl = todays[key]
        assert len(tl) == len(seq), (path, key)
        ratios = [tl[i] / c['est'] for i, c in enumerate(seq) if tl[i]]
        if not ratios:
            continue
        med = statistics.median(ratios)
        out[key] = [dict(c, est=tl[i] or c['est'] * med) for i, c in enumerate(seq)]
    return out, fams


CACHE = {}
def sequences(mode, files=None):
    files = FILES if files is None else files
    if (mode, tuple(files)) not in CACHE:
        seqs = []
        for f in files:
            if mode == 'hybrid':
                s, fams = load_hybrid(f)
            else:
                s, fams, _, _ = load(f, mode)
            for key, seq in s.items():
                if any(c['meas'] is not None and not c['raced'] for c in seq):
                    seqs.append((f.split('results/')[1], key, fams[key], seq))
        CACHE[(mode, tuple(files))] = seqs
    return CACHE[(mode, tuple(files))]


def replay_mode(rule, mode, files=None):
    rows = []
    for f, key, fam, seq in sequences(mode, files):
        pr, n, lost, kb = replay_seq(seq, rule)
        rows.append({'file': f, 'problem': key, 'family': fam, 'n': n, 'saved': pr / n,
                     'run_saved': sum(c['run_pruned'] for c in seq) / n, 'lost': lost, 'kept_vs_best': kb})
    return rows
