"""`kt tune --profile K`: the best K candidates of each measured problem, run once more under the
vendor's profiler (`Vendor.profile`); the counters go into the artifact and `kt show`.

The profiled process is `python -m kt_cli.evaluate.profile SPEC.json`: it loads the kernel module, makes the
inputs and launches the candidate a few times, nothing else, so the profiler sees only its kernels."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile


def profile_results(results: list[dict], source, recipe, k: int) -> None:
    """Add "profile": [{params, seconds, counters}] to each measured result (best first); None where
    the vendor has no profiler here."""
    from kt_cli import plugins

    present = {(d.target, d.index): d for d in plugins.devices()}
    for r in results:
        if r["mode"] != "measured" or not r["device"]:
            continue
        device = present.get((r["target"], r["device"]["index"]))
        ok = sorted((t for t in r["trials"] if t.ok and t.value is not None), key=lambda t: t.value)[:k]
        r["profile"] = []
        for trial in ok:
            counters = profile_candidate(source, device, trial, recipe.problem.dtype)
            if counters is None:
                r["profile"] = None
                break
            r["profile"].append({"params": trial.params, "seconds": trial.value, "counters": counters})


def profile_candidate(source, device, trial, dtype: str) -> dict | None:
    """Profiler counters of one measured candidate on `device`: None when its vendor has no profiler
    here; {"error": ...} when the profiler failed (a profile is extra: the run goes on)."""
    from kt_cli import plugins
    from kt_cli.evaluate.requests import split_params

    params, options = split_params(trial.params, plugins.target(trial.target).launch_options)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"source": source.path, "functions": source.functions, "shape": trial.shape, "dtype": dtype,
                   "params": params, "options": options, "vendor": device.vendor}, f)
    command = [sys.executable, "-m", "kt_cli.evaluate.profile", f.name]
    try:
        return plugins.vendor(device.vendor).profile(device, command, _jit_names(source))
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        return {"error": str(exc)[:500]}


def _jit_names(source) -> list[str]:
    import ast
    from pathlib import Path

    tree = ast.parse(Path(source.path).read_text())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
            and any("jit" in ast.unparse(d) for d in n.decorator_list)]


def _launch_from_spec(path: str, repeats: int = 3) -> None:
    from kt_cli import plugins
    from kt_cli.kernel import Kernel, KernelSource, Tensors

    spec = json.loads(open(path).read())
    runtime = plugins.vendor(spec["vendor"]).runtime()
    kernel = Kernel.load(KernelSource(spec["source"], "profile", "profile", spec["functions"]))
    inputs = kernel.make_inputs(spec["shape"], spec["dtype"], Tensors(runtime.torch_device, 0))
    for _ in range(repeats):
        kernel.launch(inputs, spec["params"], spec["options"])
    runtime.synchronize()


if __name__ == "__main__":
    _launch_from_spec(sys.argv[1])
