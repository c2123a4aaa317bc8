"""Does a candidate's per-pair ratio to its interleaved baseline settle sooner, and agree better between
two moments, than its own median? Times each given config of a library kernel interleaved with the
problem's baseline exactly as a full timing does (kt's EventTimer: the problem's one method, flushes,
holds, batches of 20, 20, 40, 80... pairs), but a fixed number of pairs, in `--passes` passes over the
configs (the order reversed every other pass), and keeps every sample with the device's clock before
and after each batch. `--replay` then plays kt's stopping rule on the kept series: how many pairs the
candidate's own median needs to reach +-1% against the ratio's, and how far each statistic of one
config moves between passes (what ranks two candidates timed at different moments).

    python benchmarks/experiments/ratio_stop.py --recipe recipes/matmul.toml --points P.jsonl --pairs 640 --json OUT.json
    python benchmarks/experiments/ratio_stop.py --replay OUT.json [OUT2.json ...]

P.jsonl: one {"shape": {...}, "params": {...}} a line (params as kt stores a trial's, launch options included).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

BATCHES = (20, 20, 40, 80, 160, 320, 640)  # what next_batch's doubling takes, the first batch of a full timing included


def measure(recipe_path: str, points: list[dict], pairs: int, passes: int, vendor_name: str) -> list[dict]:
    from kt_cli import plugins
    from kt_cli.evaluate.requests import split_params
    from kt_cli.kernel import Kernel, Tensors
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.generate import kernel_source

    recipe = load_recipe(recipe_path)
    vendor = plugins.vendor(vendor_name)
    device = vendor.detect_devices()[0]
    runtime = vendor.runtime()
    runtime.select(device.index)
    source = kernel_source(recipe, [], Path("/tmp/ratio_stop_src"))
    kernel = Kernel.load(source)
    options_of = plugins.target(device.target).launch_options
    timer = vendor.timer(device)
    by_shape: dict = {}
    rows = []
    for p in range(passes):
        order = points if p % 2 == 0 else points[::-1]
        for point in order:
            key = json.dumps(point["shape"], sort_keys=True)
            if key not in by_shape:
                inputs = kernel.make_inputs(point["shape"], recipe.problem.dtype, Tensors(runtime.torch_device, 0))
                baseline = (lambda inputs=inputs: kernel.baseline(inputs))
                by_shape[key] = inputs, baseline, timer.choose_method(baseline)
            inputs, baseline, method = by_shape[key]
            params, options = split_params(point["params"], options_of)
            launch = kernel.bound_launch(inputs, params, options)
            flush = timer._flush_buffer()
            timer._warm_up(launch, baseline)
            samplers = timer._samplers([launch, baseline], flush, method)
            cand, base, batches, taken = [], [], [], 0
            for size in BATCHES:
                size = min(size, pairs - taken)
                if size <= 0:
                    break
                before = vendor.device_state(device)
                c, b = timer._take(samplers, size)
                after = vendor.device_state(device)
                cand += c
                base += b
                taken += size
                batches.append({"pairs": size, "clock_before": before.get("sm_clock_mhz"),
                                "clock_after": after.get("sm_clock_mhz"), "at": time.time()})
            rows.append({"pass": p, "shape": point["shape"], "params": point["params"], "method": method,
                         "candidate": cand, "baseline": base, "batches": batches})
            print(f"pass {p} {key} {statistics.median(cand) * 1e6:9.1f} us  ratio "
                  f"{statistics.median([x / y for x, y in zip(cand, base)]):.4f}", flush=True)
            del launch
        runtime.synchronize()
    return rows


def stop_at(series: list[float], rel_ci: float = 0.01) -> tuple[int, float, bool]:
    """kt's own stopping rule (timing.sample_until_tight: its batches, its interval) replayed on a kept
    series: pairs taken when its median's interval is within +-rel_ci, that median, and whether it got
    there before the series ran out."""
    from kt_cli.evaluate.timing import sample_until_tight

    taken = 0

    def batch(n: int) -> list[list[float]]:
        nonlocal taken
        taken += n
        return [series[taken - n:taken]]

    (stats,) = sample_until_tight(batch, "x", rel_ci, max_seconds=float("inf"), max_samples=len(series))
    return stats.calls, stats.median, stats.precise


def replay(paths: list[str]) -> None:
    rows = [r | {"file": p} for p in paths for r in json.loads(Path(p).read_text())]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["file"], json.dumps(r["shape"], sort_keys=True), json.dumps(r["params"], sort_keys=True)), []).append(r)
    print(f"{'shape':>22} {'own: pairs':>11} {'tight':>6} {'ratio: pairs':>13} {'tight':>6} "
          f"{'own moved':>10} {'ratio moved':>12} {'base moved':>11} clocks")
    summary = {"own_pairs": [], "ratio_pairs": [], "own_moved": [], "ratio_moved": [], "own_tight": 0,
               "ratio_tight": 0, "n": 0}
    for (_, shape, _), rs in groups.items():
        own, ratio, base_m = [], [], []
        for r in rs:
            c, b = r["candidate"], r["baseline"]
            q = [x / y for x, y in zip(c, b)]
            own.append(stop_at(c))
            ratio.append(stop_at(q))
            base_m.append(statistics.median(b[:own[-1][0]]))
            summary["own_pairs"].append(own[-1][0])
            summary["ratio_pairs"].append(ratio[-1][0])
            summary["own_tight"] += own[-1][2]
            summary["ratio_tight"] += ratio[-1][2]
            summary["n"] += 1
        moved = lambda vals: max(vals) / min(vals) - 1 if len(vals) > 1 else math.nan  # noqa: E731
        om, rm = moved([o[1] for o in own]), moved([q[1] for q in ratio])
        summary["own_moved"].append(om)
        summary["ratio_moved"].append(rm)
        clocks = sorted({b[k] for r in rs for b in r["batches"] for k in ("clock_before", "clock_after") if b[k]}) or ["?"]
        s = json.loads(shape)
        print(f"{'x'.join(str(v) for v in s.values()):>22} {'/'.join(str(o[0]) for o in own):>11} "
              f"{sum(o[2] for o in own):>6} {'/'.join(str(q[0]) for q in ratio):>13} {sum(q[2] for q in ratio):>6} "
              f"{om:>10.2%} {rm:>12.2%} {moved(base_m):>11.2%} {clocks[0]}-{clocks[-1]}")
    n = summary["n"]
    print(f"\n{n} timings: own median tight {summary['own_tight']}, mean pairs {statistics.mean(summary['own_pairs']):.0f}; "
          f"ratio tight {summary['ratio_tight']}, mean pairs {statistics.mean(summary['ratio_pairs']):.0f}")
    om = [x for x in summary["own_moved"] if not math.isnan(x)]
    rm = [x for x in summary["ratio_moved"] if not math.isnan(x)]
    if om:
        print(f"between passes: own median moved median {statistics.median(om):.2%} (max {max(om):.2%}); "
              f"ratio moved median {statistics.median(rm):.2%} (max {max(rm):.2%})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recipe")
    ap.add_argument("--points")
    ap.add_argument("--pairs", type=int, default=640)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--vendor", default="nvidia", help="the vendor plugin (tests.fake_vendor's `fake` with KT_PLUGINS set)")
    ap.add_argument("--replay", nargs="+")
    args = ap.parse_args()
    if args.replay:
        return replay(args.replay)
    points = [json.loads(line) for line in Path(args.points).read_text().splitlines() if line.strip()]
    rows = measure(args.recipe, points, args.pairs, args.passes, args.vendor)
    Path(args.json).write_text(json.dumps(rows))
    replay([args.json])


if __name__ == "__main__":
    main()
