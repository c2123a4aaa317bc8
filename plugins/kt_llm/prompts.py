"""The texts sent to the model: the coder's, the judge's and the planner's, and parsing their JSON."""

from __future__ import annotations

import json
import re

PROTOCOL = """You write one complete Python module in kt's kernel protocol:

    import torch, triton, triton.language as tl
    SPACE = {"BLOCK_N": [256, 512, 1024], "num_warps": [2, 4, 8], "num_stages": [1, 2]}  # knobs kt tunes
    CONSTRAINTS = ["BLOCK_N >= 32 * num_warps"]  # optional; expressions over SPACE names and shape sizes

    @triton.jit
    def my_kernel(...): ...            # one or more Triton kernels compute the whole answer

    def launch(k, inputs: dict, params: dict) -> None:
        # k.NAME is this module's @triton.jit function NAME; params holds the SPACE values except the
        # launch options (num_warps, num_stages), which kt adds to every launch itself
        k.my_kernel[grid](..., BLOCK_N=params["BLOCK_N"])

Write the outputs named in OUTPUTS in place (they are filled with NaN first; every element must be
written). kt appends the task's OUTPUTS, VERIFY_SHAPES, make_inputs, reference, baseline, flops and
bytes_moved to your module; do not define them. kt verifies on fresh random inputs (relative error
under the dtype's tolerance), cross-compiles for the targets and times or estimates the kernel.

Rejected before anything runs: calling reference/baseline, torch ops that compute (only allocation
such as torch.empty is allowed outside Triton kernels), @ on tensors, streams, threads, processes,
clocks or timers, file or network access, imports other than torch/triton/math/typing, monkey-patching,
module-level state written at run time (cached results), eval/exec/getattr/setattr, @triton.autotune.

Answer with exactly one ```python fenced block holding the complete module."""

JUDGE = """You are a GPU performance engineer. Read the kernel and its figures, then name exactly one
bottleneck and one concrete plan to remove it. Answer with JSON only:
{"bottleneck": "...", "plan": "..."}"""

PLANNER = """You are a GPU performance engineer. Plan how to write a fast, correct kernel for the task
in small steps, each one a change that can be implemented and verified on its own. Answer with JSON
only: {"steps": ["...", "..."]}"""


class Malformed(Exception):
    """A reply that does not have the shape asked for (no code block, no valid JSON)."""


def task_text(task, dtype: str, shapes: list, targets: list[str]) -> str:
    return (f"Task: {task.name}, dtype {dtype}, problem shapes {shapes}, targets {', '.join(targets)}.\n"
            f"The problem (kt appends exactly this to your module):\n```python\n{task.problem}```\n")


def _number(value) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def figures_text(best: dict) -> str:
    lines = [f"- {p['target']} {p['shape']} with {p.get('params')}: time {_number(p.get('seconds'))} s, speedup over "
             f"the reference {_number(p.get('speedup'))}, fraction of peak {_number(p.get('fraction_of_peak'))}, "
             f"compiler counters {p.get('resources')}"
             + (f", profiler counters {p['profiler']}" if p.get("profiler") else "") for p in best["problems"]]
    label = " (estimates from a cost model: no GPU)" if best.get("speed_is_estimate") else ""
    return f"Figures{label}:\n" + "\n".join(lines)


def coder_prompt(task_intro: str, best: dict | None, best_code: str, failures: list[dict], advice: str) -> str:
    parts = [task_intro]
    if best is not None:
        parts.append(f"The best verified kernel so far (round {best['round']}):\n```python\n{best_code}```\n"
                     + figures_text(best))
    if failures:
        parts.append("Recent failures to avoid:\n" + "\n".join(
            f"- round {f['round']}: {f['failure_kind']}: {f['message'][:600]}" for f in failures))
    if advice:
        parts.append(f"Implement this change:\n{advice}")
    parts.append("Write the complete module now." if best is None else
                 "Write a complete module that is correct and faster than the best so far.")
    return "\n\n".join(parts)


def judge_prompt(task_intro: str, best: dict, best_code: str) -> str:
    return f"{task_intro}\nKernel:\n```python\n{best_code}```\n{figures_text(best)}"


def parse_json(reply: str, key: str, kind: type) -> object:
    """The value of `key` in the reply's JSON object (fenced or bare); Malformed otherwise."""
    match = re.search(r"\{.*\}", reply, re.DOTALL)
    try:
        data = json.loads(match.group(0)) if match else None
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        data = None
    if not isinstance(data, dict) or not isinstance(data.get(key), kind) or not data[key]:
        raise Malformed(f"expected JSON with a non-empty {key!r}, got: {reply[:200]!r}")
    return data[key]
