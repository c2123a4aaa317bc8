"""Early exits: a candidate whose compile runs past the compile deadline ends as `slow_compile`, one
whose binary spills past the recipe's cap ends as `spills`; neither blocks the others or wins, and
both are counted where the other failure kinds are."""

import json
import time

import pytest

from kt_cli.evaluate.early_exits import COMPILE_FLOOR_S, CompileDeadline, spill_breach
from kt_cli.evaluate.failure import WorkerFailure
from tests.helpers import SCALED_ADD, dsl_recipe, kt, one_error_line

# scaled_add whose compile request hangs for BLOCK=4096: its launch, recorded on meta tensors in the
# compile worker, sleeps (the device would never see it). SEEDS puts that point first in the study.
SLOW_TO_COMPILE = SCALED_ADD.replace(
    "def launch(k, inputs, params):\n",
    "SEEDS = [{'BLOCK': 4096}]\n\n\ndef launch(k, inputs, params):\n"
    "    if params['BLOCK'] == 4096 and inputs['x'].device.type == 'meta':\n"
    "        import time\n        time.sleep(600)\n")

# one row per program, held whole in registers: 8192 fp32 values on one warp spill (ptxas puts
# several hundred bytes a thread in the stack frame for sm_90), on four warps they fit
ROW_NORM = '''
import torch
import triton
import triton.language as tl

OUTPUTS = ("out",)
VERIFY_SHAPES = [{"M": 3, "N": 1000}]


@triton.jit
def norm_rows(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n
    tl.store(out_ptr + row * n + offs, d / tl.sqrt(var + 1e-5), mask=mask)


def make_inputs(shape, dtype, t):
    return {"x": t.randn(shape["M"], shape["N"], dtype=dtype), "out": t.empty(shape["M"], shape["N"], dtype=dtype)}


def reference(inputs):
    x = inputs["x"].double()
    return {"out": (x - x.mean(1, keepdim=True)) / torch.sqrt(x.var(1, unbiased=False, keepdim=True) + 1e-5)}


def launch(k, inputs, params):
    m, n = inputs["x"].shape
    k.norm_rows[(m,)](inputs["out"], inputs["x"], n, BLOCK=params["BLOCK"])
'''


def _trials(out) -> list[dict]:
    return [json.loads(line) for line in (out / "recipe.kt" / "trials.jsonl").read_text().splitlines()]


def test_the_compile_deadline_follows_the_compiles_seen():
    deadline = CompileDeadline(timeout=120.0)
    assert deadline.seconds() == 120.0  # nothing seen yet: the per-candidate timeout
    for seconds in (1.0, 2.0):
        deadline.record(seconds)
    assert deadline.seconds() == 120.0
    deadline.record(30.0)  # one slow compile among fast ones moves the median little
    assert deadline.seconds() == 10.0 == max(COMPILE_FLOOR_S, 5 * 2.0)
    for seconds in (4.0, 4.0, 4.0):
        deadline.record(seconds)
    assert deadline.seconds() == 20.0
    for seconds in (60.0,) * 10:
        deadline.record(seconds)
    assert deadline.seconds() == 120.0  # never above the per-candidate timeout
    assert CompileDeadline(timeout=60.0, fixed=5.0).seconds() == 5.0
    assert CompileDeadline(timeout=3.0, fixed=5.0).seconds() == 3.0  # --timeout lower than the recipe's key


def test_only_a_timeout_cut_short_by_the_deadline_is_a_slow_compile():
    deadline = CompileDeadline(timeout=60.0, fixed=5.0)
    slow = deadline.verdict(WorkerFailure("timeout", "no answer after 5 s"), 5.0)
    assert slow.kind == "slow_compile" and "longer than 5 s" in slow.message
    assert deadline.verdict(WorkerFailure("timeout", "hang"), 60.0).kind == "timeout"
    assert deadline.verdict(WorkerFailure("compile_error", "ptxas"), 5.0).kind == "compile_error"


def test_the_spill_cap_decides_on_the_binary_resources():
    assert spill_breach({"spill_bytes": 0, "registers": 255}, 0) == ""
    assert spill_breach({"spill_bytes": 128}, 128) == ""
    assert "spills 808 B per thread" in spill_breach({"spill_bytes": 808}, 256)
    assert "search.max_spill_bytes = 0" in spill_breach({"spill_bytes": 4}, 0)


def test_a_slow_compile_ends_at_its_deadline_and_does_not_hold_up_the_others(write, tmp_path):
    recipe = dsl_recipe(write, SLOW_TO_COMPILE, space="BLOCK = [256, 512, 1024, 4096]",
                        extra='sampler = "grid"\ncompile_timeout = 20', trials=4)
    started = time.monotonic()
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 200  # the sleeping compile alone would take 600 s
    kinds = {t["params"]["BLOCK"]: t for t in _trials(tmp_path / "art")}
    assert {b: t["failure_kind"] for b, t in kinds.items()} == {256: "ok", 512: "ok", 1024: "ok",
                                                                4096: "slow_compile"}
    assert "longer than 20 s" in kinds[4096]["message"] and kinds[4096]["seconds"] < 60
    # the slow point went first (SEEDS), yet the others were evaluated while it compiled
    progress = [line for line in result.stderr.splitlines() if line.startswith("[")]
    first_slow = next(i for i, line in enumerate(progress) if "slow_compile" in line)
    assert first_slow >= 2, progress
    assert "slow_compile 1" in result.stdout and "BLOCK=4096" not in result.stdout


# ROW_NORM after a launch that spills nothing: the spilling launch is not the first
SCALED_THEN_NORM = ROW_NORM.replace('''

def make_inputs(shape, dtype, t):''', '''

@triton.jit
def halve(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 0.5, mask=offs < n)


def make_inputs(shape, dtype, t):''').replace('''    m, n = inputs["x"].shape
    k.norm_rows''', '''    m, n = inputs["x"].shape
    k.halve[(triton.cdiv(m * n, 128),)](inputs["out"], m * n, BLOCK=128)
    k.norm_rows''')


def test_a_later_launch_over_the_spill_cap_ends_the_candidate_as_spills(write, tmp_path):
    # every launch's binary is read for spills, not only the first one's (until 2026-11-27 a sequence
    # kernel's recurrence, launched after its input projection, could spill unseen)
    recipe = dsl_recipe(write, SCALED_THEN_NORM, space="BLOCK = [8192]\nnum_warps = [1, 4]",
                        shapes="[{M = 4, N = 8192}]", extra='sampler = "grid"\nmax_spill_bytes = 256', trials=2)
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.output
    by_warps = {t["params"]["num_warps"]: t for t in _trials(tmp_path / "art")}
    assert by_warps[4]["failure_kind"] == "ok"
    assert by_warps[1]["failure_kind"] == "spills" and by_warps[1]["resources"]["spill_bytes"] > 256


def test_a_candidate_over_the_spill_cap_ends_as_spills_and_never_wins(write, tmp_path):
    recipe = dsl_recipe(write, ROW_NORM, space="BLOCK = [8192]\nnum_warps = [1, 4]", shapes="[{M = 4, N = 8192}]",
                        extra='sampler = "grid"\nmax_spill_bytes = 256', trials=2)
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.output
    by_warps = {t["params"]["num_warps"]: t for t in _trials(tmp_path / "art")}
    assert by_warps[4]["failure_kind"] == "ok" and by_warps[4]["resources"]["spill_bytes"] <= 256
    spilled = by_warps[1]
    assert spilled["failure_kind"] == "spills" and spilled["resources"]["spill_bytes"] > 256
    assert not spilled["verification"]  # decided on the binary, before anything ran it
    manifest = json.loads((tmp_path / "art" / "recipe.kt" / "manifest.json").read_text())
    assert manifest["results"][0]["params"]["num_warps"] == 4
    assert manifest["results"][0]["failures"] == {"ok": 1, "spills": 1}
    shown = kt("show", tmp_path / "art" / "recipe.kt")
    assert "spills 1" in shown.output


@pytest.mark.parametrize("extra,message", [
    ("compile_timeout = 0", "search.compile_timeout: must be a positive, finite number of seconds"),
    ("compile_timeout = 90", "search.compile_timeout: 90 s is more than search.timeout (60 s)"),
    ('compile_timeout = "fast"', "search.compile_timeout: must be int or float"),
    ("max_spill_bytes = -1", "search.max_spill_bytes: must be at least 0"),
    ("max_spill_bytes = 1.5", "search.max_spill_bytes: must be int"),
])
def test_bad_early_exit_keys_are_one_line_and_exit_2(write, tmp_path, extra, message):
    result = kt("tune", dsl_recipe(write, extra=extra), "--out", tmp_path / "art")
    assert result.exit_code == 2 and message in one_error_line(result)
    assert not (tmp_path / "art").exists()


def test_on_a_device_a_spilling_candidate_is_never_verified_or_timed(fake_device, write, tmp_path, monkeypatch):
    # the fake vendor's binary spills past 64 values a thread: BLOCK 8192 on one warp holds 256, 768 B
    # past the default cap of 256 B; on four warps it holds 64
    log = tmp_path / "compiled.log"
    monkeypatch.setenv("KT_FAKE_COMPILE_LOG", str(log))
    recipe = dsl_recipe(write, space="BLOCK = [8192]\nnum_warps = [1, 4]", extra='sampler = "grid"', trials=2)
    result = kt("tune", recipe, "--target", "fake:cpu", "--out", tmp_path / "art")
    assert result.exit_code == 0, result.output
    by_warps = {t["params"]["num_warps"]: t for t in _trials(tmp_path / "art")}
    assert by_warps[4]["failure_kind"] == "ok" and by_warps[4]["mode"] == "measured"
    spilled = by_warps[1]
    assert spilled["failure_kind"] == "spills" and spilled["resources"]["spill_bytes"] == 768
    assert not spilled["verification"] and not spilled["stats"]  # the device never saw it
    # nor did the compile pool build its verification shape (N = 1000) once the problem's binary spilled
    built = log.read_text().splitlines()
    assert any("(1000,)" in line and "('num_warps', 4)" in line for line in built)
    assert not any("(1000,)" in line and "('num_warps', 1)" in line for line in built), built


# scaled_add whose launch, recorded on meta tensors in the compile worker, first works the CPU for a
# while (about half a second on an idle core), then refuses the point: an answer after pure CPU work
WORKS_THEN_REFUSES = SCALED_ADD.replace(
    "def launch(k, inputs, params):\n",
    "def launch(k, inputs, params):\n"
    "    if inputs['x'].device.type == 'meta':\n"
    "        n = 0\n        for i in range(10_000_000):\n            n += i\n"
    "        raise ValueError(f'refused after {n}')\n")


def test_a_compile_that_waits_for_cores_is_not_cut_short_by_its_deadline(tmp_path):
    """kt's compile workers run niced; with every core busy with un-niced work, a compile's wall time
    is mostly waiting for a core. Its deadline counts the time it works, not the time it waits: the
    request whose wall time far exceeds the deadline is answered, while the same request held to wall
    time is killed (which shows the host was indeed that busy)."""
    import multiprocessing
    import os

    from kt_cli import plugins
    from kt_cli.evaluate.pool import NICE_ENV, WorkerPool
    from kt_cli.kernel import KernelSource
    from kt_cli.types import Candidate

    (tmp_path / "k.py").write_text(WORKS_THEN_REFUSES)
    source = KernelSource(str(tmp_path / "k.py"), "dsl", "k")
    target = plugins.target("nvidia:sm_90")
    candidate = Candidate(source.path, {"BLOCK": 1024}, target.name, {"N": 4096}, "float32", "measured")
    payload = {"source": source, "candidate": candidate, "target": target}
    counted, walled = (WorkerPool(1, {"TRITON_INTERPRET": "0", NICE_ENV: "10"}) for _ in range(2))
    for pool in (counted, walled):
        pool.workers[0].ensure_started()  # started before the host is busy: a start is not a request
    # two un-niced spinners a core: with one a core, a CI run once saw the niced request get enough of a core
    # to end within its wall deadline (the host not busy enough for the test's premise)
    hogs = [multiprocessing.get_context("spawn").Process(target=_spin, daemon=True)
            for _ in range(2 * (os.cpu_count() or 2))]
    try:
        for hog in hogs:
            hog.start()
        time.sleep(1.0)
        with pytest.raises(WorkerFailure) as answered:
            counted.call("compile", payload, 2.0, limit=120.0)
        assert answered.value.kind == "invalid" and "refused after" in answered.value.message
        with pytest.raises(WorkerFailure) as killed:
            walled.call("compile", payload, 2.0)
        assert all(hog.is_alive() for hog in hogs)
        assert killed.value.kind == "timeout"
    finally:
        for hog in hogs:
            hog.kill()
        counted.stop()
        walled.stop()


def _spin() -> None:
    while True:
        pass
