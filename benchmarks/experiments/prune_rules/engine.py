"""Replay engine: pruning rules on (estimate, measured) points of a problem in random orders (or a given
order). A rule is a callable rule(est, st) -> bool (True: prune) given the problem's state so far."""
from __future__ import annotations
import bisect, json, random, statistics, zlib
from collections import defaultdict
from pathlib import Path

ORDERS = 200
POINTS = json.loads(Path('/tmp/kt/prune/points.json').read_text())


class State:
    __slots__ = ('timed', 'best_meas', 'best_est', 'ratios', 'seen', 'meas_est', 'n_pruned', 'pairs', '_rho')

    def __init__(self):
        self.timed = 0          # candidates measured on the device
        self.best_meas = None   # fastest (fully timed) measured value so far
        self.best_est = None    # its estimate (the current rule's reference)
        self.ratios = []        # sorted measured/estimate of every measured candidate
        self.seen = []          # sorted estimates of every candidate proposed so far (pruned included)
        self.meas_est = []      # sorted estimates of the measured candidates
        self.n_pruned = 0
        self.pairs = []         # (estimate, measured) of the measured candidates
        self._rho = None

    def add_seen(self, est):
        bisect.insort(self.seen, est)

    def add_measured(self, est, meas, full=True):
        self.timed += 1
        bisect.insort(self.meas_est, est)
        if meas is not None:
            bisect.insort(self.ratios, meas / est)
            self.pairs.append((est, meas)); self._rho = None
            if full and (self.best_meas is None or meas < self.best_meas):
                self.best_meas, self.best_est = meas, est


def run_order(order, rule):
    """order: [(est, meas)]; returns (pruned count, best kept)."""
    st = State()
    for est, meas in order:
        if st.best_meas is not None and rule(est, st):
            st.n_pruned += 1
            st.add_seen(est)
            continue
        st.add_seen(est)
        st.add_measured(est, meas)
    return st.n_pruned, st.best_meas


_ORDER_CACHE = {}

def orders_of(key, n, orders=ORDERS):
    if (key, n) not in _ORDER_CACHE:
        rng = random.Random(zlib.crc32(key.encode()))  # stable across processes
        _ORDER_CACHE[(key, n)] = [rng.sample(range(n), n) for _ in range(orders)]
    return _ORDER_CACHE[(key, n)]


def replay(problems, rule, orders=ORDERS):
    """problems: the dataset's problem dicts. Returns per-family and per-problem figures."""
    fam = defaultdict(lambda: {'saved': [], 'lost': 0, 'runs': 0, 'worst': 1.0})
    per = {}
    for p in problems:
        pts = [(e, m) for e, m, *_ in p['points']]
        best = min(m for _, m in pts)
        n = len(pts)
        saved, lost, worst = [], 0, 1.0
        for idx in orders_of(p['problem'], n, orders):
            pr, kept = run_order([pts[i] for i in idx], rule)
            saved.append(pr / n)
            lost += kept > best * 1.01
            worst = max(worst, kept / best)
        per[p['problem']] = {'saved': statistics.fmean(saved), 'lost': lost / len(saved), 'worst': worst, 'n': n}
        for f in (p['family'], 'all'):
            a = fam[f]
            a['saved'] += saved; a['lost'] += lost; a['runs'] += len(saved); a['worst'] = max(a['worst'], worst)
    out = {f: {'saved': statistics.fmean(a['saved']), 'lost': a['lost'] / a['runs'], 'worst': a['worst'],
               'problems': a['runs'] // orders} for f, a in fam.items()}
    return out, per


# ---- rules -------------------------------------------------------------------------------------------
def rule_a(r, k):
    """Today's rule: est > r x the estimate of the fastest measured so far, once k measured."""
    def f(est, st):
        return st.timed >= k and est > r * st.best_est
    f.name = f'a r={r:g} k={k}'
    return f


def rule_b(r, k):
    """Calibrated: est x median(measured/est so far) > r x the best measured so far."""
    def f(est, st):
        if st.timed < k:
            return False
        rs = st.ratios; m = len(rs)
        med = rs[m // 2] if m % 2 else 0.5 * (rs[m // 2 - 1] + rs[m // 2])
        return est * med > r * st.best_meas
    f.name = f'b r={r:g} k={k}'
    return f


def rule_c(q, k, pool='seen'):
    """Rank: est worse than the q-quantile of the estimates seen so far (pool 'seen': every proposed
    candidate, pruned ones included; 'measured': only the measured ones)."""
    def f(est, st):
        if st.timed < k:
            return False
        s = st.seen if pool == 'seen' else st.meas_est
        return bisect.bisect_left(s, est) / len(s) > q
    f.name = f'c q={q:g} k={k} {pool}'
    return f


def rule_d_tight(r0, rmin, step, k):
    """(a) whose ratio tightens by `step` per measured candidate past k, down to rmin."""
    def f(est, st):
        if st.timed < k:
            return False
        r = max(rmin, r0 - step * (st.timed - k))
        return est > r * st.best_est
    f.name = f'd-tight r0={r0:g} rmin={rmin:g} step={step:g} k={k}'
    return f


def rule_and(r, q, k, pool='seen'):
    """(c) guarded by (a): prune only if the estimate ranks worse than the q-quantile AND is above
    r x the fastest measured one's estimate."""
    a, c = rule_a(r, k), rule_c(q, k, pool)
    def f(est, st):
        return a(est, st) and c(est, st)
    f.name = f'a&c r={r:g} q={q:g} k={k} {pool}'
    return f


def rule_or(r, q, k, pool='seen'):
    a, c = rule_a(r, k), rule_c(q, k, pool)
    def f(est, st):
        return a(est, st) or c(est, st)
    f.name = f'a|c r={r:g} q={q:g} k={k} {pool}'
    return f


def rule_env(r, k, qlow=0.0):
    """Envelope: prune when even the most favourable model error seen so far (the qlow-quantile of
    measured/estimate; 0: the minimum) leaves the candidate above r x the best measured."""
    def f(est, st):
        if st.timed < k:
            return False
        rs = st.ratios
        low = rs[min(len(rs) - 1, int(qlow * len(rs)))]
        return est * low > r * st.best_meas
    f.name = f'env r={r:g} k={k} qlow={qlow:g}'
    return f


def rule_c_conf(q, z, k, pool='seen'):
    """Rank with a confidence margin: prune when more of the seen estimates lie below this one than
    q x m + z x sqrt(m q (1-q)) (m: how many were seen): the candidate is confidently above the
    population's q-quantile, not just above the sample's."""
    def f(est, st):
        if st.timed < k:
            return False
        return _confidently_above(st.seen if pool == 'seen' else st.meas_est, est, q, z)
    f.name = f'cconf q={q:g} z={z:g} k={k} {pool}'
    return f


def _confidently_above(s, est, q, z):
    """More of the sorted estimates `s` lie below `est` than q x m + z x sqrt(m q (1-q)) (m = len(s))."""
    m = len(s)
    return bisect.bisect_left(s, est) > q * m + z * (m * q * (1 - q)) ** 0.5


def _guarded(ra, ka, kc, rg, pool, rank):
    """(a) at ra once ka measured, or `rank(sorted estimates, est)` once kc measured for candidates above
    rg x the fastest one's estimate (rg 0: no guard)."""
    def f(est, st):
        if st.timed >= ka and est > ra * st.best_est:
            return True
        if st.timed < kc or est <= rg * st.best_est:
            return False
        return rank(st.seen if pool == 'seen' else st.meas_est, est)
    return f


def rule_guarded(ra, ka, q, kc, rg, pool='seen'):
    """(a) at ra once ka measured, or (c) at q once kc measured for candidates above rg x the
    fastest one's estimate (rg 0: no guard)."""
    f = _guarded(ra, ka, kc, rg, pool, lambda s, est: bisect.bisect_left(s, est) / len(s) > q)
    f.name = f'g ra={ra:g} ka={ka} q={q:g} kc={kc} rg={rg:g} {pool}'
    return f


def rule_guarded_conf(ra, ka, q, z, kc, rg, pool='seen'):
    """rule_guarded with the rank test's confidence margin z (rule_c_conf)."""
    f = _guarded(ra, ka, kc, rg, pool, lambda s, est: _confidently_above(s, est, q, z))
    f.name = f'gconf ra={ra:g} ka={ka} q={q:g} z={z:g} kc={kc} rg={rg:g} {pool}'
    return f


def _spearman(pairs):
    n = len(pairs)
    if n < 3:
        return 0.0
    def rk(v):
        o = sorted(range(n), key=v.__getitem__); r = [0.0] * n
        for i, j in enumerate(o): r[j] = i
        return r
    a = rk([p[0] for p in pairs]); b = rk([p[1] for p in pairs])
    d = sum((x - y) ** 2 for x, y in zip(a, b))
    return 1 - 6 * d / (n * (n * n - 1))


def rho_of(st):
    if st._rho is None:
        st._rho = _spearman(st.pairs)
    return st._rho


def rule_adapt(ra, ka, q, z, kc, rg, rho_min):
    """(a) at ra once ka measured, or the rank rule (confidence margin z; z 0: plain q-quantile) once kc
    measured, for candidates above rg x the fastest one's estimate, only while the model has ranked this
    problem's measured candidates with Spearman >= rho_min."""
    def f(est, st):
        if st.timed >= ka and est > ra * st.best_est:
            return True
        if st.timed < kc or est <= rg * st.best_est:
            return False
        s = st.seen; m = len(s)
        below = bisect.bisect_left(s, est)
        if not (below > q * m + z * (m * q * (1 - q)) ** 0.5):
            return False
        return rho_of(st) >= rho_min
    f.name = f'adapt ra={ra:g} ka={ka} q={q:g} z={z:g} kc={kc} rg={rg:g} rho={rho_min:g}'
    return f
