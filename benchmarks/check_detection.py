"""How often `kt check` catches a real slowdown, and how often it cries wolf, on a GPU.

    python benchmarks/check_detection.py --runs 20 --json OUT.json

Tunes recipes/dsl_example.toml (a memory-bound kernel), then makes a second artifact whose kernel
re-reads a fraction of its x blocks (--inject, default 16 in 100) from a far-away address: more DRAM
traffic, a real slowdown in the kernel itself (same manifest, so the same stored kernel/reference
ratio, source re-signed). Each run is one check's measurement of one artifact in a fresh worker
process, as each CI job's `kt check` is (verification, then kt_cli.reports.check.BLOCKS blocks of ROUNDS
interleaved kernel/reference pairs); runs alternate between the two artifacts. Each run is decided at
the thresholds given (kt_cli.reports.check.decide: a regression when the 95% interval's low end exceeds
1 + the threshold). The raw samples and the GPU's clocks (nvidia-smi, when present) before each run go
into the JSON, so other decision rules can be tried on the same measurements.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

SLOWER = '''    y = tl.load(y_ptr + offs, mask=mask)
    if tl.program_id(0) % 100 < INJECT:  # injected: re-read x from half the vector away (extra DRAM traffic)
        far = tl.load(x_ptr + (offs + n // 2) % n, mask=mask)
        x = tl.where(far > 1e30, far, x)
'''


def clocks() -> dict:
    """The GPU's clocks, power and throttle reasons now (empty without nvidia-smi)."""
    import subprocess

    fields = "clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active"
    try:
        line = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-i", "0"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    return dict(zip(fields.split(","), (v.strip() for v in line.split(","))))


def slowed_copy(art: Path, where: Path, inject: int) -> Path:
    slow = where / "slow.kt"
    shutil.copytree(art, slow)
    manifest = json.loads((slow / "manifest.json").read_text())
    source = slow / manifest["kernel"]["source_file"]
    text = source.read_text()
    assert "    y = tl.load(y_ptr + offs, mask=mask)\n" in text
    source.write_text(text.replace("    y = tl.load(y_ptr + offs, mask=mask)\n", SLOWER.replace("INJECT", str(inject))))
    manifest["kernel"]["source_sha256"] = hashlib.sha256(source.read_bytes()).hexdigest()
    (slow / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return slow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--thresholds", default="0.02,0.05")
    parser.add_argument("--inject", type=int, default=16, help="x blocks in 100 re-read from far away")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    from kt_cli.artifact import store as artifact
    from kt_cli.reports.check import LiveSamples, decide
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.tune import tune

    work = Path(tempfile.mkdtemp())
    path, _, _ = tune(load_recipe(ROOT / "recipes" / "dsl_example.toml"), trials=4, out_dir=work)
    arts = {"unchanged": artifact.read(path), "slowed": artifact.read(slowed_copy(path, work, args.inject))}
    thresholds = [float(t) for t in args.thresholds.split(",")]
    runs = {name: [] for name in arts}
    for i in range(args.runs):
        for name in (list(arts) if i % 2 == 0 else list(arts)[::-1]):
            manifest = arts[name]
            entry = manifest["results"][0]
            state = clocks()
            samples = LiveSamples()  # a fresh worker process per run, as each CI job's kt check has
            try:
                out = samples.samples(manifest, entry)
            finally:
                samples.close()
            if "kernel" not in out:
                runs[name].append({"error": out.get("message")})
                continue
            stats = entry["stats"]
            stored = stats.get("check_speedup") or stats["speedup"]
            verdicts = {t: decide(out["kernel"], out["baseline"], stored, t, out.get("blocks"),
                                  stats.get("check_block_ratios")) for t in thresholds}
            runs[name].append({"kernel_median": sorted(out["kernel"])[len(out["kernel"]) // 2],
                               "baseline_median": sorted(out["baseline"])[len(out["baseline"]) // 2],
                               "slowdown": verdicts[thresholds[0]].slowdown,
                               "interval": [verdicts[thresholds[0]].low, verdicts[thresholds[0]].high],
                               "verdicts": {str(t): v.status for t, v in verdicts.items()}, "clocks": state,
                               "kernel": out["kernel"], "baseline": out["baseline"], "blocks": out.get("blocks")})
    summary = {name: {str(t): sum(r.get("verdicts", {}).get(str(t)) == "regression" for r in rs) for t in thresholds}
               for name, rs in runs.items()}
    medians = {name: sorted(r["kernel_median"] for r in rs if "kernel_median" in r) for name, rs in runs.items()}
    injected = medians["slowed"][len(medians["slowed"]) // 2] / medians["unchanged"][len(medians["unchanged"]) // 2] - 1
    stats = arts["unchanged"]["results"][0]["stats"]
    report = {"runs": args.runs, "regressions_flagged": summary, "injected_slowdown": injected, "inject": args.inject,
              "stored_speedup": stats.get("check_speedup"), "stored_block_ratios": stats.get("check_block_ratios"),
              "detail": runs, "shape": arts["unchanged"]["results"][0]["shape_key"]}
    Path(args.json).write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "detail"}, indent=1))


if __name__ == "__main__":
    main()
