"""How often `kt check` catches a real slowdown, and how often it cries wolf, on a GPU.

    python benchmarks/check_detection.py --runs 20 --json OUT.json

Tunes recipes/dsl_example.toml (a memory-bound kernel), then makes a second artifact whose kernel
re-reads 15% of its x blocks from a far-away address: about 5% more DRAM traffic, a real slowdown in
the kernel itself (same manifest, so the same stored kernel/reference ratio, source re-signed). Each
run is one check's measurement of one artifact (verification, then 100 interleaved kernel/reference
pairs, in a worker process); runs alternate between the two artifacts. Each run is decided at the
thresholds given (kt_cli.check.decide: a regression when the 95% interval's low end exceeds 1 + the
threshold).
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
    if tl.program_id(0) % 20 < 3:  # injected: re-read x from half the vector away (extra DRAM traffic)
        far = tl.load(x_ptr + (offs + n // 2) % n, mask=mask)
        x = tl.where(far > 1e30, far, x)
'''


def slowed_copy(art: Path, where: Path) -> Path:
    slow = where / "slow.kt"
    shutil.copytree(art, slow)
    manifest = json.loads((slow / "manifest.json").read_text())
    source = slow / manifest["kernel"]["source_file"]
    text = source.read_text()
    assert "    y = tl.load(y_ptr + offs, mask=mask)\n" in text
    source.write_text(text.replace("    y = tl.load(y_ptr + offs, mask=mask)\n", SLOWER))
    manifest["kernel"]["source_sha256"] = hashlib.sha256(source.read_bytes()).hexdigest()
    (slow / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return slow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--thresholds", default="0.02,0.05")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    from kt_cli import artifact
    from kt_cli.check import LiveSamples, decide
    from kt_cli.recipe import load_recipe
    from kt_cli.tune import tune

    work = Path(tempfile.mkdtemp())
    path, _, _ = tune(load_recipe(ROOT / "recipes" / "dsl_example.toml"), trials=4, out_dir=work)
    arts = {"unchanged": artifact.read(path), "slowed": artifact.read(slowed_copy(path, work))}
    thresholds = [float(t) for t in args.thresholds.split(",")]
    samples = LiveSamples()
    runs = {name: [] for name in arts}
    try:
        for _ in range(args.runs):
            for name, manifest in arts.items():
                entry = manifest["results"][0]
                out = samples.samples(manifest, entry)
                if "kernel" not in out:
                    runs[name].append({"error": out.get("message")})
                    continue
                stored = entry["stats"].get("check_speedup") or entry["stats"]["speedup"]
                verdicts = {t: decide(out["kernel"], out["baseline"], stored, t) for t in thresholds}
                runs[name].append({"kernel_median": sorted(out["kernel"])[len(out["kernel"]) // 2],
                                   "slowdown": verdicts[thresholds[0]].slowdown,
                                   "verdicts": {str(t): v.status for t, v in verdicts.items()}})
    finally:
        samples.close()
    summary = {name: {str(t): sum(r.get("verdicts", {}).get(str(t)) == "regression" for r in rs) for t in thresholds}
               for name, rs in runs.items()}
    medians = {name: sorted(r["kernel_median"] for r in rs if "kernel_median" in r) for name, rs in runs.items()}
    injected = medians["slowed"][len(medians["slowed"]) // 2] / medians["unchanged"][len(medians["unchanged"]) // 2] - 1
    report = {"runs": args.runs, "regressions_flagged": summary, "injected_slowdown": injected, "detail": runs,
              "shape": arts["unchanged"]["results"][0]["shape_key"]}
    Path(args.json).write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "detail"}, indent=1))


if __name__ == "__main__":
    main()
