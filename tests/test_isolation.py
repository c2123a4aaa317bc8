"""A candidate that segfaults, hangs or computes a wrong answer never stops a study and never wins."""

import json

from tests.helpers import SCALED_ADD, dsl_recipe, kt

# BLOCK picks the misbehaviour; the grid space makes sure every point is tried.
MISBEHAVING = SCALED_ADD.replace('''def launch(k, inputs, params):
    n = inputs["x"].numel()''', '''def launch(k, inputs, params):
    if params["BLOCK"] == 512:
        import ctypes, sys
        print("CUDA error: an illegal memory access was encountered", file=sys.stderr, flush=True)
        ctypes.string_at(0)  # segfault
    if params["BLOCK"] == 1024:
        while True:  # hang
            pass
    n = inputs["x"].numel()''').replace("alpha * x + y", "tl.where(BLOCK == 2048, alpha * x - y, alpha * x + y)") + '''

def traffic(shape, dtype, params):
    # the wrong variant claims to move almost nothing, so the cost model would rank it first
    return 1.0 if params["BLOCK"] == 2048 else 3.0 * shape["N"] * dtype.itemsize
'''


def test_crash_hang_and_wrong_candidates_are_recorded_and_never_win(write, tmp_path):
    recipe = dsl_recipe(write, kernel_text=MISBEHAVING, space="BLOCK = [256, 512, 1024, 2048, 4096]",
                        extra='sampler = "grid"', trials=5)
    recipe.write_text(recipe.read_text().replace("timeout = 60", "timeout = 10"))
    result = kt("tune", recipe, "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    art = tmp_path / "art" / "recipe.kt"
    trials = [json.loads(line) for line in (art / "trials.jsonl").read_text().splitlines()]
    kinds = {t["params"]["BLOCK"]: t["failure_kind"] for t in trials}
    assert kinds == {256: "ok", 512: "crash", 1024: "timeout", 2048: "wrong", 4096: "ok"}
    crash = next(t["message"] for t in trials if t["failure_kind"] == "crash")
    assert "SIGSEGV" in crash and crash.endswith("CUDA error: an illegal memory access was encountered")  # its last words
    manifest = json.loads((art / "manifest.json").read_text())
    (entry,) = manifest["results"]
    assert entry["params"]["BLOCK"] in (256, 4096)
    assert entry["failures"] == {"ok": 2, "crash": 1, "timeout": 1, "wrong": 1}
