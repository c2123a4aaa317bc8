"""Experiment: where the judge's time goes when it judges one screened candidate (not part of kt).

The judge's side of kt_cli.evaluate.requests.judge_cases, step by step (the comparison by the device
kernel compare() uses, and by torch's operations in float32 and float64), in one process on the GPU: the
held case of a library problem, a correct output written into it, then the inputs checked against their
pristine copies, every output compared with the reference, the restore; each step timed with a device
synchronisation around it, median of 20.

    python judge_cost.py [softmax:32768x4096] [matmul:4096]
"""
import statistics
import sys
import time

import torch

from common import ROOT

sys.path.insert(0, str(ROOT))
from kt_cli.evaluate import requests  # noqa: E402
from kt_cli.evaluate.held_cases import judge_held  # noqa: E402
from kt_cli.evaluate.verify import _figures, _same, compare, module_tolerance, tolerance_for  # noqa: E402
from kt_cli.kernel import KernelSource  # noqa: E402

PROBLEMS = {"softmax": ({"M": 32768, "N": 4096}, "bfloat16"), "matmul": ({"M": 4096, "N": 4096, "K": 4096}, "bfloat16"),
            "layernorm": ({"M": 32768, "N": 4096}, "bfloat16")}


def timed(fn, n=20):
    out = []
    for _ in range(n):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t)
    return statistics.median(out) * 1e3


def main():
    from kt_cli import plugins

    target = plugins.target("nvidia:sm_90")
    for name in [a for a in sys.argv[1:] if a in PROBLEMS] or list(PROBLEMS):
        shape, dtype = PROBLEMS[name]
        source = KernelSource(str(ROOT / "plugins" / "kt_templates" / "kernels" / f"{name}.py"), "templates", name)
        runs = [(shape, 0)]
        requests.hold_cases(source, runs, dtype, 0, target)
        problem, held = requests._held(source, runs, dtype, 0, target, make=False)
        case = held[0].case
        tol = tolerance_for(dtype, module_tolerance(problem, dtype))

        def write_right():
            for out in case.outputs:
                case.inputs[out].copy_(case.expected[out].to(case.inputs[out].dtype))

        write_right()
        inputs = [k for k in held[0].pristine]
        steps = {
            "inputs unchanged (_same)": lambda: [_same(held[0].pristine[k], case.inputs[k]) for k in inputs],
            "compare outputs": lambda: [compare(case.inputs[o], case.expected[o], tol) for o in case.outputs],
            "compare, torch float32": lambda: [_figures(case.inputs[o], case.expected[o], tol, case.inputs[o].shape[-1],
                                                        torch.float32) for o in case.outputs],
            "compare, torch float64": lambda: [_figures(case.inputs[o], case.expected[o], tol, case.inputs[o].shape[-1],
                                                        torch.float64) for o in case.outputs],
            "clone outputs (Judge.previous)": lambda: [case.inputs[o].detach().clone() for o in case.outputs],
            "restore": lambda: held[0].restore(),
            "judge_held (all of it)": lambda: (write_right(), judge_held(held, tol)),
            "write_right (this script's)": write_right,
            "judge_cases request": lambda: (write_right(), requests.judge_cases(source, runs, dtype, 0, None, target)),
        }
        print(f"{name} {shape} {dtype}: outputs {[tuple(case.inputs[o].shape) for o in case.outputs]}, "
              f"expected dtype {[case.expected[o].dtype for o in case.outputs]}", flush=True)
        for step, fn in steps.items():
            write_right()
            print(f"  {step:34s} {timed(fn):8.2f} ms", flush=True)


if __name__ == "__main__":
    main()
