"""The honesty gates reject each way a proposal could pass verification or timing without computing
the answer in its own kernel; an honest module passes."""

import pytest

from kt_llm.gates import check
from kt_llm.task import assemble, extract_code, resolve_task, strip_problem
from tests.llm_server import answer

HONEST = extract_code(answer("good.md"))
BASE = '''
import torch
import triton
import triton.language as tl
{imports}

@triton.jit
def copy_kernel(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

{module}
def launch(k, inputs, params):
    x, y = inputs["x"], inputs["y"]
    {body}
    k.copy_kernel[(triton.cdiv(x.numel(), 256),)](y, x, x.numel(), BLOCK=256)
'''


def module(body="pass", imports="", module_level=""):
    return BASE.format(body=body, imports=imports, module=module_level)


CHEATS = {
    "calls the reference": dict(body='y.copy_(reference(inputs)["y"])'),
    "torch.softmax": dict(body="out = torch.softmax(x, -1)"),
    "torch.matmul": dict(body="out = torch.matmul(x, x)"),
    "functional alias": dict(imports="import torch.nn.functional as F", body="out = F.softmax(x, -1)"),
    "from torch import": dict(imports="from torch import softmax", body="out = softmax(x, -1)"),
    "matmul operator": dict(body="out = x @ x"),
    "tensor method": dict(body="y.copy_(x.softmax(-1))"),
    "other stream": dict(body="s = torch.cuda.Stream()"),
    "stream keyword": dict(body="k.copy_kernel[(1,)](y, x, 1, BLOCK=256, stream=0)"),
    "thread": dict(imports="import threading", body="threading.Thread(target=print).start()"),
    "subprocess": dict(imports="import subprocess", body='subprocess.run(["nvidia-smi"])'),
    "multiprocessing": dict(imports="from multiprocessing import Pool"),
    "clock": dict(imports="import time", body="t0 = time.perf_counter()"),
    "cuda event": dict(body="e = torch.cuda.Event(enable_timing=True)"),
    "triton.testing": dict(body="t = triton.testing.do_bench(lambda: None)"),
    "monkey-patch": dict(body="torch.softmax = lambda *a, **k: None"),
    "monkey-patch triton": dict(module_level="tl.exp = tl.exp2\n"),
    "setattr": dict(body='setattr(torch, "softmax", None)'),
    "cache in module dict": dict(module_level="_CACHE = {}\n", body="_CACHE[x.shape] = y"),
    "cache via method": dict(module_level="_SEEN = []\n", body="_SEEN.append(y)"),
    "cache on a function": dict(body="launch.last = y"),
    "global state": dict(module_level="_LAST = None\n", body="global _LAST"),
    "file access": dict(body='open("/tmp/answer.pt", "rb")'),
    "torch.load": dict(body='torch.load("/tmp/answer.pt")'),
    "network": dict(imports="import urllib.request", body='urllib.request.urlopen("http://x")'),
    "dynamic import": dict(body='__import__("os").system("true")'),
    "getattr escape": dict(body='getattr(torch, "soft" + "max")(x, -1)'),
    "autotune": dict(module_level="@triton.autotune(configs=[], key=[])\ndef f():\n    pass\n"),
}


def test_an_honest_kernel_passes():
    assert check(strip_problem(HONEST)) == ""
    assert check(module(body="z = torch.empty_like(x); assert x.is_contiguous() and torch.finfo(x.dtype).max > 0")) == ""


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheat_is_rejected_with_a_line_number(name):
    reason = check(module(**CHEATS[name]))
    assert reason.startswith("line "), (name, reason)


def test_a_proposal_cannot_redefine_the_problem(tmp_path):
    loose = HONEST + '\nTOLERANCE = {"float32": 1.0}\n\ndef make_inputs(shape, dtype, t):\n    return {}\n'
    task = resolve_task("softmax", tmp_path / "r.toml")
    text = assemble(strip_problem(loose), task)
    assert "TOLERANCE" not in text
    assert "inputs[\"x\"] * 0" not in text  # the proposal's own reference is gone
    assert 'torch.softmax(inputs["x"].double(), dim=-1)' in text  # the task's is appended
    assert text.count("def make_inputs") == 1


def test_code_is_pulled_from_a_fenced_reply_and_prose_is_not_code():
    assert "def launch" in HONEST
    assert extract_code(answer("malformed.md")) is None


# --- replies that cannot be parsed: screened in a child process, a failed round, never a crash ----------

UNARY_MINUS = "```python\nx = " + "-" * 100_000 + "1\n\ndef launch(k, inputs, params):\n    pass\n```"
LONG_SUM = "```python\nx = " + " + ".join(["a"] * 3000) + "\n\ndef launch(k, inputs, params):\n    pass\n```"


@pytest.mark.parametrize("reply,kind", [
    (UNARY_MINUS, "compile_error"),
    (LONG_SUM, "compile_error"),
    ("x = " + "-" * 100_000 + "1", "malformed"),  # a bare reply that cannot be parsed holds no code
    ("```python\n" + "#" * 500_000 + "\n```", "malformed"),  # past the size limit
    ("```python\ndef launch(k, inputs, params):\n    return (\n```", "compile_error"),
    ("no code at all", "malformed"),
])
def test_a_reply_that_cannot_be_parsed_is_a_failed_round(reply, kind):
    from kt_llm.screen import screen

    screened = screen(reply)
    assert screened.code is None and screened.failure_kind == kind, screened


def test_an_honest_reply_passes_the_screen_and_a_cheat_is_rejected():
    from kt_llm.screen import screen

    honest = screen(answer("good.md"))
    assert honest.failure_kind == "" and "def launch" in honest.code and "def reference" not in honest.code
    cheat = screen(answer("cheat_reference.md"))
    assert cheat.failure_kind == "invalid" and "reference" in cheat.message and cheat.code


def test_json_nested_past_the_parser_depth_is_malformed():
    from kt_llm.prompts import Malformed, parse_json

    with pytest.raises(Malformed):
        parse_json('{"plan": ' + "[" * 100_000 + "]" * 100_000 + "}", "plan", list)
