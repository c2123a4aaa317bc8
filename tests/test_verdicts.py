"""Verdicts a user can trust: element-wise verification (a zeroed row fails where a norm-wise error
passes it), static mode verifying at stand-ins for the tuned problem (a config right only at small
shapes ends `wrong`), and tolerances that say where they come from."""

import json

import pytest
import torch

from kt_cli.evaluate.tuned_shapes import tuned_problem_shapes
from kt_cli.evaluate.verify import Tolerance, WrongResult, compare, tolerance_for
from tests.cheats import CHEATS
from tests.helpers import kt, one_error_line

# A row softmax whose program covers its row with one block: right only when BLOCK >= N.
ROW_SOFTMAX = CHEATS["right_only_at_small_shapes"]


def softmax_rows(rows: int, cols: int):
    ref = torch.softmax(torch.randn(rows, cols, generator=torch.Generator().manual_seed(0)), -1)
    return ref.to(torch.bfloat16), ref.double()


def test_a_zeroed_row_fails_although_its_norm_error_is_tiny():
    out, ref = softmax_rows(32768, 256)
    out[1234] = 0
    norm = float((out.double() - ref).norm() / ref.norm())
    assert norm < 1e-2  # what the former norm-wise rule (1e-2 for bf16) let pass
    with pytest.raises(WrongResult) as info:
        compare(out, ref, tolerance_for("bfloat16"))
    message = str(info.value)
    assert "256 of 8388608 elements fail" in message and "worst at [1234, " in message
    assert "got 0, expected" in message and "norm-wise relative error" in message


def test_a_rounded_output_passes_and_nan_never_does():
    out, ref = softmax_rows(64, 512)
    norm, excess = compare(out, ref, tolerance_for("bfloat16"))
    assert 0 < norm < 1e-2 and 0 < excess <= 1
    out[3, 7] = float("nan")
    with pytest.raises(WrongResult, match=r"1 of 32768 elements fail.*worst at \[3, 7\]: got nan.*unwritten"):
        compare(out, ref, tolerance_for("bfloat16"))


def test_an_rms_term_covers_cancellation_but_not_a_zeroed_element():
    gen = torch.Generator().manual_seed(0)  # unseeded, a row could hold an element small enough to pass zeroed
    ref = torch.randn(256, 256, dtype=torch.float64, generator=gen) * 100
    out = ref + 1e-3 * torch.randn(256, 256, dtype=torch.float64, generator=gen)  # error ~ the typical size
    ref[0, 0] = 1e-9  # a near-zero result of large cancelling terms
    out[0, 0] = 5e-4
    with pytest.raises(WrongResult):
        compare(out, ref, Tolerance(1e-6, 1e-6, "strict"))
    compare(out, ref, Tolerance(1e-6, 1e-6, "sum over K", rms=1e-4))
    out[5] = 0
    with pytest.raises(WrongResult, match="256 of 65536"):
        compare(out, ref, Tolerance(1e-6, 1e-6, "sum over K", rms=1e-4))


def test_the_float32_judge_gives_the_float64_judges_verdicts():
    # compare() judges 16-bit outputs in float32 against the float64 reference the judge holds (it runs
    # on the device's critical path); its figures and verdicts are float64's
    from kt_cli.evaluate.verify import _figures

    gen = torch.Generator().manual_seed(1)
    for dtype, tol in ((torch.bfloat16, tolerance_for("bfloat16")), (torch.float16, tolerance_for("float16")),
                       (torch.float16, Tolerance(1e-3, 1e-5, "sum over K", rms=1e-3))):
        ref = torch.randn(96, 160, generator=gen, dtype=torch.float64) * 3
        noise = torch.rand(96, 160, generator=gen, dtype=torch.float64) * 2 - 1
        out = (ref * (1 + 0.5 * tol.rtol * noise)).to(dtype)
        for broken in (False, True):
            if broken:
                out[17, 3] = ref[17, 3] * 1.5 + 1
            narrow, wide = (_figures(out, ref, tol, 160, d) for d in (torch.float32, torch.float64))
            assert narrow[0] == wide[0] == int(broken) and narrow[2] == wide[2]  # failing elements, the worst
            assert narrow[1::2] == pytest.approx(wide[1::2], rel=1e-3)  # excess, error, size
        with pytest.raises(WrongResult, match=r"1 of 15360 elements fail.*worst at \[17, 3\]"):
            compare(out, ref, tol)


JUDGE_KERNEL_CASES = """
import torch
from kt_cli.evaluate.interpreter_fixes import apply
apply()  # as kt's interpreter workers do: the defects of the installed Triton's interpreter worked around
from kt_cli.evaluate import judge_kernel
from kt_cli.evaluate.verify import Tolerance, _figures
gen = torch.Generator().manual_seed(3)
cases = []
for dtype in (torch.bfloat16, torch.float16, torch.float32):
    ref = torch.randn(3, 4133, generator=gen, dtype=torch.float64) * 5  # blocks of 4096: a ragged last one
    out = (ref * (1 + 1e-3 * (torch.rand(ref.shape, generator=gen, dtype=torch.float64) - 0.5))).to(dtype)
    cases.append((out, ref))
    wrong = out.clone(); wrong[2, 4100] = 0; wrong[0, 7] = float("nan"); cases.append((wrong, ref))
    odd_ref = ref.clone(); odd_ref[1, 5] = float("inf"); odd_ref[1, 6] = float("nan"); odd_ref[1, 8] = float("-inf")
    odd_out = out.clone(); odd_out[1, 5] = float("inf"); odd_out[1, 6] = float("nan"); odd_out[1, 8] = float("inf")
    cases.append((odd_out, odd_ref))
    zeroed = out.clone(); zeroed[1] = 0; cases.append((zeroed, ref))
    cases.append((out.reshape(-1)[:9000], ref.reshape(-1)[:9000]))  # one row
    twice = out.clone(); twice[0, 100] = twice[2, 100] = ref[0, 100] * 3; cases.append((twice, ref))
for tol in (Tolerance(1e-2, 1e-5, "t"), Tolerance(1e-6, 1e-6, "sum over K", rms=5e-3)):
    for out, ref in cases:
        row = ref.shape[-1]
        ours = judge_kernel.figures(out, ref, tol.atol, tol.rtol, tol.rms, row)
        theirs = _figures(out, ref, tol, row, torch.float64)
        assert ours[0] == theirs[0] and ours[2] == theirs[2], (ours, theirs)
        for a, b in zip(ours[1::2], theirs[1::2]):
            assert a == b or abs(a - b) <= 1e-6 * abs(b), (ours, theirs)
        print(ours[0], end=" ")
"""


def test_the_device_judge_kernel_gives_torchs_verdicts():
    # on a device, compare() judges in one Triton kernel pass: it must count the same failing elements,
    # name the same worst one and report the same figures as torch's float64 path, NaN and Inf included
    import subprocess
    import sys

    from tests.helpers import process_env

    done = subprocess.run([sys.executable, "-c", JUDGE_KERNEL_CASES], capture_output=True, text=True, timeout=600,
                          env=process_env(TRITON_INTERPRET="1"))
    assert done.returncode == 0, done.stderr[-3000:]
    counts = [int(c) for c in done.stdout.split()]
    assert len(counts) == 36 and counts.count(0) < 30 and max(counts) >= 4133  # passing and failing cases


def test_outputs_whose_squares_overflow_float32_are_judged_in_float64():
    # a row's RMS over values near 1e30 overflows float32 (its bound would be inf and pass anything)
    ref = (torch.randn(8, 64, generator=torch.Generator().manual_seed(2)) * 1e30).to(torch.bfloat16).double()
    tol = Tolerance(1e-2, 1e-5, "sum over K", rms=1e-2)
    norm, excess = compare(ref.to(torch.bfloat16), ref, tol)
    assert norm == 0 and excess == 0
    out = ref.to(torch.bfloat16)
    out[4, 9] = ref[4, 9] * -3
    with pytest.raises(WrongResult, match=r"1 of 512 elements fail.*worst at \[4, 9\]"):
        compare(out, ref, tol)


def test_causal_attention_rounding_passes_at_the_recipe_shape_and_a_zeroed_row_does_not():
    # the attention recipe's causal problem, one batch: its first rows average a few values and are far
    # larger than its last ones, so the rms term must scale with each row's size, not the whole output's
    # (with one RMS for all, this honest rounding failed on an H100 for every candidate)
    import math

    from plugins.kt_templates.kernels.attention import TOLERANCE

    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 4, 4096, 128, generator=gen).bfloat16().float() for _ in range(3))
    scores = (q @ k.transpose(-1, -2) / math.sqrt(128)).masked_fill(~torch.ones(4096, 4096, dtype=torch.bool).tril(),
                                                                     -math.inf)
    ref = torch.softmax(scores, -1) @ v
    p = torch.exp(scores - scores.amax(-1, keepdim=True))
    out = ((p.bfloat16().float() @ v) / p.sum(-1, keepdim=True)).bfloat16()  # P rounded, as the kernel does
    del scores, p
    tol = tolerance_for("bfloat16", TOLERANCE["bfloat16"])
    compare(out, ref, tol)
    out[0, 1, 2000] = 0
    with pytest.raises(WrongResult, match=r"worst at \[0, 1, 2000, "):
        compare(out, ref, tol)


def test_tolerance_precedence_recipe_then_kernel_then_default():
    assert tolerance_for("float32").rtol == 1.3e-6 and "assert_close" in tolerance_for("float32").why
    kernel = {"rtol": 2e-3, "atol": 1e-5, "why": "fp32 sum over K"}
    assert tolerance_for("float32", kernel).why == "fp32 sum over K"
    recipe = {"rtol": 5e-2, "why": "tf32"}
    assert tolerance_for("float32", kernel, recipe) == Tolerance(5e-2, 1e-5, "tf32")
    assert tolerance_for("bfloat16", None, 1e-2).rtol == 1.6e-2  # a legacy relative number never tightens


@pytest.mark.parametrize("params,row", [
    ({"BLOCK": 4096}, 4096),  # below 3 tiles: the real row length
    ({"BLOCK": 1024}, 2048),  # two whole tiles, no ragged one, as at 4096
    ({"BLOCK": 256}, 512),
    ({"BLOCK": 256, "N_SPLIT": 3}, 512),  # a small integer is no tile: C stays 256
])
def test_stand_ins_keep_the_row_length_against_the_tiles(params, row):
    verify = [{"M": 7, "N": 300}, {"M": 3, "N": 1000}]
    assert {"M": 7, "N": row} in tuned_problem_shapes({"M": 64, "N": 4096}, verify, params)[0]
    assert {"M": 7, "N": 2 * 1024 + 4100 % 1024} in tuned_problem_shapes({"M": 64, "N": 4100}, verify, {"B": 1000})[0]
    assert tuned_problem_shapes({"M": 7, "N": 300}, verify, params) == ([], [])


def test_stand_ins_stay_small_for_huge_problems():
    shapes, _ = tuned_problem_shapes({"M": 32768, "N": 4100}, [{"M": 4, "N": 64}], {"BLOCK_N": 32768, "ROWS": 8})
    assert {"M": 4, "N": 4100} in shapes and all(s["M"] * s["N"] <= 1 << 20 for s in shapes)
    rows = next(s["M"] for s in shapes if s["N"] == 64)
    assert 2 * 16 <= rows < 32768


GROUPED_COPY = '''
import torch
import triton
import triton.language as tl

OUTPUTS = ("out",)
VERIFY_SHAPES = [{"H": 4, "H_KV": 2, "N": 37}, {"H": 6, "H_KV": 3, "N": 45}]


@triton.jit
def grouped_copy(out_ptr, q_ptr, kv_ptr, n, group, BLOCK: tl.constexpr):
    h = tl.program_id(0)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(kv_ptr + (h // group) * n + cols, mask=cols < n)
        q = tl.load(q_ptr + h * n + cols, mask=cols < n)
        tl.store(out_ptr + h * n + cols, q + x, mask=cols < n)


def make_inputs(shape, dtype, t):
    h, h_kv, n = shape["H"], shape["H_KV"], shape["N"]
    return {"q": t.randn(h, n, dtype=dtype), "kv": t.randn(h_kv, n, dtype=dtype), "out": t.empty(h, n, dtype=dtype)}


def reference(inputs):  # fails where the query heads are no multiple of the kv heads (no group of kv heads)
    q, kv = inputs["q"], inputs["kv"]
    return {"out": q + kv.repeat_interleave(q.shape[0] // kv.shape[0], 0)}


def launch(k, inputs, params):
    q, kv, out = inputs["q"], inputs["kv"], inputs["out"]
    k.grouped_copy[(q.shape[0],)](out, q, kv, q.shape[1], q.shape[0] // kv.shape[0], BLOCK=params["BLOCK"])
'''


def heads_divide(shape):  # a grouped-query problem: query heads a multiple of key/value heads
    return shape["H"] % shape["H_KV"] == 0


@pytest.mark.parametrize("problem", [{"B": 4, "H": 32, "H_KV": 32, "S": 4096}, {"B": 4, "H": 32, "H_KV": 8, "S": 4096}])
def test_stand_ins_carry_the_sizes_tied_to_the_one_they_change(problem):
    verify = [{"B": 1, "H": 4, "H_KV": 2, "S": 37}, {"B": 2, "H": 2, "H_KV": 1, "S": 45}]
    shapes, refused = tuned_problem_shapes(problem, verify, {"BLOCK_M": 128}, heads_divide)
    assert refused == [] and all(heads_divide(s) for s in shapes)
    assert {problem["H_KV"]} == {s["H_KV"] for s in shapes if s["H_KV"] not in (1, 2)}  # the real H_KV is checked
    assert {"B": 2, "H": 2, "H_KV": 1, "S": 256} in shapes  # the others still move one at a time


def test_stand_ins_are_of_the_problems_kind():
    # a problem without the flag a small verification shape sets (full attention beside a causal one)
    # is stood in for by shapes without it, built from the small shape of its own kind
    verify = [{"M": 7, "N": 300, "CAUSAL": 1}, {"M": 9, "N": 500}]
    shapes, _ = tuned_problem_shapes({"M": 64, "N": 4096}, verify, {"BLOCK": 256})
    assert shapes and all("CAUSAL" not in s for s in shapes) and {"M": 9, "N": 512} in shapes
    shapes, _ = tuned_problem_shapes({"M": 64, "N": 4096, "CAUSAL": 1}, verify, {"BLOCK": 256})
    assert shapes and all(s["CAUSAL"] == 1 for s in shapes)


def test_a_stand_in_the_module_refuses_is_left_out_and_named():
    shapes, refused = tuned_problem_shapes({"M": 64, "N": 4096}, [{"M": 7, "N": 300}], {"BLOCK": 256},
                                           lambda s: s["N"] < 400)
    assert shapes == [{"M": 64, "N": 300}] and refused == [{"M": 7, "N": 512}]


def test_static_mode_verifies_grouped_heads_at_their_real_count(write, tmp_path):
    # a stand-in that changed the key/value heads alone would be a problem the reference refuses (32
    # query heads over 8 kv heads, on 4 query heads); that must neither fail every candidate nor be skipped
    write("kernel.py", GROUPED_COPY)
    recipe = write("recipe.toml", """
[kernel]
generator = "dsl"
file = "kernel.py"
[problem]
dtype = "float32"
shapes = [{H = 32, H_KV = 8, N = 64}]
[search]
trials = 2
sampler = "grid"
timeout = 120
[search.space]
BLOCK = [64, 128]
[targets]
names = ["nvidia:sm_90"]
""")
    result = kt("--json", "tune", recipe, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    entry = json.loads(next((tmp_path / "out").rglob("manifest.json")).read_text())["results"][0]
    checked = [s for s in entry["verification"]["shapes"]]
    assert {"H": 32, "H_KV": 8, "N": 64} in checked or any(s["H_KV"] == 8 and s["H"] % 8 == 0 for s in checked)
    assert "stand_ins_refused" not in entry["verification"]


def test_static_mode_rejects_a_config_right_only_at_small_shapes(write, tmp_path):
    write("kernel.py", ROW_SOFTMAX)
    recipe = write("recipe.toml", """
[kernel]
generator = "dsl"
file = "kernel.py"
[problem]
dtype = "float32"
shapes = [{M = 16, N = 4096}]
[search]
trials = 3
sampler = "grid"
timeout = 120
[search.space]
BLOCK = [1024, 2048, 4096]
[targets]
names = ["nvidia:sm_90"]
""")
    result = kt("tune", recipe, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    art = tmp_path / "out" / "recipe.kt"
    trials = [json.loads(line) for line in (art / "trials.jsonl").read_text().splitlines()]
    kinds = {t["params"]["BLOCK"]: t["failure_kind"] for t in trials}
    assert kinds == {1024: "wrong", 2048: "wrong", 4096: "ok"}, kinds
    wrong = [t["message"] for t in trials if t["failure_kind"] == "wrong"]
    assert all("'M': 7, 'N': " in m and "elements fail" in m and "worst at [" in m for m in wrong), wrong
    manifest = json.loads((art / "manifest.json").read_text())
    assert [r["params"]["BLOCK"] for r in manifest["results"]] == [4096]
    assert manifest["results"][0]["verification"]["tolerance"]["why"].startswith("torch.testing.assert_close")


@pytest.mark.parametrize("value,key,says", [
    ("inf", "problem.tolerance", "finite positive number"),
    ("0", "problem.tolerance", "finite positive number"),
    ('{rtol = 1e-2}', "problem.tolerance.why", "say why"),
    ('{rtol = 1e-2, why = "x", rtool = 1}', "problem.tolerance.rtool", "unknown key"),
    ('{rtol = -1, why = "x"}', "problem.tolerance.rtol", "finite number >= 0"),
    ('{rtol = nan, why = "x"}', "problem.tolerance.rtol", "finite number >= 0"),
])
def test_a_bad_tolerance_is_one_line(write, tmp_path, value, key, says):
    recipe = write("r.toml", f'[kernel]\ngenerator = "templates"\nname = "softmax"\n[problem]\ntolerance = {value}\n')
    result = kt("tune", recipe, "--out", tmp_path / "art")
    line = one_error_line(result)
    assert result.exit_code == 2 and f"r.toml: {key}" in line and says in line, line
    assert not (tmp_path / "art").exists()


def test_the_judge_kernels_load_in_the_background_and_torch_judges_meanwhile(monkeypatch):
    # a cold run's first comparison compiled them (seconds) while the device waited: now the first
    # request for a dtype pair starts one loading thread and is answered at once (torch judges), a
    # later one uses them once loaded; an output too large for torch's temporaries waits for them
    import threading
    import time

    from kt_cli.evaluate import judge_kernel

    monkeypatch.setattr(judge_kernel, "_loaded", set())
    monkeypatch.setattr(judge_kernel, "_loading", {})
    release, loads = threading.Event(), []

    def slow_load(key):
        loads.append(key)
        release.wait(10)
        with judge_kernel._loading_lock:
            judge_kernel._loaded.add(key)

    monkeypatch.setattr(judge_kernel, "_load", slow_load)
    out, ref = torch.empty(8, dtype=torch.bfloat16, device="meta"), torch.empty(8, dtype=torch.float64, device="meta")
    started = time.perf_counter()
    assert [judge_kernel.loaded(out, ref, False) for _ in range(3)] == [False] * 3
    assert time.perf_counter() - started < 5 and len(loads) == 1  # one thread, nobody waited for it
    assert not judge_kernel.loaded(torch.empty(8, dtype=torch.int32, device="meta"), ref, False)  # not its dtypes
    release.set()
    judge_kernel._loading[loads[0]].join(10)
    assert judge_kernel.loaded(out, ref, False)
    release.clear()
    huge = torch.empty(judge_kernel.TORCH_WHILE_LOADING_MAX + 1, dtype=torch.float16, device="meta")
    threading.Timer(0.3, release.set).start()
    assert judge_kernel.loaded(huge, ref, True) and len(loads) == 2  # (rms is another variant) waited for it


@pytest.mark.parametrize("backend, arch, warp", [("cuda", 90, 32), ("cuda", 80, 32), ("hip", "gfx942", 64)])
def test_the_device_judge_kernels_compile_for_each_vendor(backend, arch, warp):
    # the judge compiles them on the device the first time it judges there: a vendor Triton refuses
    # them for would fail every verification of that vendor's measured runs
    from kt_cli.evaluate import judge_kernel
    from kt_cli.evaluate.cross_compile import cross_compile
    from kt_cli.kernel import Launch

    def meta(dtype):
        return torch.empty(8192, dtype=dtype, device="meta")

    rms = {"ref_ptr": meta(torch.float64), "rms_ptr": meta(torch.float64), "row_len": 4096,
           "BLOCK": judge_kernel.ROW_BLOCK}
    block = {"out_ptr": meta(torch.bfloat16), "ref_ptr": meta(torch.float64), "rms_ptr": meta(torch.float64),
             "n": 8192, "row_len": 4096, "atol": 1e-5, "rtol": 1e-2, "rms_weight": 1e-3,
             "failed_ptr": meta(torch.int32), "worst_ptr": meta(torch.float64), "worst_at_ptr": meta(torch.int64),
             "error_ptr": meta(torch.float64), "size_ptr": meta(torch.float64), "HAS_RMS": True,
             "BLOCK": judge_kernel.BLOCK}
    for fn, args in ((judge_kernel._row_rms, rms), (judge_kernel._judge_block, block)):
        compiled = cross_compile(Launch(fn, (1,), args, {"num_warps": 4}), backend, arch, warp)
        assert compiled.asm.get("amdgcn" if backend == "hip" else "ptx")
