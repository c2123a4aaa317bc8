"""A candidate that prints without end, writes files where it runs and leaves its mess behind: kt's
terminal gets none of it, the output directory none of it, the trial keeps a few KB of what it
printed, the scratch directories go away, and the artifact follows the user's umask."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from tests.helpers import KT_COMMAND, SCALED_ADD, dsl_recipe_text, process_env

FLOOD_MB = 100
HOSTILE = SCALED_ADD.replace('''def launch(k, inputs, params):
''', f'''_flooded = False


def launch(k, inputs, params):
    global _flooded
    if not _flooded:  # once per worker process: {FLOOD_MB} MB on stdout and stderr together
        import os as _os
        import sys as _sys

        _flooded = True
        print("CANDIDATE-SAYS-HELLO", flush=True)
        line = "x" * 1023 + "\\n"
        for i in range({FLOOD_MB} * 512):
            _sys.stdout.write(line)
            _os.write(2, line.encode())
        print("CANDIDATE-SAYS-BYE", flush=True)
        with open("planted.txt", "w") as f:  # a relative write: where does it land?
            f.write("mine")
''')
RECIPE = dsl_recipe_text(space="BLOCK = [256]", trials=1, timeout=120)


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """One `kt tune` of the hostile candidate, run from inside its own output directory with umask 002,
    after a killed kt left a scratch directory behind."""
    from kt_cli.evaluate.containment import SCRATCH_PREFIX
    from kt_cli.processes import MACHINE_TAG

    root = tmp_path_factory.mktemp("hostile")
    out, tmp = root / "out", root / "tmp"
    out.mkdir()
    tmp.mkdir()
    (root / "kernel.py").write_text(HOSTILE)
    (root / "recipe.toml").write_text(RECIPE)
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = tmp / f"{SCRATCH_PREFIX}{MACHINE_TAG}-{gone.pid}-leftover"
    stale.mkdir()
    done = subprocess.run([*KT_COMMAND, "tune", str(root / "recipe.toml"), "--out", "."], cwd=out,
                          env=process_env(PYTHONWARNINGS="ignore", TMPDIR=str(tmp)), capture_output=True,
                          timeout=600, preexec_fn=lambda: os.umask(0o002))
    return root, done


def test_a_candidate_printing_100_mb_does_not_reach_the_terminal(hostile_run):
    _, done = hostile_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(done.stdout) + len(done.stderr) < 100_000
    assert b"CANDIDATE-SAYS" not in done.stdout + done.stderr


def test_the_trial_keeps_the_start_and_end_of_what_it_printed(hostile_run):
    root, _ = hostile_run
    (trial,) = [json.loads(line) for line in (root / "out" / "recipe.kt" / "trials.jsonl").read_text().splitlines()]
    assert trial["failure_kind"] == "ok", trial["message"]
    printed = trial["output"]
    assert "CANDIDATE-SAYS-HELLO" in printed and "CANDIDATE-SAYS-BYE" in printed, printed
    assert "not kept" in printed and len(printed) <= 4200, printed


def test_relative_writes_land_in_scratch_and_scratch_is_removed(hostile_run):
    root, _ = hostile_run
    assert not list(root.rglob("planted.txt"))  # neither the output directory nor anywhere kt can see
    assert not list((root / "tmp").glob("kt-worker-*"))  # every worker's scratch, and the one a killed kt left


def test_the_artifact_follows_the_umask(hostile_run):
    root, _ = hostile_run
    art = root / "out" / "recipe.kt"
    assert stat.S_IMODE(art.stat().st_mode) == 0o775
    assert {stat.S_IMODE(p.stat().st_mode) for p in art.iterdir()} == {0o664}


def test_output_keeps_each_requests_first_and_last_kb_however_often_it_is_emptied():
    from kt_cli.evaluate.containment import OUTPUT_KEEP, OUTPUT_SPILL, Scratch

    scratch = Scratch()
    try:
        out = os.open(scratch.output_path, os.O_WRONLY | os.O_APPEND)
        os.write(out, b"first line\n")
        for _ in range(3):  # three times past the spill size while the request runs
            os.write(out, b"." * (OUTPUT_SPILL + 10))
            scratch.spill()
        os.write(out, b"last line\n")
        text = scratch.take()
        assert text.startswith("first line\n") and text.endswith("." * 100 + "last line\n")
        dropped = 11 + 3 * (OUTPUT_SPILL + 10) + 10 - 2 * OUTPUT_KEEP
        assert f"[... {dropped} bytes not kept ...]" in text and len(text) < 2 * OUTPUT_KEEP + 100
        os.write(out, b"next request\n")
        assert scratch.take() == "next request\n"
        os.close(out)
    finally:
        scratch.remove()
    assert not os.path.exists(scratch.dir)


def test_a_dead_workers_last_words_are_its_error_line_not_its_stack_trace():
    """What torch prints when a CUDA error aborts a process: the reason comes first, then the frames."""
    from kt_cli.evaluate.containment import Scratch

    scratch = Scratch()
    try:
        frames = "".join(f"frame #{i}: <unknown function> + 0x{i:x} (0x7f in /usr/lib/libcuda.so.1)\n" for i in range(60))
        with open(scratch.output_path, "w") as out:
            out.write("terminate called after throwing an instance of 'c10::Error'\n"
                      "  what():  CUDA error: an illegal memory access was encountered\n"
                      "CUDA kernel errors might be asynchronously reported at some other API call.\n"
                      "Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:44\n"
                      + frames)
        assert scratch.last_words() == "what():  CUDA error: an illegal memory access was encountered"
    finally:
        scratch.remove()
