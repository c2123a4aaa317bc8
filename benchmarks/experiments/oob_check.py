"""Does any config of a tuning run touch memory outside its tensors? Launches every distinct verified
config of an artifact's trials once on each shape it was verified on, on fresh inputs, then judges the
output with the judge's comparison kernels, so that compute-sanitizer's memcheck sees every kernel kt
ran. Run it with torch's caching allocator off (each tensor its own allocation, so an access past a
tensor's end is past an allocation's):

    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --print-limit 20 \\
        python3 benchmarks/experiments/oob_check.py --recipe recipes/matmul.toml --trials ART.kt/trials.jsonl
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recipe", required=True)
    ap.add_argument("--trials", required=True)
    ap.add_argument("--vendor", default="nvidia")
    ap.add_argument("--limit", type=int, default=60)
    args = ap.parse_args()

    from kt_cli import plugins
    from kt_cli.evaluate import judge_kernel
    from kt_cli.evaluate.requests import split_params
    from kt_cli.generate import kernel_source
    from kt_cli.kernel import Kernel, Tensors
    from kt_cli.recipe.parse import load_recipe

    recipe = load_recipe(args.recipe)
    vendor = plugins.vendor(args.vendor)
    device = vendor.detect_devices()[0]
    runtime = vendor.runtime()
    runtime.select(device.index)
    kernel = Kernel.load(kernel_source(recipe, [], Path("/tmp/oob_check_src")))
    options_of = plugins.target(device.target).launch_options
    seen, todo = set(), []
    for line in Path(args.trials).read_text().splitlines():
        r = json.loads(line)
        if r.get("failure_kind") != "ok":
            continue
        shapes = (r.get("verification") or {}).get("shapes") or [r["shape"]]
        for shape in shapes:
            key = json.dumps([shape, r["params"]], sort_keys=True)
            if key not in seen:
                seen.add(key)
                todo.append((shape, r["params"]))
    print(f"{len(todo)} (shape, config) pairs; launching the first {args.limit}", flush=True)
    for i, (shape, params) in enumerate(todo[:args.limit]):
        inputs = kernel.make_inputs(shape, recipe.problem.dtype, Tensors(runtime.torch_device, i))
        expected = kernel.reference({k: v.clone() if hasattr(v, "clone") else v for k, v in inputs.items()})
        kernel_params, options = split_params(params, options_of)
        kernel.launch(inputs, kernel_params, options)
        runtime.synchronize()
        for name, ref in expected.items():
            out = inputs[name]
            row = out.shape[-1] if out.dim() > 1 else 0
            figures = judge_kernel.figures(out, ref.double(), 1e-2, 1e-2, 1e-3 if row else 0.0, row)
            print(i, json.dumps(shape), json.dumps(params), name, figures and figures[0], flush=True)
        del inputs, expected
    runtime.synchronize()
    print("done", flush=True)


if __name__ == "__main__":
    main()
