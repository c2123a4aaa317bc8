"""Turn benchmark JSON files (benchmarks/run.py) into BENCHMARKS.md on standard output.

    python benchmarks/report.py RUN.json [RUN2.json:kernel,kernel ...]

`FILE:a,b` renders only recipes a and b of that run (a later run superseded the others)."""

from __future__ import annotations

import json
import sys


def _found(k: dict, r: dict) -> str:
    found = (k.get("found_s") or {}).get(r["shape_key"])
    within = (k.get("within_2pct_s") or {}).get(r["shape_key"])
    text = "" if found is None else f", its best (within 1%) found {found:.1f} s into the run"
    text += "" if within is None else f" (within 2%: {within:.1f} s)"
    if r["shape_key"] in (k.get("reached_autotune_s") or {}):
        reached = k["reached_autotune_s"][r["shape_key"]]
        text += ("; autotune's time never reached" if reached is None
                 else f"; autotune's time reached {reached:.1f} s in")
    return text


def _us(s):
    return "-" if s is None else (f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.3f} ms")


def _ratio(a, b):
    return "-" if not a or not b else f"{a / b:.2f}×"


def load(arg: str) -> dict:
    path, _, only = arg.partition(":")
    report = json.loads(open(path).read())
    if only:
        keep = set(only.split(","))
        report["kernels"] = [k for k in report["kernels"] if k["recipe"] in keep]
    return report


def render(reports: list[dict]) -> str:
    lines = ["# kt benchmarks", "",
             "Every figure below comes from the run named above its table; ratios compare times measured",
             "in that same run (absolute times drift on shared machines). `× eager` = torch eager time / kt",
             "time (> 1: kt is faster). `% copy BW` = the kernel's minimal bytes / time against the copy",
             "bandwidth measured in the same run; `% peak` uses kt's datasheet peak table.", ""]
    for rep in reports:
        env, ceil = rep["environment"], rep["ceilings"]
        lines += [f"## {env['device']} ({env['target']}) — {env['date']}", "",
                  f"torch {env['torch']}, triton {env['triton']}, CUDA {env['cuda']}, driver {env['driver']}, "
                  f"kt {env['kt']}.", "", f"    {rep['command']}", "",
                  f"Measured ceilings: copy {ceil['copy_bytes_per_s'] / 1e12:.2f} TB/s, bf16 GEMM (torch.matmul "
                  f"8192³) {ceil['bf16_gemm_flops_per_s'] / 1e12:.0f} TFLOP/s.", "",
                  "| kernel | problem | dtype | kt time | × eager | × torch.compile | % copy BW | TFLOP/s | % peak "
                  "| tuned in | trials | device busy | best params |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        notes = []
        for k in rep["kernels"]:
            if "error" in k:
                lines.append(f"| {k['recipe']} | - | - | failed: {k['error'][:80]} |||||||||")
                continue
            anchors = {a["shape"]: a for a in k.get("anchors", [])}
            for r in k["results"]:
                stats, anchor = r["stats"], anchors.get(r["shape_key"], {})
                t = r["seconds"]
                bw = stats.get("bytes_per_s")
                copy_frac = f"{bw / ceil['copy_bytes_per_s']:.0%}" if bw and t else "-"
                lines.append(
                    f"| {k['recipe']} | {r['shape_key']} | {k['dtype']} | {_us(t)} | {_ratio(anchor.get('eager_s'), t)} "
                    f"| {_ratio(anchor.get('compile_s'), t)} | {copy_frac} | "
                    f"{(stats.get('flops_per_s') or 0) / 1e12:.1f} | "
                    f"{'-' if stats.get('fraction_of_peak') is None else format(stats['fraction_of_peak'], '.0%')} "
                    f"| {k['wall_s']:.0f} s | {k['evaluated']} | {k['device_busy']:.0%} | "
                    f"{' '.join(f'{a}={b}' for a, b in (r['params'] or {}).items())} |")
                if "autotune" in anchor:
                    at = anchor["autotune"]
                    notes.append(f"- {k['recipe']} {r['shape_key']}: Triton autotune (tutorial list, 8 configs) "
                                 f"{_us(at['median_s'])} after {at['tuning_wall_s']:.1f} s of tuning; kt "
                                 f"{_us(t)} ({_ratio(at['median_s'], t)} autotune) after {k['wall_s']:.0f} s for "
                                 f"all of the recipe's problems{_found(k, r)}.")
                for prof in r.get("profile") or []:
                    c = prof["counters"]
                    if "error" in c:
                        notes.append(f"- ncu, {k['recipe']} {r['shape_key']}: {c['error'][:120]}")
                        continue
                    notes.append(f"- ncu, {k['recipe']} {r['shape_key']} (best config): kernel "
                                 f"{c.get('duration_ns', 0) / 1e3:.1f} µs, occupancy {c.get('achieved_occupancy_pct', 0):.0f}%, "
                                 f"DRAM {c.get('dram_throughput_pct', 0):.0f}%, L2 {c.get('l2_throughput_pct', 0):.0f}%, "
                                 f"SM {c.get('sm_throughput_pct', 0):.0f}%, tensor pipe {c.get('tensor_pipe_pct', 0):.0f}%; "
                                 f"top stalls: {', '.join(c.get('top_stalls', []))}")
            for s in k.get("stability", []):
                ratio = (f" (× eager: {min(s['ratios']):.2f}–{max(s['ratios']):.2f}, spread {s['ratio_spread']:.1%})"
                         if s.get("ratios") else "")
                notes.append(f"- stability, {k['recipe']} {s['shape']}: best config in {len(s['medians'])} fresh "
                             f"processes spread {s['spread']:.1%} median to median{ratio}.")
        lines += [""] + notes + [""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(render([load(arg) for arg in sys.argv[1:]]))
