"""How often `kt check` catches a real slowdown, and how often it cries wolf, on a GPU.

    python benchmarks/check_detection.py --runs 50 --target-slowdown 0.05 --json A.json --save-artifact A.tar.gz
    python benchmarks/check_detection.py --runs 50 --inject 14.2 --artifact A.tar.gz --json B.json
    python benchmarks/check_detection.py --merge A.json B.json --json ALL.json

Tunes recipes/dsl_example.toml (a memory-bound kernel), then makes a second artifact whose kernel
re-reads a fraction of its x blocks (--inject, in percent of the programs) from a far-away address:
more DRAM traffic, a real slowdown in the kernel itself (same manifest, so the same stored
kernel/reference ratio, source re-signed). Each run is one check's measurement of one artifact in a
fresh worker process, as each CI job's `kt check` is (verification, then kt_cli.reports.check.BLOCKS
blocks of ROUNDS interleaved kernel/reference pairs); runs alternate between the two artifacts. Each
run is decided at the thresholds given (kt_cli.reports.check.decide: a regression when the 95%
interval's low end exceeds 1 + the threshold). The raw samples (integer nanoseconds) and the GPU's
clocks (nvidia-smi, when present) before each run go into the JSON, so other decision rules can be
tried on the same measurements.

What a given --inject costs depends on the device, so --target-slowdown calibrates it where the runs
happen: the unchanged kernel and copies at a few inject values are measured side by side in fresh
worker processes (the same interleaved kernel/reference measurement kt check makes; the slowdown of a
copy is its kernel/reference ratio over the unchanged one's, measured in the same process), the inject
giving the target is interpolated, measured, and refined until it lands within --calibration-tolerance.
The slowdown the runs themselves measured is reported as well (median kernel time of the slowed runs
over that of the unchanged runs, and the same for the paired kernel/reference ratios).

Runs stop starting once --deadline-s has passed (the JSON is written after every pair of runs), so a
fixed-length job ends in time; --artifact reuses a tuned artifact (a directory or a --save-artifact
tarball) so that runs split over several jobs check the same artifact, and --merge adds up the runs
of several JSON files (the raw samples are left out of the merged file; they stay in the parts).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

ANCHOR = "    y = tl.load(y_ptr + offs, mask=mask)\n"
SLOWER = '''    y = tl.load(y_ptr + offs, mask=mask)
    if tl.program_id(0) % 1000 < PER_MILLE:  # injected: re-read x from half the vector away (extra DRAM traffic)
        far = tl.load(x_ptr + (offs + n // 2) % n, mask=mask)
        x = tl.where(far > 1e30, far, x)
'''


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def nvidia_smi(fields: str, units: bool = True) -> dict:
    """GPU 0's `fields` as nvidia-smi reports them (empty without nvidia-smi)."""
    form = "csv,noheader,nounits" if not units else "csv,noheader"
    try:
        line = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", f"--format={form}", "-i", "0"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    return dict(zip(fields.split(","), (v.strip() for v in line.split(",")))) if line else {}


def clocks() -> dict:
    """The GPU's clocks, power and throttle reasons now."""
    return nvidia_smi("clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active", units=False)


def gpu() -> dict:
    """Which physical GPU this is (name, UUID, serial, driver)."""
    return nvidia_smi("name,uuid,serial,driver_version,clocks.max.sm,power.limit")


def per_mille(inject: float) -> int:
    return max(0, min(1000, round(inject * 10)))


def slowed_copy(art: Path, where: Path, inject: float) -> Path:
    """A copy of the artifact whose kernel re-reads `inject` % of its x blocks from far away."""
    slow = where / f"slow_{per_mille(inject)}.kt"
    if slow.exists():
        return slow
    shutil.copytree(art, slow)
    manifest = json.loads((slow / "manifest.json").read_text())
    source = slow / manifest["kernel"]["source_file"]
    text = source.read_text()
    assert ANCHOR in text, "the kernel source no longer has the line the slowdown is injected after"
    source.write_text(text.replace(ANCHOR, SLOWER.replace("PER_MILLE", str(per_mille(inject)))))
    manifest["kernel"]["source_sha256"] = hashlib.sha256(source.read_bytes()).hexdigest()
    (slow / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return slow


def median(values: list[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def ratio_median(out: dict) -> float:
    """The median of the paired kernel/reference ratios of one measurement."""
    return median([k / b for k, b in zip(out["kernel"], out["baseline"]) if b > 0])


def measure(samples, manifest: dict) -> dict:
    """One kt check measurement of the artifact's first result in `samples`' worker."""
    return samples.samples(manifest, manifest["results"][0])


def one_run(manifest: dict, thresholds: list[float]) -> dict:
    """One run: one artifact measured in a fresh worker process, decided at each threshold."""
    from kt_cli.reports.check import LiveSamples, decide

    entry = manifest["results"][0]
    state, started, t0 = clocks(), now(), time.perf_counter()
    samples = LiveSamples()  # a fresh worker process per run, as each CI job's kt check has
    try:
        out = measure(samples, manifest)
    finally:
        samples.close()
    seconds = time.perf_counter() - t0
    if "kernel" not in out:
        return {"error": f"{out.get('failure_kind')}: {out.get('message')}", "started": started, "seconds": seconds}
    stats = entry["stats"]
    stored = stats.get("check_speedup") or stats["speedup"]
    verdicts = {t: decide(out["kernel"], out["baseline"], stored, t, out.get("blocks"),
                          stats.get("check_block_ratios")) for t in thresholds}
    first = verdicts[thresholds[0]]
    return {"started": started, "seconds": round(seconds, 2),
            "kernel_median": median(out["kernel"]), "baseline_median": median(out["baseline"]),
            "ratio_median": ratio_median(out), "slowdown": first.slowdown, "interval": [first.low, first.high],
            "verdicts": {str(t): v.status for t, v in verdicts.items()}, "clocks": state,
            "kernel_ns": [round(x * 1e9) for x in out["kernel"]],
            "baseline_ns": [round(x * 1e9) for x in out["baseline"]], "blocks": out.get("blocks")}


def calibrate(art: Path, work: Path, target: float, points: list[float], processes: int, tolerance: float,
              max_rounds: int, log) -> tuple[float, dict]:
    """The inject (percent) whose copy measures `target` slower than the unchanged kernel on this device.

    Each measured point: `processes` fresh worker processes, each measuring the unchanged artifact and the
    copy (order alternating), slowdown = median over processes of (copy's ratio / unchanged ratio)."""
    from kt_cli.artifact import store as artifact
    from kt_cli.reports.check import LiveSamples

    unchanged = artifact.read(art)
    measured: dict[int, dict] = {}

    def measure_points(injects: list[float]) -> None:
        copies = {per_mille(i): artifact.read(slowed_copy(art, work, i)) for i in injects}
        per = {pm: [] for pm in copies}
        for rep in range(processes):
            order = [None, *copies] if rep % 2 == 0 else [*reversed(list(copies)), None]
            samples = LiveSamples()
            try:
                ratios = {}
                for pm in order:
                    out = measure(samples, unchanged if pm is None else copies[pm])
                    if "kernel" not in out:
                        raise SystemExit(f"calibration: {out.get('failure_kind')}: {out.get('message')}")
                    ratios[pm] = ratio_median(out)
            finally:
                samples.close()
            for pm in copies:
                per[pm].append(ratios[pm] / ratios[None] - 1)
        for pm, values in per.items():
            measured[pm] = {"inject": pm / 10, "slowdown": median(values), "per_process": values}
            log(f"calibration: inject {pm / 10:g}% -> {median(values):+.2%} (per process "
                f"{', '.join(f'{v:+.2%}' for v in values)})")

    def estimate() -> float:
        """Linear interpolation between the measured points that bracket the target ((0, 0) included);
        beyond them, the line through the two nearest."""
        pts = sorted([(0.0, 0.0)] + [(m["inject"], m["slowdown"]) for m in measured.values()])
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            if y0 <= target <= y1 and y1 > y0:
                return x0 + (target - y0) * (x1 - x0) / (y1 - y0)
        near = sorted(pts, key=lambda p: abs(p[1] - target))[:2]
        (x0, y0), (x1, y1) = sorted(near)
        if y1 <= y0:
            raise SystemExit(f"calibration: the slowdown does not grow with inject ({pts}); cannot reach {target:.1%}")
        return x0 + (target - y0) * (x1 - x0) / (y1 - y0)

    measure_points(points)
    rounds = []
    for _ in range(max_rounds):
        guess = min(100.0, max(0.1, estimate()))
        pm = per_mille(guess)
        if pm not in measured:
            measure_points([pm / 10])
        rounds.append({"estimate": guess, "measured": measured[pm]["slowdown"]})
        if abs(measured[pm]["slowdown"] - target) <= tolerance:
            break
    best = min(measured.values(), key=lambda m: abs(m["slowdown"] - target))
    return best["inject"], {"target": target, "tolerance": tolerance, "processes": processes,
                            "points": sorted(measured.values(), key=lambda m: m["inject"]), "rounds": rounds,
                            "chosen": best["inject"], "chosen_measured": best["slowdown"]}


def load_artifact(spec: str, work: Path) -> Path:
    """An artifact directory, or one packed by --save-artifact (a .tar.gz holding NAME.kt/)."""
    path = Path(spec)
    if path.is_dir():
        dest = work / path.name
        shutil.copytree(path, dest)
        return dest
    with tarfile.open(path) as tar:
        tar.extractall(work / "given", filter="data")
    found = [p.parent for p in (work / "given").rglob("manifest.json")]
    if len(found) != 1:
        raise SystemExit(f"--artifact {spec}: expected one artifact (manifest.json) inside, found {len(found)}")
    return found[0]


def summarize(runs: dict, thresholds: list[str]) -> dict:
    """Flags per arm and threshold, and the slowdown the runs themselves measured."""
    flagged = {name: {t: sum(r.get("verdicts", {}).get(t) == "regression" for r in rs) for t in thresholds}
               for name, rs in runs.items()}
    done = {name: [r for r in rs if "kernel_median" in r] for name, rs in runs.items()}
    out = {"runs": {name: len(rs) for name, rs in done.items()},
           "errors": {name: sum("error" in r for r in rs) for name, rs in runs.items()},
           "regressions_flagged": flagged}
    if done["unchanged"] and done["slowed"]:
        out["injected_slowdown"] = (median([r["kernel_median"] for r in done["slowed"]])
                                    / median([r["kernel_median"] for r in done["unchanged"]]) - 1)
        out["injected_slowdown_paired"] = (median([r["ratio_median"] for r in done["slowed"]])
                                           / median([r["ratio_median"] for r in done["unchanged"]]) - 1)
        for name, rs in done.items():
            s = sorted(r["slowdown"] for r in rs)
            lows = sorted(r["interval"][0] for r in rs)
            out[f"{name}_slowdown_range"] = [s[0], s[-1]]
            out[f"{name}_interval_low_range"] = [lows[0], lows[-1]]
    return out


def merge(parts: list[str], out_path: str) -> None:
    reports = [json.loads(Path(p).read_text()) for p in parts]
    thresholds = list(reports[0]["thresholds"])
    runs = {"unchanged": [], "slowed": []}
    for i, rep in enumerate(reports):
        for name in runs:
            for r in rep["detail"][name]:
                runs[name].append({**{k: v for k, v in r.items() if k not in ("kernel_ns", "baseline_ns")},
                                   "part": i})
    merged = {"merged_from": [Path(p).name for p in parts], "thresholds": thresholds, **summarize(runs, thresholds),
              "parts": [{"file": Path(p).name, "date": rep.get("date"), "gpu": rep.get("gpu"),
                         "inject": rep["inject"], "calibration": rep.get("calibration"),
                         "shape": rep.get("shape"), "params": rep.get("params"),
                         "stored_speedup": rep.get("stored_speedup"),
                         **{k: v for k, v in summarize(rep["detail"], thresholds).items()}}
                        for p, rep in zip(parts, reports)],
              "detail": runs}
    Path(out_path).write_text(json.dumps(merged, indent=1))
    print(json.dumps({k: v for k, v in merged.items() if k != "detail"}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of each artifact (at most; see --deadline-s)")
    parser.add_argument("--thresholds", default="0.02,0.03,0.05")
    parser.add_argument("--inject", type=float, help="x blocks re-read from far away, in percent of the programs "
                                                     "(0.1 steps); without it, 16, or calibrated by --target-slowdown")
    parser.add_argument("--target-slowdown", type=float, help="calibrate --inject on this device to this slowdown")
    parser.add_argument("--calibration-points", default="8,24", help="inject values measured first")
    parser.add_argument("--calibration-processes", type=int, default=3)
    parser.add_argument("--calibration-tolerance", type=float, default=0.002)
    parser.add_argument("--calibration-rounds", type=int, default=3)
    parser.add_argument("--deadline-s", type=float, default=0, help="start no run pair after this many seconds")
    parser.add_argument("--artifact", help="check this tuned artifact (directory or --save-artifact tarball)")
    parser.add_argument("--save-artifact", help="pack the tuned artifact into this .tar.gz")
    parser.add_argument("--recipe", default=str(ROOT / "recipes" / "dsl_example.toml"))
    parser.add_argument("--tune-trials", type=int, default=4)
    parser.add_argument("--merge", nargs="+", help="add up these JSON files of earlier runs into --json")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    if args.merge:
        merge(args.merge, args.json)
        return

    from kt_cli.artifact import store as artifact
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.tune import tune

    began = time.perf_counter()
    deadline = began + args.deadline_s if args.deadline_s else float("inf")

    def log(text: str) -> None:
        print(f"[{time.perf_counter() - began:6.1f} s] {text}", flush=True)

    work = Path(tempfile.mkdtemp())
    if args.artifact:
        path = load_artifact(args.artifact, work)
    else:
        path, _, _ = tune(load_recipe(args.recipe), trials=args.tune_trials, out_dir=work / "tuned")
        log(f"tuned {path}")
    if args.save_artifact:
        with tarfile.open(args.save_artifact, "w:gz") as tar:
            tar.add(path, arcname=path.name)
    thresholds = [float(t) for t in args.thresholds.split(",")]
    calibration = None
    inject = args.inject
    if inject is None and args.target_slowdown is not None:
        inject, calibration = calibrate(path, work, args.target_slowdown,
                                        [float(p) for p in args.calibration_points.split(",")],
                                        args.calibration_processes, args.calibration_tolerance,
                                        args.calibration_rounds, log)
        log(f"calibrated: inject {inject:g}%")
    inject = 16.0 if inject is None else inject
    arts = {"unchanged": artifact.read(path), "slowed": artifact.read(slowed_copy(path, work, inject))}
    entry = arts["unchanged"]["results"][0]
    stats = entry["stats"]
    report = {"date": now(), "gpu": gpu(), "command": " ".join(["python benchmarks/check_detection.py", *sys.argv[1:]]),
              "thresholds": [str(t) for t in thresholds], "inject": per_mille(inject) / 10,
              "calibration": calibration, "shape": entry["shape_key"], "params": entry["params"],
              "method": stats.get("method"), "stored_speedup": stats.get("check_speedup"),
              "stored_block_ratios": stats.get("check_block_ratios"), "setup_s": time.perf_counter() - began}
    runs = {name: [] for name in arts}
    pair_s = 0.0
    for i in range(args.runs):
        if time.perf_counter() + pair_s > deadline:
            log(f"deadline: stopping after {i} pairs")
            break
        t0 = time.perf_counter()
        for name in (list(arts) if i % 2 == 0 else list(arts)[::-1]):
            runs[name].append(one_run(arts[name], thresholds))
        pair_s = max(pair_s, time.perf_counter() - t0)
        report.update(summarize(runs, report["thresholds"]))
        report["detail"] = runs
        Path(args.json).write_text(json.dumps(report, separators=(",", ":")))
        last = {n: rs[-1] for n, rs in runs.items()}
        log(f"pair {i + 1}: " + "; ".join(
            f"{n} {r['slowdown']:.4f} [{r['interval'][0]:.4f}, {r['interval'][1]:.4f}] {r['seconds']:.1f} s"
            if "slowdown" in r else f"{n} {r.get('error')}" for n, r in last.items()))
    report["wall_s"] = time.perf_counter() - began
    report["detail"] = runs
    report.update(summarize(runs, report["thresholds"]))
    Path(args.json).write_text(json.dumps(report, separators=(",", ":")))
    print(json.dumps({k: v for k, v in report.items() if k != "detail"}, indent=1))


if __name__ == "__main__":
    main()
