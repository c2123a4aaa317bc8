"""Three real Triton kernels, taken unchanged from public sources, tuned with kt and timed against their
authors' own launch configuration in the same run (issue 18).

    python benchmarks/real_kernels.py --json OUT.json --trials 12          # on a GPU: measured
    python benchmarks/real_kernels.py --dry-run --json /tmp/realk.json     # no GPU: static, 2 trials

The kernels live in benchmarks/real_kernels/ (softmax.py: Triton's fused-softmax tutorial, a row
reduction; layer_norm.py: Triton's layer-norm tutorial forward, three outputs; softcap.py: SGLang's
logit soft-capping, element-wise with a float scalar), each kernel verbatim between `verbatim` markers
with its source, commit and license in the module's docstring, and below it the glue a user writes for
kt. For each kernel this script writes a recipe for problems of real LLM sizes, runs kt's tuner on it
(measured mode on a GPU, as benchmarks/run.py does), then loads the artifact with `kt_cli.load` and
times kt's winner and the author's launch (AUTHOR_LAUNCHES below, citing the source lines) with kt's
own timer, interleaved on the same inputs. `author/kt` >= 1 means kt's config is at least as fast.

Glue is counted as every non-blank line of the module outside its docstring and its verbatim block that
is not a comment (imports included); the recipe's lines (non-blank, non-comment) are counted apart.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS_DIR = ROOT / "benchmarks" / "real_kernels"
sys.path[:0] = [str(ROOT), str(ROOT / "plugins"), str(ROOT / "benchmarks")]

MAX_GLUE_LINES = 15
DRY_RUN_TARGETS = ("nvidia:sm_90", "amd:gfx942")
BEGIN, END = "# ---- verbatim: begin ----", "# ---- verbatim: end"


@dataclasses.dataclass(frozen=True)
class RealKernel:
    name: str
    module: str  # file under benchmarks/real_kernels/
    dtype: str
    shapes: tuple  # the problems, as TOML inline tables
    space: tuple  # [search.space] lines


KERNELS = (
    RealKernel("softmax", "softmax.py", "bfloat16", ("{M = 4096, N = 8192}", "{M = 32768, N = 4096}"),
               ("PROGRAMS = [128, 256, 512, 1024, 2048, 4096, 8192, 32768]", "num_stages = [1, 2, 3, 4]",
                "num_warps = [4, 8, 16]")),
    RealKernel("layer_norm", "layer_norm.py", "bfloat16", ("{M = 4096, N = 8192}",),
               ("BLOCK_SIZE = [256, 512, 1024, 2048, 4096, 8192, 16384]", "num_warps = [1, 2, 4, 8, 16]",
                "num_stages = [1, 2, 3]")),
    RealKernel("softcap", "softcap.py", "bfloat16", ("{M = 16384, N = 8192}",),
               ("BLOCK_SIZE = [128, 256, 512, 1024, 2048, 4096, 8192, 16384]", "num_warps = [2, 4, 8, 16]")),
)


def glue_lines(path: Path) -> list[str]:
    """The lines a user wrote: non-blank, not comments, outside the docstring and the verbatim block."""
    import ast

    text = path.read_text()
    tree = ast.parse(text)
    doc_end = tree.body[0].end_lineno if tree.body and isinstance(tree.body[0], ast.Expr) else 0
    out, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            inside = True
        elif stripped.startswith(END):
            inside = False
        elif number > doc_end and not inside and stripped and not stripped.startswith("#"):
            out.append(line)
    return out


def recipe_text(kernel: RealKernel, trials: int, shapes: tuple | None = None, space: tuple | None = None) -> str:
    """The recipe a user writes for `kernel` (targets: what a static run without a GPU tunes for)."""
    names = ", ".join(f'"{t}"' for t in DRY_RUN_TARGETS)
    return "\n".join([
        "[kernel]", 'generator = "dsl"', f'file = "{KERNELS_DIR / kernel.module}"', "",
        "[problem]", f'dtype = "{kernel.dtype}"', f"shapes = [{', '.join(shapes or kernel.shapes)}]", "",
        "[search]", f"trials = {trials}", "timeout = 120", "",
        "[search.space]", *(space or kernel.space), "",
        "[targets]", f"names = [{names}]", ""])


def recipe_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith("#"))


def load_module(kernel: RealKernel):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"real_kernels_{kernel.name}", KERNELS_DIR / kernel.module)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- the authors' own launches ----------------------------------------------------------------------

def author_softmax(module, inputs):
    """Triton python/tutorials/02-fused-softmax.py @ fd237c7c, `softmax(x)`: BLOCK_SIZE =
    next_power_of_2(n_cols), num_warps = 8, num_stages = 4 if SIZE_SMEM > 200000 else 2, and a persistent
    grid of min(NUM_SM * occupancy, n_rows) programs, the occupancy read from the compiled kernel's
    registers and shared memory (its HIP branch included)."""
    import triton
    from triton.runtime import driver

    x, y = inputs["x"], inputs["y"]
    n_rows, n_cols = x.shape
    properties = driver.active.utils.get_device_properties(x.device.index or 0)
    num_sm, num_regs = properties["multiprocessor_count"], properties["max_num_regs"]
    size_smem, warp_size = properties["max_shared_mem"], properties["warpSize"]
    block_size, num_warps = triton.next_power_of_2(n_cols), 8
    num_stages = 4 if size_smem > 200000 else 2
    kernel = module.softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE=block_size,
                                          num_stages=num_stages, num_warps=num_warps, grid=(1,))
    kernel._init_handles()
    n_regs, shared = kernel.n_regs, kernel.metadata.shared
    target = driver.active.get_current_target()
    if target.backend == "hip":
        gprs = num_regs * 2 if target.arch in ("gfx940", "gfx941", "gfx942", "gfx950", "gfx90a", "gfx908") else num_regs
        max_waves = properties["max_threads_per_sm"] // warp_size
        occupancy = min(gprs // warp_size // n_regs, max_waves) // num_warps
    else:
        occupancy = num_regs // (n_regs * warp_size * num_warps)
    occupancy = min(occupancy, size_smem // shared) if shared else occupancy
    programs = min(num_sm * occupancy, n_rows)

    def run():
        kernel[(programs, 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols, block_size, num_stages)

    return run, {"BLOCK_SIZE": block_size, "num_warps": num_warps, "num_stages": num_stages, "PROGRAMS": programs}


def author_layer_norm(module, inputs):
    """Triton python/tutorials/05-layer-norm.py @ 54569929, `LayerNorm.forward`: BLOCK_SIZE =
    min(65536 // element_size, next_power_of_2(N)), num_warps = min(max(BLOCK_SIZE // 256, 1), 8),
    num_ctas = 1, one program per row, eps as the caller passes it (1e-5 in the tutorial's test)."""
    import triton

    x = inputs["x"]
    n = x.shape[1]
    block_size = min(65536 // x.element_size(), triton.next_power_of_2(n))
    num_warps = min(max(block_size // 256, 1), 8)

    def run():
        module._layer_norm_fwd_fused[(x.shape[0],)](x, inputs["y"], inputs["w"], inputs["b"], inputs["mean"],
                                                    inputs["rstd"], x.stride(0), n, 1e-5, BLOCK_SIZE=block_size,
                                                    num_warps=num_warps, num_ctas=1)

    return run, {"BLOCK_SIZE": block_size, "num_warps": num_warps}


def author_softcap(module, inputs):
    """SGLang python/sglang/srt/layers/triton_ops/softcap.py @ 8a697dff, `softcap_out(x, softcap_const,
    autotune=False)` (the default path, used by `Softcap.forward_cuda`): grid cdiv(n, 128), BLOCK_SIZE=128,
    num_warps=8."""
    import triton

    n = inputs["x"].numel()

    def run():
        module.softcap_out_kernel[(triton.cdiv(n, 128),)](inputs["out"], inputs["x"], n, 30.0, BLOCK_SIZE=128,
                                                          num_warps=8)

    return run, {"BLOCK_SIZE": 128, "num_warps": 8}


AUTHOR_LAUNCHES = {"softmax": author_softmax, "layer_norm": author_layer_norm, "softcap": author_softcap}


# ---- tuning and timing ------------------------------------------------------------------------------

def tune_kernel(kernel: RealKernel, trials: int, out: Path, targets: tuple = (), shapes: tuple | None = None) -> dict:
    """Write the recipe and run kt's tuner on it: measured for the GPU present, else static for `targets`."""
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.tune import tune

    out.mkdir(parents=True, exist_ok=True)
    text = recipe_text(kernel, trials, shapes)
    recipe_path = out / f"{kernel.name}.toml"
    recipe_path.write_text(text)
    started = time.perf_counter()
    path, _, tally = tune(load_recipe(recipe_path), requested_targets=targets, trials=trials, out_dir=out / "artifacts")
    manifest = json.loads((path / "manifest.json").read_text())
    trials_done = [json.loads(line) for line in (path / "trials.jsonl").read_text().splitlines()]
    return {"kernel": kernel.name, "dtype": kernel.dtype, "recipe": str(recipe_path), "artifact": str(path),
            "tune_wall_s": time.perf_counter() - started, "trials_evaluated": tally.done, "kinds": tally.kinds,
            "glue_lines": len(glue_lines(KERNELS_DIR / kernel.module)), "recipe_lines": recipe_lines(text),
            "winners": [{"target": r["target"], "shape": r["shape"], "shape_key": r["shape_key"], "mode": r.get("mode"), "params": r["params"],
                         "seconds": r.get("seconds"), "failure": r.get("failure_kind")} for r in manifest["results"]],
            "trial_kinds": [t["failure_kind"] for t in trials_done]}


def _timer():
    from kt_cli.plugins import devices, vendor

    device = devices()[0]
    return vendor(device.vendor).timer(device)


def time_against_author(kernel: RealKernel, entry: dict) -> list[dict]:
    """Per tuned problem: kt's winner through `kt_cli.load` and the author's launch, timed interleaved on
    the same inputs with kt's timer (the method chosen from the author's launch)."""
    import torch

    import kt_cli
    from kt_cli.kernel import Tensors, torch_dtype

    module, tuned = load_module(kernel), kt_cli.load(entry["artifact"])
    timer, rows = _timer(), []
    for winner in (w for w in entry["winners"] if w["params"]):
        inputs = module.make_inputs(winner["shape"], torch_dtype(kernel.dtype), Tensors("cuda", 3))
        author_run, author_config = AUTHOR_LAUNCHES[kernel.name](module, inputs)
        expected = module.reference(inputs)
        author_err = _worst_error(author_run, inputs, expected)
        kt_err = _worst_error(lambda: tuned(inputs), inputs, expected)
        method = timer.choose_method(author_run)
        kt_stats, author_stats = timer.measure_interleaved([lambda: tuned(inputs), author_run], method)
        rows.append({"target": winner["target"], "shape": winner["shape_key"], "kt_params": winner["params"], "author_config": author_config,
                     "kt_s": kt_stats.median, "author_s": author_stats.median,
                     "author_over_kt": author_stats.median / kt_stats.median, "method": method,
                     "kt_rel_ci": kt_stats.rel_ci, "author_rel_ci": author_stats.rel_ci,
                     "kt_max_abs_err": kt_err, "author_max_abs_err": author_err, "kt_tuning_median_s": winner["seconds"]})
        del inputs, expected
        torch.cuda.empty_cache()
    return rows


def _worst_error(run, inputs: dict, expected: dict) -> float:
    """The largest |output - reference| over the outputs the reference names after `run`, on outputs
    filled with NaN first (an unwritten element reads nan)."""
    for name in expected:
        inputs[name].fill_(float("nan"))
    run()
    return max(float((inputs[k].double() - v.double()).abs().max()) for k, v in expected.items())


def markdown(report: dict) -> str:
    lines = ["| kernel | target | problem | glue lines (module + recipe) | trials | tune wall | kt config | author config "
             "| kt | author | author/kt |", "|---" * 11 + "|"]
    for entry in report["kernels"]:
        if "error" in entry:
            lines.append(f"| {entry['kernel']} | error: {entry['error'][:80]} |" + " |" * 9)
            continue
        glue = f"{entry['glue_lines']} + {entry['recipe_lines']}"
        for row in entry.get("timing") or [{"target": w["target"], "shape": w["shape_key"], "kt_params": w["params"]}
                                     for w in entry["winners"]]:
            kt_s, author_s = row.get("kt_s"), row.get("author_s")
            timed = (f"{kt_s * 1e6:.1f} us | {author_s * 1e6:.1f} us | {row['author_over_kt']:.2f}" if kt_s
                     else "- | - | -")
            lines.append(f"| {entry['kernel']} | {row['target']} | {row['shape']} | {glue} | {entry['trials_evaluated']} "
                         f"| {entry['tune_wall_s']:.0f} s | {row['kt_params']} | {row.get('author_config', '-')} "
                         f"| {timed} |")
    return "\n".join(lines)


def run_kernel(kernel: RealKernel, args) -> dict:
    """Tune one kernel (static on the CPU for --dry-run) and, on a GPU, time it against its author."""
    targets = DRY_RUN_TARGETS if args.dry_run else ()
    try:
        entry = tune_kernel(kernel, args.trials, Path(args.out) / kernel.name, targets)
        if entry["glue_lines"] > MAX_GLUE_LINES:
            raise AssertionError(f"{kernel.module}: {entry['glue_lines']} lines of glue, over {MAX_GLUE_LINES}")
        if not args.dry_run:
            entry["timing"] = time_against_author(kernel, entry)
    except Exception as exc:  # one kernel's failure is reported, the others still run
        entry = {"kernel": kernel.name, "error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-3000:]}
        print(entry["trace"], flush=True)
    return entry


def environment(dry_run: bool) -> dict:
    if not dry_run:
        import run

        return run.environment()
    import torch
    import triton

    from kt_cli import __version__

    return {"device": None, "mode": "static (dry run)", "torch": torch.__version__, "triton": triton.__version__,
            "kt": __version__}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", required=True, help="where to write the results")
    parser.add_argument("--trials", type=int, default=None, help="trials per target and problem (default 12; 2 dry)")
    parser.add_argument("--kernels", default=",".join(k.name for k in KERNELS), help="comma-separated subset")
    parser.add_argument("--out", help="recipes and artifacts go here (default: a new temporary folder, so that no "
                                      "earlier study is resumed and every tune starts from nothing)")
    parser.add_argument("--dry-run", action="store_true",
                        help=f"no GPU: tune statically for {', '.join(DRY_RUN_TARGETS)} on the CPU, no timing")
    args = parser.parse_args()
    args.trials = args.trials or (2 if args.dry_run else 12)
    args.out = args.out or tempfile.mkdtemp(prefix="kt-real-kernels-")
    wanted = args.kernels.split(",")
    report = {"environment": environment(args.dry_run), "command": " ".join(["python benchmarks/real_kernels.py",
                                                                             *sys.argv[1:]]),
              "out": args.out, "trials": args.trials, "max_glue_lines": MAX_GLUE_LINES, "kernels": []}
    started = time.perf_counter()
    for kernel in (k for k in KERNELS if k.name in wanted):
        print(f"== {kernel.name}", flush=True)
        report["kernels"].append(run_kernel(kernel, args))
        report["wall_s"] = time.perf_counter() - started
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))
    print(markdown(report), flush=True)
    failed = [e["kernel"] for e in report["kernels"] if "error" in e]
    if failed:
        sys.exit(f"failed: {', '.join(failed)} (see {args.json})")


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    main()
