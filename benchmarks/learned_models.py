"""Learned alternatives to kt's analytical cost model, held against it on the stored measurements with
problems (or whole kernels) held out of training: the evidence behind docs/costmodel.md's choice.

    python benchmarks/learned_models.py [--fresh benchmarks/results/rank_fresh_h100_s8.jsonl] [--json]

- `gbdt`: TVM/Ansor's approach laid over the analytical model: gradient-boosted regression trees
  (squared loss, depth 3, 150 trees, shrinkage 0.1) predicting log(measured / estimate) from generic
  features of the compiled kernel and the model's terms (never a kernel's parameter names);
- `pairwise`: a linear ranker (logistic loss on the pairs of one problem whose times differ by more
  than 5%, L2-regularised towards the analytical estimate) over the same features.
Each is judged with benchmarks/rank.py's figures, trained without the held-out group: leave one problem
(kernel and shape, on every device) out, and leave one kernel out. With --fresh, a later run's points
are scored by models trained on the stored datasets without that run's problems. Training uses torch.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rank  # noqa: E402  (benchmarks/rank.py: the dataset, today's estimate and the figures)

TREES, DEPTH, RATE, MIN_LEAF = 150, 3, 0.1, 8
TERMS = ("dram_s", "l2_s", "math_s", "issue_s")
MIX = ("mma", "barrier", "shared_load", "shared_store", "global_load", "global_store", "special")
NAMES = (*(f"share_{t[:-2]}" for t in TERMS), "wave_efficiency", "log_resident", "log_warps", "registers",
         "log_spill_bytes", "log_shared_bytes", *(f"mix_{m}" for m in MIX), "warpgroup_mma", "tma",
         "async_copy", "log_load_bytes", "log_reread", "log_intensity", "log_instructions", "launches")


def features(analytical: dict, work, resources, launches: int, mix: dict) -> list[float]:
    """The correction's inputs for one candidate, in NAMES order (scale-free where they can be)."""
    total = max(analytical["seconds"], 1e-12)
    instructions = max(1, mix.get("total", 0))
    return [
        *(math.log(max(analytical[t], 1e-15) / total) for t in TERMS),
        analytical["wave_efficiency"],
        math.log2(analytical["resident"]),
        math.log2(max(1, resources.threads) / 32),
        resources.registers / 256,
        math.log1p(resources.spill_bytes),
        math.log1p(resources.shared_bytes),
        *(mix.get(m, 0) / instructions for m in MIX),
        float(bool(mix.get("mma_warpgroup"))),
        float(bool(mix.get("tma"))),
        float(bool(mix.get("async_copy"))),
        math.log1p(mix.get("global_load_bytes", 0)),
        math.log(max(work.requested_bytes, work.unique_bytes, 1.0) / max(work.unique_bytes, 1.0)),
        math.log10(1.0 + work.flops / max(work.unique_bytes, 1.0)),
        math.log1p(mix.get("total", 0)),
        float(launches),
    ]


def fit(rows: list[list[float]], targets: list[float], trees: int = TREES, depth: int = DEPTH,
        rate: float = RATE, min_leaf: int = MIN_LEAF) -> dict:
    """Gradient-boosted regression trees (squared loss) fitted to `targets`; deterministic."""
    import torch

    x = torch.tensor(rows, dtype=torch.float64)
    y = torch.tensor(targets, dtype=torch.float64)
    base = float(y.mean())
    prediction = torch.full_like(y, base)
    model = {"names": list(NAMES), "base": base, "rate": rate, "trees": []}
    for _ in range(trees):
        tree = _grow(x, y - prediction, torch.arange(len(y)), depth, min_leaf)
        model["trees"].append(tree)
        prediction += rate * _apply(tree, x)
    return model


def _apply(tree, x):
    """The tree's value for every row of `x` at once."""
    import torch

    if not isinstance(tree, list):
        return torch.full((len(x),), float(tree), dtype=torch.float64)
    return torch.where(x[:, tree[0]] <= tree[1], _apply(tree[2], x), _apply(tree[3], x))


def _grow(x, residual, index, depth: int, min_leaf: int):
    """One node: a leaf (its mean residual) or [feature, threshold, left, right] at the best split."""
    mean = float(residual[index].mean())
    if depth == 0 or len(index) < 2 * min_leaf:
        return mean
    best = _best_split(x[index], residual[index], min_leaf)
    if best is None:
        return mean
    feature, threshold = best
    left = index[x[index, feature] <= threshold]
    right = index[x[index, feature] > threshold]
    return [feature, threshold, _grow(x, residual, left, depth - 1, min_leaf),
            _grow(x, residual, right, depth - 1, min_leaf)]


def _best_split(x, r, min_leaf: int):
    """(feature, threshold) that most reduces the squared error, all features at once; None if none."""
    import torch

    n = len(r)
    values, order = torch.sort(x, dim=0)
    sums = torch.cumsum(r[order], dim=0)  # residual sums of the left side after each position
    total = sums[-1]  # the same in every column
    count = torch.arange(1, n + 1, dtype=torch.float64).unsqueeze(1)
    gain = sums ** 2 / count + (total - sums) ** 2 / (n - count).clamp(min=1)
    valid = values[:-1] < values[1:]  # split only between distinct values
    valid[: min_leaf - 1] = False
    valid[n - min_leaf:] = False
    gain = gain[:-1].masked_fill(~valid, -math.inf)
    position, feature = divmod(int(torch.argmax(gain)), x.shape[1])
    best = float(gain[position, feature])
    if not math.isfinite(best) or best <= float(total[0]) ** 2 / n + 1e-12:  # no better than no split
        return None
    return feature, float((values[position, feature] + values[position + 1, feature]) / 2)


def _walk(tree, row: list[float]) -> float:
    while isinstance(tree, list):
        tree = tree[2] if row[tree[0]] <= tree[1] else tree[3]
    return tree


def predict(model: dict, row: list[float]) -> float:
    """The model's log(measured / analytical) for one row of features."""
    return model["base"] + model["rate"] * sum(_walk(tree, row) for tree in model["trees"])


def fit_pairwise(points: list[dict], strength: float = 0.01, apart: float = rank.APART) -> dict:
    """A linear score over the standardised features plus the log estimate, fitted so that of every pair
    of one problem whose measured times differ by more than `apart`, the faster scores lower."""
    import torch

    faster, slower = [], []
    for group in _by_problem(points).values():
        for a in group:
            faster += [a["row"] + [a["log_estimate"]] for b in group if b["measured"] > apart * a["measured"]]
            slower += [b["row"] + [b["log_estimate"]] for b in group if b["measured"] > apart * a["measured"]]
    x = torch.tensor([p["row"] for p in points], dtype=torch.float64)
    scale = torch.cat([x.std(0).clamp(min=1e-6), torch.ones(1, dtype=torch.float64)])
    d = (torch.tensor(faster, dtype=torch.float64) - torch.tensor(slower, dtype=torch.float64)) / scale
    w = torch.zeros(d.shape[1], dtype=torch.float64)
    w[-1] = 1.0  # start from (and stay near) the analytical estimate's own order
    w.requires_grad_(True)
    prior = torch.zeros_like(w)
    prior[-1] = 1.0
    optimiser = torch.optim.LBFGS([w], max_iter=200)

    def loss():
        optimiser.zero_grad()
        value = torch.nn.functional.softplus(d @ w).mean() + strength * ((w - prior) ** 2).sum()
        value.backward()
        return value

    optimiser.step(loss)
    return {"weights": w.detach().tolist(), "scale": scale.tolist()}


def score_pairwise(model: dict, point: dict) -> float:
    values = point["row"] + [point["log_estimate"]]
    return sum(w * v / s for w, v, s in zip(model["weights"], values, model["scale"]))


def prepared(records: list[dict]) -> list[dict]:
    """Each measured point with today's analytical estimate and its features."""
    from kt_cli.evaluate.estimate import Work
    from kt_cli.types import Resources

    out = []
    for r in records:
        analytical, f = rank.estimate(r), r["features"]
        row = features(analytical, Work(**f["work"]), Resources(**f["resources"]), f["launches"], f["instructions"])
        out.append({"record": r, "row": row, "log_estimate": math.log(analytical["seconds"]),
                    "measured": r["measured_s"], "problem": _problem(r)})
    return out


def _problem(r: dict) -> str:
    return f"{r['device']} | {r['recipe']} {r['dtype']} | {json.dumps(r['shape'], sort_keys=True)}"


def _by_problem(points: list[dict]) -> dict:
    groups = defaultdict(list)
    for p in points:
        groups[p["problem"]].append(p)
    return groups


def predictions(method: str, train: list[dict], scored: list[dict]) -> list[float]:
    """Estimated seconds of `scored` by `method` trained on `train` (analytical: no training)."""
    if method == "gbdt":
        model = fit([p["row"] for p in train], [math.log(p["measured"]) - p["log_estimate"] for p in train])
        return [math.exp(p["log_estimate"] + predict(model, p["row"])) for p in scored]
    if method == "pairwise":
        model = fit_pairwise(train)
        return [math.exp(score_pairwise(model, p)) for p in scored]
    return [math.exp(p["log_estimate"]) for p in scored]


def held_out(points: list[dict], method: str, group_of) -> dict:
    """rank.py's summary of `method` when every group is scored by a model trained without it."""
    groups = defaultdict(list)
    for p in points:
        groups[group_of(p["record"])].append(p)
    pairs = defaultdict(list)
    for name, scored in groups.items():
        train = [p for p in points if group_of(p["record"]) != name]
        for p, seconds in zip(scored, predictions(method, train, scored)):
            pairs[p["problem"]].append((seconds, p["measured"]))
    return summary(pairs)


def summary(pairs: dict) -> dict:
    per = {k: rank.problem_quality(v) for k, v in pairs.items() if len(v) >= rank.MIN_POINTS}
    rhos = [q["rho"] for q in per.values()]
    return {"problems": len(per), "rho_median": statistics.median(rhos), "rho_worst": min(rhos),
            "winner_within_10pct": statistics.fmean(q["winner"] <= 1.10 for q in per.values()),
            "top8_recall": statistics.fmean(q["top8"] for q in per.values()),
            "error_median": statistics.median(q["error"] for q in per.values()),
            "ties": sum(q["ties"] for q in per.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", default=[str(p) for p in rank.DATASETS])
    parser.add_argument("--fresh", help="a later run's rank rows, scored by models trained on the datasets")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    points = prepared(rank.load(args.datasets))
    kernel_shape = lambda r: (r["kernel"], json.dumps(r["shape"], sort_keys=True))  # noqa: E731
    rows = []
    for method in ("analytical", "gbdt", "pairwise"):
        rows.append({"method": method, "held_out": "problem", **held_out(points, method, kernel_shape)})
        rows.append({"method": method, "held_out": "kernel", **held_out(points, method, lambda r: r["kernel"])})
    if args.fresh:
        fresh = prepared(rank.load([args.fresh]))
        unseen = {kernel_shape(p["record"]) for p in fresh}
        train = [p for p in points if kernel_shape(p["record"]) not in unseen]
        for method in ("analytical", "gbdt", "pairwise"):
            pairs = defaultdict(list)
            for p, seconds in zip(fresh, predictions(method, train, fresh)):
                pairs[p["problem"]].append((seconds, p["measured"]))
            rows.append({"method": method, "held_out": f"fresh run ({Path(args.fresh).name})", **summary(pairs)})
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    from tabulate import tabulate

    print(tabulate([[r["method"], r["held_out"], r["problems"], f"{r['rho_median']:.2f}", f"{r['rho_worst']:.2f}",
                     f"{r['winner_within_10pct']:.0%}", f"{r['top8_recall']:.0%}", f"{r['error_median']:.0%}",
                     r["ties"]] for r in rows],
                   ["model", "held out", "problems", "rho median", "rho worst", "winner <=10%", "top-8", "error",
                    "ties"]))


if __name__ == "__main__":
    main()
