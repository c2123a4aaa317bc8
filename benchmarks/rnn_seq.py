"""Issue 19: the sequence-fused LSTM/GRU of kt's library (lstm_seq, gru_seq, and the multi-head
lstm_heads, gru_heads) on a GPU, against torch.

    python benchmarks/rnn_seq.py --json OUT.json            # on the GPU (about 3-4 minutes)
    python benchmarks/rnn_seq.py --kernels lstm_heads,gru_heads --json OUT.json  # the multi-head kernels
    python benchmarks/rnn_seq.py --dry-run --json OUT.json  # on a CPU: tiny shapes, static mode, interpreter

The multi-head kernels (NH heads of DH units, W_hh block-diagonal: FlashRNN's heads) run T = 1024, B in
{1, 16}, (NH, DH) in {(4, 64), (16, 64)}, I = NH * DH, against the same torch modules holding the
block-diagonal W_hh (the kernel module's block_diagonal): cuDNN's sequence op and the per-step cell loop,
both doing NH times the heads' recurrent FLOPs, which is what a user without such a kernel runs.

Problems: T = 1024 steps, B in {1, 16}, H in {256, 1024}, I = H, bfloat16 (the recipes' dtype; the
kernels also take float16 and float32). Layout (T, B, I) (batch_first=False), torch's gate order
(LSTM i, f, g, o; GRU r, z, n), both biases, initial state h0 (and c0): exactly what torch.nn.LSTM and
torch.nn.GRU compute, so the anchors run on the very same tensors without any permutation.

Per kernel: a temporary recipe of every problem is tuned by kt (measured mode, `--trials` per problem,
both designs (GRID 0 and 1) in a space narrowed to BLOCK_B = 16, the only useful batch tile at B <= 16;
tl.dot's 16 rows serve B = 1 too, masked).
Then, in this process and with kt's own timer (device events, L2 flush, graph replay under 200 us):
- kt: the artifact's winner through `kt_cli.load`;
- cudnn: torch.nn.LSTM / nn.GRU (flattened weights copied from the kernel's inputs), eager; which
  kernels it ran (cuDNN or not) is read once with torch.profiler and recorded;
- loop: a per-step eager loop of nn.LSTMCell / nn.GRUCell (2 GEMMs + a fused pointwise kernel + a copy
  into y per step). Its time INCLUDES the host's launch overhead of ~4096 launches: that is what the
  anchor stands for (what a user's Python loop costs), not the GPU's work alone.
Outputs are compared (kt vs torch, both vs the float64 reference) so the timings are of equal work;
a mismatch is recorded and makes the script exit 1 after the JSON is written.

Why the kernels have two designs: the first-principles estimate made for GRID = 0 alone (B = 16, H = I =
1024, T = 1024, LSTM, H100 SXM), which led to GRID = 1 (measured since: BENCHMARKS.md, 2026-11-26):
- Programs: cdiv(B, BLOCK_B) with BLOCK_B >= 16, i.e. ONE program: one SM of 132 does all the work.
- Per step that program streams all of W_ih and W_hh (4H x (I + H) x 2 B = 16 MiB; 8 MiB of it
  recurrent) from L2 (they fit in the 50 MiB L2, so not HBM after step 0; 256 KiB of SM-local
  storage cannot hold them). One SM pulls at most ~64 B/clk from L2, ~110-130 GB/s: >= 130 us per
  step. Compute agrees: 2*16*4096*2048 = 268 MFLOP per step at ~7.5 TFLOP/s per SM (989/132, less
  with mma.sync at M = 16) is >= 36 us. Lower bound ~130 us/step, i.e. >= ~130 ms per sequence.
  (GRU: 3/4 of that. H = 256: 1 MiB/step, >= ~8-10 us/step, ~10 ms per sequence.)
- cuDNN: PyTorch picks CUDNN_RNN_ALGO_STANDARD for bf16 (its persistent algorithm only for fp16): one
  GEMM for the input projection of all T steps (137 GFLOP, ~0.3 ms), then per step one small GEMM
  with W_hh read by all SMs from L2 (8 MiB at ~5 TB/s: ~2 us) plus a pointwise kernel, ~6-12 us per
  step (launch-latency bound): ~6-12 ms per sequence. The per-step loop: ~4 launches per step at
  ~6-10 us of host time each, ~25-40 ms per sequence.
- So at B = 16, H = 1024 the current kernel is expected ~10-20x SLOWER than cuDNN and ~0.2-0.3x the
  loop; at H = 256 about cuDNN's speed and ~3x the loop. The design cannot meet issue 19
  (>= 20x loop needs <= ~1.5-2 us per step; >= 1.2x cuDNN needs <= ~5-10 us per step): the
  bound is structural (one SM, weights re-streamed every step), not a tuning matter.
- A design that could: (1) hoist the input projection out of the recurrence (one GEMM
  Gx = X W_ih^T + b over all T, ~0.3 ms); (2) a persistent recurrent kernel of P <= #SMs programs, each
  owning H/P hidden columns of all gates, loading its W_hh slice (4H/P x H: 64 KiB at P = 128) into
  registers/shared memory ONCE before the time loop and keeping c in registers; per step it reads all
  of h_{t-1} (B x H, 32 KiB) from L2 (.cg loads, past the non-coherent L1), computes its gates, writes
  its slice of h_t, then a grid barrier (a monotone counter: atomic add with release, spin until it
  reaches P*(t+1) with acquire). Estimate ~1 us barrier + ~0.5-1 us h read + ~0.2 us math: ~2 us per
  step, ~2-2.5 ms per sequence: ~3-5x cuDNN, ~15-20x the loop (the 20x is borderline). All P
  programs must be co-resident (Triton has no cooperative launch): a constraint PROGRAMS <= sm_count
  with one CTA per SM (resources checked), and a bounded spin that sets an error flag rather than hang.
  At H = 256, fewer programs (8-16) or one thread-block cluster with its hardware barrier.
- Verifying it on a CPU: the interpreter runs programs one after another, so program 0 would spin
  forever at step 0. Give the kernel (t_start, t_end) and a constexpr GRID_SYNC: under the interpreter
  the launch function runs one launch per step with the barrier compiled out (the launch boundary is
  the barrier): same math and indexing, P > 1; and a P = 1 fused launch (the barrier satisfied by the
  program itself) checks the in-kernel time loop. The barrier's memory ordering can only be verified
  on the device (kt's measured verification at the real shape, and a long-T stress test).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins"), str(ROOT / "benchmarks")]

KERNELS = ("lstm_seq", "gru_seq")
HEADS = ("lstm_heads", "gru_heads")  # W_hh [NH, gates * DH, DH]: the torch modules get it block-diagonal
DTYPE = "bfloat16"
GPU_PROBLEMS = [{"T": 1024, "B": b, "H": h, "I": h} for h in (256, 1024) for b in (1, 16)]
DRY_PROBLEMS = [{"T": 3, "B": b, "H": 32, "I": 32} for b in (1, 16)]
GPU_HEAD_PROBLEMS = [{"T": 1024, "B": b, "NH": nh, "DH": 64, "I": nh * 64} for nh in (4, 16) for b in (1, 16)]
DRY_HEAD_PROBLEMS = [{"T": 3, "B": b, "NH": 2, "DH": 16, "I": 32} for b in (1, 16)]
TUNED_SPACE = {"GRID": [0, 1], "BLOCK_B": [16], "BLOCK_H": [8, 16, 32, 64, 128], "BLOCK_K": [32, 64, 128],
               "num_warps": [4, 8], "num_stages": [1, 2, 3]}
TUNED_HEADS_SPACE = {"BLOCK_B": [16], "num_warps": [2, 4, 8], "num_stages": [1, 2, 3]}
MATCH_MAX_ABS = 0.0625  # 8 bf16 ulps at 1.0, scaled by max(1, max|ref|): 1024 steps of bf16 state feedback
MATCH_RMS = 2e-2  # RMS of (kt - torch) over RMS(ref): both carry bf16 rounding (kernel TOLERANCE: 1.6e-2 each)
TIMER_MAX_SECONDS = 1.0  # the timer's cap per measurement (it still takes >= 20 samples)


def recipe_text(name: str, shapes: list[dict], trials: int, target: str) -> str:
    shapes_toml = ", ".join("{" + ", ".join(f"{k} = {v}" for k, v in s.items()) + "}" for s in shapes)
    space = "\n".join(f"{k} = {v}" for k, v in (TUNED_HEADS_SPACE if name in HEADS else TUNED_SPACE).items())
    return (f'[kernel]\ngenerator = "templates"\nname = "{name}"\n\n'
            f'[problem]\ndtype = "{DTYPE}"\nshapes = [{shapes_toml}]\n\n'
            f"[search]\ntrials = {trials}\nseed = 0\ntimeout = 120\nshortlist = 2\n\n"
            f"[search.space]\n{space}\n\n[targets]\nnames = [\"{target}\"]\n")


def tune_kernel(name: str, shapes: list[dict], trials: int, out: Path, target: str) -> dict:
    """kt tune of a temporary recipe of `shapes` (measured on a GPU, estimated without one)."""
    from run import trial_summary

    from kt_cli.recipe.parse import load_recipe
    from kt_cli.tune import tune

    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}_bench.toml"
    path.write_text(recipe_text(name, shapes, trials, target))
    started = time.perf_counter()
    artifact, _, tally = tune(load_recipe(path), trials=trials, out_dir=out)
    manifest = json.loads((artifact / "manifest.json").read_text())
    results = [{"shape": r["shape_key"], "mode": r.get("mode"), "params": r.get("params"), "seconds": r.get("seconds"),
                "speedup_vs_baseline": (r.get("stats") or {}).get("speedup")} for r in manifest["results"]]
    return {"artifact": str(artifact), "wall_s": time.perf_counter() - started, "evaluated": tally.done,
            "results": results, "trials": trial_summary(artifact)}


class WallTimer:
    """The dry run's stand-in for kt's device timer (no GPU): median of a few host-timed calls."""

    def measure(self, fn, calls: int = 3):
        from types import SimpleNamespace

        fn()
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - started)
        return SimpleNamespace(median=sorted(samples)[len(samples) // 2], method="host-wall", calls=calls)


def make_timer(dry_run: bool):
    if dry_run:
        return WallTimer()
    from anchors import _timer

    timer = _timer()
    timer.max_seconds = TIMER_MAX_SECONDS  # T = 1024 calls take ms each: 20 samples reach any CI anyway
    return timer


def is_lstm(name: str) -> bool:
    return name.startswith("lstm")


def torch_weights(name: str, inputs: dict) -> dict:
    """The kernel's weights as torch's modules hold them: a multi-head kernel's W_hh made block-diagonal."""
    weights = {n: inputs[n] for n in ("w_ih", "w_hh", "b_ih", "b_hh")}
    if name in HEADS:
        from kt_cli.kernel import import_module

        module = import_module(str(ROOT / "plugins" / "kt_templates" / "kernels" / f"{name}.py"))
        weights["w_hh"] = module.block_diagonal(inputs["w_hh"])
    return weights


def torch_module(name: str, inputs: dict, cell: bool):
    """nn.LSTM / nn.GRU (or their Cell) holding the kernel's weights, on the inputs' device and dtype."""
    import torch

    hidden, features = inputs["h0"].shape[1], inputs["x"].shape[2]
    kind = {(True, False): torch.nn.LSTM, (False, False): torch.nn.GRU,
            (True, True): torch.nn.LSTMCell, (False, True): torch.nn.GRUCell}[(is_lstm(name), cell)]
    module = kind(features, hidden, device=inputs["x"].device, dtype=inputs["x"].dtype)
    suffix = "" if cell else "_l0"
    with torch.no_grad():
        for n, value in torch_weights(name, inputs).items():
            getattr(module, n.replace("w_", "weight_").replace("b_", "bias_") + suffix).copy_(value)
    if not cell:
        module.flatten_parameters()
    return module.requires_grad_(False)


def sequence_call(name: str, inputs: dict, out: dict):
    """nn.LSTM / nn.GRU on the whole sequence (cuDNN on CUDA); results land in `out`."""
    module = torch_module(name, inputs, cell=False)
    state = (inputs["h0"][None], inputs["c0"][None]) if is_lstm(name) else inputs["h0"][None]

    def call():
        y, last = module(inputs["x"], state)
        out.update(y=y, h_n=(last[0] if is_lstm(name) else last)[0])
        if is_lstm(name):
            out["c_n"] = last[1][0]
    return call


def step_loop_call(name: str, inputs: dict, out: dict):
    """The eager per-step loop: one LSTMCell / GRUCell call per step, h written into y[t]."""
    import torch

    cell = torch_module(name, inputs, cell=True)
    x = inputs["x"]
    y = torch.empty(x.shape[0], x.shape[1], inputs["h0"].shape[1], dtype=x.dtype, device=x.device)

    def call():
        h, c = inputs["h0"], inputs.get("c0")
        for t in range(x.shape[0]):
            if is_lstm(name):
                h, c = cell(x[t], (h, c))
            else:
                h = cell(x[t], h)
            y[t] = h
        out.update(y=y, h_n=h, **({"c_n": c} if is_lstm(name) else {}))
    return call


def kt_call(tuned, inputs: dict):
    return lambda: tuned(inputs)


def errors(name: str, kt_out: dict, torch_out: dict, ref: dict) -> dict:
    """kt vs torch (max |diff| and RMS over RMS(ref)), and each one's RMS error against float64."""
    def rms(t):
        return float(t.double().pow(2).mean().sqrt())

    names = ("y", "h_n", "c_n") if is_lstm(name) else ("y", "h_n")
    out = {"match": True}
    for n in names:
        scale, ref_rms = max(1.0, float(ref[n].abs().max())), max(rms(ref[n]), 1e-30)
        diff = kt_out[n].double() - torch_out[n].double()
        row = {"max_abs_kt_vs_torch": float(diff.abs().max()), "rms_kt_vs_torch": rms(diff) / ref_rms,
               "rms_kt_vs_ref": rms(kt_out[n].double() - ref[n]) / ref_rms,
               "rms_torch_vs_ref": rms(torch_out[n].double() - ref[n]) / ref_rms}
        row["match"] = row["max_abs_kt_vs_torch"] <= MATCH_MAX_ABS * scale and row["rms_kt_vs_torch"] <= MATCH_RMS
        out[n] = row
        out["match"] = out["match"] and row["match"]
    return out


def torch_kernels(call, inputs: dict) -> dict:
    """Which device kernels one call of `call` launched (did cuDNN run?), by torch.profiler; never raises."""
    import torch

    if inputs["x"].device.type != "cuda":
        return {}
    out = {"cudnn_enabled": torch.backends.cudnn.enabled, "cudnn_version": torch.backends.cudnn.version(),
           "cudnn_acceptable": torch.backends.cudnn.is_acceptable(inputs["x"])}
    try:
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
        names = sorted({e.name for e in prof.events() if getattr(e, "device_type", None) == DeviceType.CUDA})
        out["kernel_names"] = [n[:120] for n in names[:20]]
        out["cudnn_kernel_seen"] = any("cudnn" in n.lower() or "rnn" in n.lower() for n in names)
    except Exception as exc:  # the probe is evidence, not a gate
        out["profiler_error"] = f"{type(exc).__name__}: {exc}"
    return out


def check_outputs(name: str, kernel, inputs: dict, kt_run, torch_run, torch_out: dict) -> dict:
    """Run kt and torch once each and compare them (and each with the float64 reference)."""
    kt_run()
    kt_out = {n: inputs[n].clone() for n in kernel.attr("OUTPUTS")}
    torch_run()
    ref = {n: v.to(inputs["x"].device) for n, v in kernel.reference(inputs).items()}
    return errors(name, kt_out, {n: v.clone() for n, v in torch_out.items()}, ref)


def bench_problem(name: str, tuned, shape: dict, timer, device: str) -> dict:
    """kt's winner, torch's sequence op and the per-step loop on one problem: times, ratios, errors."""
    import torch

    from kt_cli.kernel import Tensors

    kernel = tuned.kernel
    inputs = kernel.make_inputs(shape, DTYPE, Tensors(device, 3))
    torch_out, loop_out = {}, {}
    kt_run, seq_run = kt_call(tuned, inputs), sequence_call(name, inputs, torch_out)
    loop_run = step_loop_call(name, inputs, loop_out)
    entry = tuned.config(shape)
    row = {"kernel": name, "shape": shape, "params": entry["params"], "config_tuned_for": entry["shape_key"],
           "config_mode": entry.get("mode"), "check": check_outputs(name, kernel, inputs, kt_run, seq_run, torch_out),
           "torch_kernels": torch_kernels(seq_run, inputs)}
    loop_run()
    row["check_loop_vs_torch_max_abs"] = float((loop_out["y"].double() - torch_out["y"].double()).abs().max())
    for label, fn in (("kt", kt_run), ("torch_seq", seq_run), ("loop", loop_run)):
        stats = timer.measure(fn)
        row[f"{label}_s"], row[f"{label}_method"] = stats.median, stats.method
    row["x_loop"], row["x_torch_seq"] = row["loop_s"] / row["kt_s"], row["torch_seq_s"] / row["kt_s"]
    row["us_per_step_kt"] = row["kt_s"] / shape["T"] * 1e6
    del inputs
    if device == "cuda":
        torch.cuda.empty_cache()
    return row


def dry_environment() -> dict:
    import torch
    import triton

    from kt_cli import __version__

    return {"device": "cpu (dry run: TRITON_INTERPRET=1, static tuning)", "machine": platform.machine(),
            "torch": torch.__version__, "triton": triton.__version__, "kt": __version__}


def markdown_table(rows: list[dict], torch_label: str) -> str:
    head = (f"| kernel | T | B | H (NH x DH) | kt params | kt ms | us/step | {torch_label} ms | loop ms | x loop | "
            f"x {torch_label} | match |\n|---|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['kernel']} | {r['shape']} | error: {r['error'][:80]} |")
            continue
        s, p = r["shape"], r["params"]
        params = " ".join(f"{k.replace('BLOCK_', '')[0]}{v}" if k.startswith("BLOCK_") else f"{k[4]}{v}"
                          for k, v in p.items() if k.startswith(("BLOCK_", "num_")))
        hidden = s["H"] if "H" in s else f"{s['NH'] * s['DH']} ({s['NH']} x {s['DH']})"
        lines.append(f"| {r['kernel']} | {s['T']} | {s['B']} | {hidden} | {params} | {r['kt_s'] * 1e3:.3f} | "
                     f"{r['us_per_step_kt']:.2f} | {r['torch_seq_s'] * 1e3:.3f} | {r['loop_s'] * 1e3:.3f} | "
                     f"{r['x_loop']:.2f} | {r['x_torch_seq']:.2f} | {r['check']['match']} |")
    return "\n".join(lines)


def bench_kernel(name: str, args, problems: list[dict], timer, device: str, target: str) -> dict:
    """Tune one kernel on every problem, then benchmark every problem with its artifact."""
    import kt_cli

    entry = {"kernel": name}
    entry["tune"] = tune_kernel(name, problems, args.trials, Path(args.out), target)
    tuned = kt_cli.load(entry["tune"]["artifact"], target=target, finalize=False)
    entry["rows"] = []
    for shape in problems:
        print(f"== {name} {shape}", flush=True)
        try:
            entry["rows"].append(bench_problem(name, tuned, shape, timer, device))
        except Exception as exc:  # one problem's failure is reported; the others still run
            import traceback

            entry["rows"].append({"kernel": name, "shape": shape, "error": f"{type(exc).__name__}: {exc}",
                                  "trace": traceback.format_exc()[-1500:]})
            print(entry["rows"][-1]["trace"], flush=True)
    return entry


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", required=True)
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--trials", type=int, default=3, help="kt trials per tuned problem")
    parser.add_argument("--out", default=None, help="artifacts and temporary recipes (default: a temp dir)")
    parser.add_argument("--dry-run", action="store_true", help="CPU: tiny shapes, static tuning, interpreter")
    args = parser.parse_args()
    args.out = args.out or tempfile.mkdtemp(prefix="kt-rnn-seq-")
    return args


def main() -> int:
    args = parse_args()
    if args.dry_run:  # this process runs the kernels interpreted (kt's workers set their own environment)
        os.environ["TRITON_INTERPRET"] = "1"
        from kt_cli.evaluate import interpreter_fixes

        interpreter_fixes.apply()  # bf16 arithmetic as a GPU does it (kt's verification workers do the same)
    from run import environment

    device, target = ("cpu", "nvidia:sm_90") if args.dry_run else ("cuda", None)
    report = {"environment": dry_environment() if args.dry_run else environment(),
              "command": " ".join(["python benchmarks/rnn_seq.py", *sys.argv[1:]]),
              "notes": ["loop_s includes the host's launch overhead of every step's launches (eager PyTorch): the "
                        "anchor is what a Python loop costs, not the GPU's work alone",
                        "torch_seq is nn.LSTM / nn.GRU (cuDNN on CUDA; see "
                        "torch_kernels)"], "kernels": []}
    if target is None:
        from kt_cli.plugins import devices

        target = devices()[0].target
    timer, started = make_timer(args.dry_run), time.time()
    for name in args.kernels.split(","):
        if name in HEADS:
            problems = DRY_HEAD_PROBLEMS if args.dry_run else GPU_HEAD_PROBLEMS
        else:
            problems = DRY_PROBLEMS if args.dry_run else GPU_PROBLEMS
        try:
            report["kernels"].append(bench_kernel(name, args, problems, timer, device, target))
        except Exception as exc:  # a kernel whose tuning failed is reported; the other still runs
            import traceback

            report["kernels"].append({"kernel": name, "rows": [{"kernel": name, "shape": "all", "error": (
                f"{type(exc).__name__}: {exc}"), "trace": traceback.format_exc()[-2000:]}]})
            print(report["kernels"][-1]["rows"][0]["trace"], flush=True)
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))
    report["wall_s"] = time.time() - started
    Path(args.json).write_text(json.dumps(report, indent=1, default=str))
    rows = [r for k in report["kernels"] for r in k["rows"]]
    print(markdown_table(rows, "cuDNN" if device == "cuda" else "torch-cpu"))
    print(f"wall {report['wall_s']:.0f} s; loop times include host launch overhead; json: {args.json}")
    bad = [r for r in rows if "error" in r or not r["check"]["match"]]
    for r in bad:
        print(f"FAILED {r['kernel']} {r['shape']}: {r.get('error') or r['check']}")
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.exit(main())
