"""kt_cli.load: which config a shape gets, the launch itself (Triton's interpreter, in a subprocess),
refusals, and kt export --format triton-configs."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kt_cli.errors import BadInput
from kt_cli.artifact.runtime import load, select, shape_distance
from tests.helpers import process_env
from tests.recorded import H100, MI300X, amd_artifact, entry, kt_cli_runner, nvidia_artifact, tamper, write_artifact

ROOT = Path(__file__).resolve().parent.parent


def small_artifact(tmp_path):
    """float32, nvidia:sm_90: a small odd problem tuned with the two-pass path, a large one single-pass."""
    return write_artifact(tmp_path, "softmax", [
        entry("nvidia:sm_90", {"M": 37, "N": 300}, {"BLOCK_N": 128, "num_warps": 4, "num_stages": 1}, 3e-6, H100,
              "NVIDIA H100 80GB HBM3", 1.1, dtype_bytes=4),
        entry("nvidia:sm_90", {"M": 4096, "N": 4096}, {"BLOCK_N": 4096, "num_warps": 8, "num_stages": 2}, 30e-6,
              H100, "NVIDIA H100 80GB HBM3", 1.4, dtype_bytes=4),
        entry("amd:gfx942", {"M": 37, "N": 300}, {"BLOCK_N": 512, "num_warps": 4, "waves_per_eu": 2}, 3e-6, MI300X,
              "AMD Instinct MI300X", 1.0, dtype_bytes=4),
    ], dtype="float32")


def test_exact_shape_else_nearest_by_log_distance(tmp_path):
    entries = json.loads((nvidia_artifact(tmp_path) / "manifest.json").read_text())["results"]
    assert select(entries, "nvidia:sm_90", {"M": 4096, "N": 32768})["params"]["BLOCK_N"] == 2048
    # 16384x4096 is one doubling from 32768x4096 and far (log2) from 4096x32768
    assert select(entries, "nvidia:sm_90", {"M": 16384, "N": 4096})["shape"] == {"M": 32768, "N": 4096}
    assert select(entries, "nvidia:sm_90", {"M": 2048, "N": 65536})["shape"] == {"M": 4096, "N": 32768}
    assert shape_distance({"M": 4096}, {"M": 2048}) == shape_distance({"M": 4096}, {"M": 8192}) == 1.0
    # the estimated sm_100 config is the only one for that target, so every sm_100 shape gets it
    assert select(entries, "nvidia:sm_100", {"M": 8, "N": 8})["mode"] == "estimated"


def test_no_config_for_the_target_or_shape_names_what_there_is(tmp_path):
    entries = json.loads((nvidia_artifact(tmp_path) / "manifest.json").read_text())["results"]
    with pytest.raises(BadInput, match=r"no tuned config for target amd:gfx950; the artifact has: "
                                       r"nvidia:sm_100, nvidia:sm_90"):
        select(entries, "amd:gfx950", {"M": 1, "N": 1})
    with pytest.raises(BadInput, match=r"other size names .*M=32768,N=4096; M=4096,N=32768"):
        select(entries, "nvidia:sm_90", {"B": 4, "N": 4096})


def test_load_refuses_a_tampered_or_incompatible_artifact(tmp_path):
    art = amd_artifact(tmp_path)
    tamper(art)
    with pytest.raises(BadInput, match="sha256 does not match kernel.source_sha256"):
        load(art, target="amd:gfx942")
    other = nvidia_artifact(tmp_path)
    manifest = json.loads((other / "manifest.json").read_text())
    (other / "manifest.json").write_text(json.dumps({**manifest, "schema": 2}))
    with pytest.raises(BadInput, match="schema: version 2"):
        load(other, target="nvidia:sm_90")


def test_load_checks_its_arguments_before_any_call(tmp_path):
    import kt_cli

    art = nvidia_artifact(tmp_path)
    with pytest.raises(BadInput, match=r"target 'bogus': not a target kt knows; must be one of: .*nvidia:sm_90"):
        kt_cli.load(art, target="bogus")
    with pytest.raises(BadInput, match=r"no tuned config for target amd:gfx950; the artifact has: nvidia:sm_100"):
        kt_cli.load(art, target="amd:gfx950")
    with pytest.raises(BadInput, match=r"path 42: must be the path of a NAME.kt artifact"):
        kt_cli.load(42, target="nvidia:sm_90")
    with pytest.raises(TypeError):  # a misspelt keyword is not taken for something else
        kt_cli.load(art, targte="nvidia:sm_90")
    assert kt_cli.load(art, target="nvidia:sm_90").target == "nvidia:sm_90"


def test_load_without_a_gpu_asks_for_a_target(tmp_path):
    from kt_cli.errors import EnvironmentProblem
    from kt_cli.plugins import devices

    if devices():
        pytest.skip("a GPU is present")
    with pytest.raises(EnvironmentProblem, match="no GPU present; pass target="):
        load(nvidia_artifact(tmp_path))


LAUNCH = textwrap.dedent("""
    import json, sys, torch
    import kt_cli
    kernel = kt_cli.load(sys.argv[1], target=sys.argv[2])
    out = {}
    for m, n in [(37, 300), (40, 260), (3000, 4000)]:
        x = torch.randn(m, n) * 3
        if m == 3000:  # only ask which config: interpreting a 3000-row launch is slow
            out[f"{m}x{n}"] = {"params": kernel.config({"M": m, "N": n})["params"]}
            continue
        inputs = {"x": x, "y": torch.full((m, n), float("nan"))}
        kernel(inputs)
        err = float((inputs["y"].double() - torch.softmax(x.double(), -1)).abs().max())
        out[f"{m}x{n}"] = {"params": kernel.config({"M": m, "N": n})["params"], "err": err}
    try:
        kernel({"x": torch.randn(4, 4, dtype=torch.float16), "y": torch.empty(4, 4, dtype=torch.float16)})
    except Exception as exc:
        out["fp16"] = f"{type(exc).__name__}: {exc}"
    try:
        kernel({"x": torch.randn(4, 4)})
    except Exception as exc:
        out["missing"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(out))
""")


def test_the_loaded_kernel_launches_the_chosen_config_under_the_interpreter(tmp_path):
    art = small_artifact(tmp_path)
    env = process_env(TRITON_INTERPRET="1")
    run = subprocess.run([sys.executable, "-c", LAUNCH, str(art), "nvidia:sm_90"], capture_output=True, text=True,
                         env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["37x300"]["params"]["BLOCK_N"] == 128 and out["37x300"]["err"] < 1e-5
    assert out["40x260"]["params"]["BLOCK_N"] == 128 and out["40x260"]["err"] < 1e-5  # nearest: 37x300
    assert out["3000x4000"]["params"]["BLOCK_N"] == 4096  # nearest: 4096x4096
    assert out["fp16"].startswith("BadInput") and "no input is float32" in out["fp16"]
    assert out["missing"].startswith("BadInput") and "inputs has no 'y'" in out["missing"]


def test_export_writes_triton_configs_per_target(tmp_path):
    art = small_artifact(tmp_path)
    out = tmp_path / "configs.py"
    result = kt_cli_runner()("export", art, "--format", "triton-configs", "--out", out)
    assert result.exit_code == 0, result.output
    namespace: dict = {}
    exec(compile(out.read_text(), str(out), "exec"), namespace)
    nv, amd = namespace["CONFIGS"]["nvidia:sm_90"], namespace["CONFIGS"]["amd:gfx942"]
    # the constexprs the launch computes are in the config too (ROWS, ROW_STAGES: 1 where the point has none)
    assert [c.kwargs for c in nv] == [{"BLOCK_N": 128, "ROWS": 1, "ROW_STAGES": 1},
                                      {"BLOCK_N": 4096, "ROWS": 1, "ROW_STAGES": 1}]
    assert [(c.num_warps, c.num_stages) for c in nv] == [(4, 1), (8, 2)]
    assert amd[0].kwargs == {"BLOCK_N": 512, "ROWS": 1, "ROW_STAGES": 1, "waves_per_eu": 2}  # where AMD's backend reads it
    # what the launch computes per call: heuristics and the grid, as the library module declares them
    assert namespace["HEURISTICS"]["SINGLE_PASS"]({"BLOCK_N": 128, "n_cols": 300}) is False
    assert namespace["HEURISTICS"]["ROWS"]({"BLOCK_N": 512, "n_cols": 300, "ROWS": 4}) == 4
    assert namespace["HEURISTICS"]["ROWS"]({"BLOCK_N": 128, "n_cols": 300, "ROWS": 4}) == 1
    assert namespace["GRID"]({"n_rows": 37, "ROWS": 4}) == (10,)
    assert namespace["KEYS"]["nvidia:sm_90"] == [{"M": 37, "N": 300}, {"M": 4096, "N": 4096}]
    tamper(art)
    refused = kt_cli_runner()("export", art)
    assert refused.exit_code == 2 and "sha256 does not match" in refused.stderr


@pytest.mark.gpu
def test_the_loaded_kernel_runs_on_the_gpu(tmp_path):
    import torch

    from kt_cli.plugins import devices

    target = devices()[0].target
    art = write_artifact(tmp_path, "softmax", [
        entry(target, {"M": 1024, "N": 1024}, {"BLOCK_N": 1024, "num_warps": 4, "num_stages": 1}, 10e-6, H100,
              "gpu", 1.0)])
    kernel = load(art)
    x = torch.randn(512, 1000, device="cuda", dtype=torch.bfloat16)
    inputs = {"x": x, "y": torch.empty_like(x)}
    kernel(inputs)
    assert torch.allclose(inputs["y"].float(), torch.softmax(x.float(), -1), atol=1e-2)


def _replace_kernel(art, source: bytes) -> None:
    import hashlib

    (art / "softmax.py").write_bytes(source)
    manifest = json.loads((art / "manifest.json").read_text())
    manifest["kernel"].update(generator="dsl", source_sha256=hashlib.sha256(source).hexdigest())
    (art / "manifest.json").write_text(json.dumps(manifest))


def test_export_refuses_what_a_config_cannot_carry(tmp_path):
    art = small_artifact(tmp_path)
    # the library softmax without its HEURISTICS: a config holds one SINGLE_PASS, the launch passes two
    undeclared = (ROOT / "plugins" / "kt_templates" / "kernels" / "softmax.py").read_text()
    undeclared = undeclared[:undeclared.index("HEURISTICS = {")] + undeclared[undeclared.index("\n\n@triton.jit"):]
    _replace_kernel(art, undeclared.encode())
    refused = kt_cli_runner()("export", art)
    assert refused.exit_code == 2, refused.output
    assert "kt's launch passes SINGLE_PASS=False, the exported config True" in refused.stderr
    assert "declare it in the module's HEURISTICS" in refused.stderr and "kt_cli.load" in refused.stderr
    # the tutorial softmax's PROGRAMS sizes the grid and is no kernel argument
    _replace_kernel(art, (ROOT / "tests" / "data" / "tutorial_softmax.py").read_bytes())
    manifest = json.loads((art / "manifest.json").read_text())
    manifest["dtype"] = "float32"
    manifest["results"] = [r for r in manifest["results"] if r["target"] == "nvidia:sm_90"]
    for r in manifest["results"]:
        r["params"] = {"PROGRAMS": 4, "num_warps": 4, "num_stages": 1}
    (art / "manifest.json").write_text(json.dumps(manifest))
    refused = kt_cli_runner()("export", art)
    assert refused.exit_code == 2, refused.output
    assert "knob 'PROGRAMS' is not an argument of softmax_kernel" in refused.stderr and "kt_cli.load" in refused.stderr


EXPORTED_UNDER_AUTOTUNE = textwrap.dedent("""
    import json, sys, torch, triton
    sys.path.insert(0, sys.argv[2])
    from softmax import softmax_kernel  # the artifact's own kernel module
    namespace = {}
    exec(open(sys.argv[1]).read(), namespace)
    out = {}
    for i, cfg in enumerate(namespace["CONFIGS"]["nvidia:sm_90"]):
        h = namespace["HEURISTICS"]
        for heuristics in (h, {"SINGLE_PASS": h["SINGLE_PASS"]}):  # as exported; without the ROWS rewrite
            # as the exported module's docstring says: autotune over heuristics, the other arguments, GRID
            kernel = triton.autotune(configs=[cfg], key=["n_cols"])(triton.heuristics(heuristics)(softmax_kernel))
            for m, n in [(16, 1000), (13, 200)]:  # problems the artifact was not tuned for
                x, y = torch.randn(m, n), torch.full((m, n), float("nan"))
                kernel[namespace["GRID"]](y, x, m, n, x.stride(0), y.stride(0))
                key = f"{i} {m}x{n}" + ("" if heuristics is h else " bare")
                out[key] = float((y.double() - torch.softmax(x.double(), -1)).abs().nan_to_num(1.0).max())
    print(json.dumps(out))
""")


def test_exported_configs_run_under_the_interpreter_on_a_problem_not_in_the_artifact(tmp_path):
    """Pasted into @triton.autotune with the exported heuristics and grid, every config computes the
    softmax of a problem the artifact has no config for: 4 rows a program where a row fits the block,
    one row a program (two passes) where it does not; without the heuristics, rows stay unwritten."""
    art = write_artifact(tmp_path, "softmax", [
        entry("nvidia:sm_90", {"M": 64, "N": 256}, {"BLOCK_N": 256, "ROWS": 4, "ROW_STAGES": 2, "num_warps": 4,
                                                    "num_stages": 1}, 3e-6, H100, "NVIDIA H100 80GB HBM3", 1.1, 4),
        entry("nvidia:sm_90", {"M": 37, "N": 300}, {"BLOCK_N": 128, "ROWS": 1, "ROW_STAGES": 1, "num_warps": 4,
                                                    "num_stages": 1}, 3e-6, H100, "NVIDIA H100 80GB HBM3", 1.1, 4),
    ], dtype="float32")
    module = tmp_path / "configs.py"
    assert kt_cli_runner()("export", art, "--out", module).exit_code == 0
    assert "triton.Config({'BLOCK_N': 256, 'ROWS': 4, 'ROW_STAGES': 2}" in module.read_text()
    run = subprocess.run([sys.executable, "-c", EXPORTED_UNDER_AUTOTUNE, str(module), str(art)],
                         capture_output=True, text=True, env=process_env(TRITON_INTERPRET="1"), timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    errors = json.loads(run.stdout.strip().splitlines()[-1])
    exported = {k: e for k, e in errors.items() if not k.endswith("bare")}
    assert len(exported) == 4 and all(e < 1e-5 for e in exported.values()), errors
    assert errors["0 16x1000 bare"] == 1.0  # 4 rows a program on the two-pass path: rows left unwritten
