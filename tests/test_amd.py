"""The AMD vendor plugin: targets, knobs, occupancy, cross-compilation of the whole kernel library for
gfx90a/gfx942/gfx950, the rocprofv3 timer, `kt devices` on a ROCm machine, and a static-mode tune.
No AMD GPU exists where these run: everything here is cross-compiled, interpreted or faked."""

import json
import os
import re
import stat
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from kt_cli.cli import cli
from kt_cli.plugins import load_plugins, target
from kt_cli.evaluate.failure import WorkerFailure
from tests.kernel_checks import compile_for, first_valid_params, stop_workers
from vendor_amd.occupancy import unified_vgprs, waves_per_simd, waves_per_simd_by_registers, workgroups_per_cu

ROOT = Path(__file__).resolve().parent.parent
ARCHS = ["gfx90a", "gfx942", "gfx950"]


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    stop_workers()


def _library():
    from kt_templates import available

    return available()


# --- targets and peaks ----------------------------------------------------------------------------


def test_amd_targets_carry_the_datasheet_lds_and_cache_sizes():
    g90a, g942, g950 = (target(f"amd:{a}").properties for a in ARCHS)
    assert [p["lds_per_unit"] for p in (g90a, g942, g950)] == [64 * 1024, 64 * 1024, 160 * 1024]
    assert all(p["warp_size"] == 64 for p in (g90a, g942, g950))
    # MI300X: 8 XCDs x 4 MiB L2, 256 MiB Infinity Cache; MI250X GCD: 8 MiB L2, none
    assert (g942["l2_bytes"], g942["infinity_cache_bytes"]) == (32 * 2**20, 256 * 2**20)
    assert g90a["infinity_cache_bytes"] == 0
    assert "float8_e4m3" not in target("amd:gfx90a").peaks  # CDNA2 has no fp8 matrix instructions


@pytest.mark.parametrize("arch", ARCHS)
def test_fp8_e4m3_property_matches_the_matrix_instruction_triton_emits(arch):
    """fp8_e4m3=1 exactly where an OCP e4m3 dot compiles to an fp8 MFMA, not an fp16 one."""
    import triton
    import triton.language as tl

    import torch

    from kt_cli.evaluate.cross_compile import cross_compile
    from kt_cli.kernel import Launch

    @triton.jit
    def dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr):
        i = tl.arange(0, B)
        a = tl.load(a_ptr + i[:, None] * B + i[None, :])
        b = tl.load(b_ptr + i[:, None] * B + i[None, :])
        tl.store(c_ptr + i[:, None] * B + i[None, :], tl.dot(a, b))

    fp8 = torch.empty(64 * 64, dtype=torch.float8_e4m3fn, device="meta")
    args = {"a_ptr": fp8, "b_ptr": fp8, "c_ptr": torch.empty(64 * 64, device="meta"), "B": 64}
    try:
        asm = cross_compile(Launch(dot, (1,), args, {"num_warps": 4}), "hip", arch, 64).asm["amdgcn"]
    except Exception:  # older Tritons refuse OCP fp8 where the arch cannot run it at all
        asm = ""
    mfma = set(re.findall(r"v_mfma_\w+", asm))
    native_fp8 = any("fp8" in m or "f8f6f4" in m for m in mfma)  # gfx942 FNUZ: fp8_fp8; gfx950: f8f6f4
    assert native_fp8 == bool(target(f"amd:{arch}").properties["fp8_e4m3"]), mfma


# --- occupancy ------------------------------------------------------------------------------------


def test_occupancy_follows_the_unified_register_file_granules():
    p = target("amd:gfx942").properties
    # 56 VGPRs, no AGPRs: align(56, 8) = 56 -> 512 // 56 = 9, capped at 8 waves/SIMD
    assert waves_per_simd_by_registers(56, 0, 20, p) == 8
    # 65 VGPRs -> 72 -> 512 // 72 = 7
    assert waves_per_simd_by_registers(65, 0, 20, p) == 7
    # 90 VGPRs + 40 AGPRs: AGPRs start at align(90, 4) = 92; 92 + 40 = 132 -> 136 -> 512 // 136 = 3
    assert unified_vgprs(90, 40) == 136
    assert waves_per_simd_by_registers(90, 40, 20, p) == 3
    # 128 VGPRs + 128 AGPRs = 256 -> 2 waves; 256 + 256 = 512 -> 1 wave
    assert waves_per_simd_by_registers(128, 128, 20, p) == 2
    assert waves_per_simd_by_registers(256, 256, 20, p) == 1
    # SGPRs: 800 per SIMD in granules of 16; 102 -> 112 -> 800 // 112 = 7
    assert waves_per_simd_by_registers(32, 0, 102, p) == 7


def test_workgroups_per_cu_names_the_resource_that_limits_them():
    g942, g950 = target("amd:gfx942").properties, target("amd:gfx950").properties
    # 4-wave workgroups, 128 VGPRs: 4 waves/SIMD x 4 SIMDs = 16 waves = 4 groups (LDS would allow 64 KiB/8 KiB = 8)
    assert workgroups_per_cu(128, 0, 32, 8192, 4, g942) == (4, "registers")
    # 40 KiB of LDS: 64 KiB holds 1 group on gfx942; gfx950's 160 KiB holds 4
    assert workgroups_per_cu(32, 0, 32, 40 * 1024, 4, g942) == (1, "lds")
    assert workgroups_per_cu(32, 0, 32, 40 * 1024, 4, g950) == (4, "lds")
    # 2-wave groups, few registers: 32 wave slots would fit 16 groups, and 16 barriers cap it at 16 too
    assert workgroups_per_cu(32, 0, 32, 0, 2, g942) == (16, "waves")
    # 1-wave groups take no barrier: 32 of them fit
    assert workgroups_per_cu(32, 0, 32, 0, 1, g942) == (32, "waves")
    # 8-wave groups with 128 VGPRs: 4 waves/SIMD -> 16 waves -> 2 groups -> 4 waves per SIMD resident
    groups, _ = workgroups_per_cu(128, 0, 32, 0, 8, g942)
    assert waves_per_simd(groups, 8, g942) == 4


@pytest.mark.parametrize("arch", ARCHS)
def test_waves_per_simd_agree_with_llvm_on_a_kernel_that_uses_agprs(arch):
    """A 256x256 bf16 tile on 4 waves fills the 256 VGPRs and spills its accumulators into AGPRs: one
    wave per SIMD by kt's rules and by the occupancy LLVM prints into the assembly."""
    params = {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 2}
    res = compile_for("matmul", f"amd:{arch}", MATMUL_SHAPE, "bfloat16", params)["resources"]
    assert res["extra"]["agprs"] > 0
    assert res["extra"]["waves_per_simd"] == res["extra"]["llvm_waves_per_simd"] == 1
    assert res["limiter"] == "registers"


def test_occupancy_counts_the_dynamic_lds_llvm_does_not_see():
    """128x128x64 bf16, 2 stages: (128 + 128) * 64 * 2 B * 2 stages = 64 KiB of LDS a workgroup, plus
    Triton's padding; gfx950's 160 KiB holds 2 workgroups = 8 waves = 2 per SIMD. LLVM, which sees no
    static LDS, reports 3."""
    params = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 2}
    res = compile_for("matmul", "amd:gfx950", MATMUL_SHAPE, "bfloat16", params)["resources"]
    assert 64 * 1024 <= res["shared_bytes"] <= 80 * 1024
    assert (res["limiter"], res["programs_per_unit"], res["extra"]["waves_per_simd"]) == ("lds", 2, 2.0)
    assert res["extra"]["llvm_waves_per_simd"] > 2


# --- knobs --------------------------------------------------------------------------------------


MATMUL_SHAPE = {"M": 512, "N": 512, "K": 512}


def test_kpack_2_on_gfx950_is_an_invalid_trial_before_compiling():
    params = first_valid_params("matmul", "bfloat16", MATMUL_SHAPE, "amd:gfx950")
    with pytest.raises(WorkerFailure) as exc:
        compile_for("matmul", "amd:gfx950", MATMUL_SHAPE, "bfloat16", {**params, "kpack": 2})
    assert exc.value.kind == "invalid" and "kpack=2" in exc.value.message
    # the same point is fine where kpack=2 exists
    out = compile_for("matmul", "amd:gfx942", MATMUL_SHAPE, "bfloat16", {**params, "kpack": 2})
    assert out["resources"]["registers"] > 0


@pytest.mark.parametrize("bad,words", [({"matrix_instr_nonkdim": 64}, "matrix_instr_nonkdim=64"),
                                       ({"waves_per_eu": 9}, "waves_per_eu=9"),
                                       ({"num_warps": 32}, "1024")])
def test_values_an_amd_arch_lacks_are_refused_with_the_reason(bad, words):
    from kt_cli.plugins import vendor

    reason = vendor("amd").why_unrunnable({"BLOCK_N": 256, **bad}, target("amd:gfx942"))
    assert reason and words in reason
    # the same point is fine for an NVIDIA target, which kt never shows the AMD vendor
    assert vendor("nvidia").why_unrunnable({"BLOCK_N": 256, **bad}, target("nvidia:sm_90")) is None


def test_vendor_knobs_reach_only_their_own_vendor_through_kt_tune(tmp_path, plugin):
    recipe = tmp_path / "r.toml"
    recipe.write_text("""
[kernel]
generator = "templates"
name = "softmax"
[problem]
dtype = "float16"
shapes = [{M = 256, N = 1024}]
[search]
trials = 2
seed = 1
sampler = "grid"  # two points per target, each tried once
[search.space]
BLOCK_N = [1024]
num_warps = [4]
[search.space.amd]
waves_per_eu = [1, 2]
kpack = [1]
[search.space.nvidia]
maxnreg = [128, 168]
""")
    seen = []
    plugin(types.SimpleNamespace(kt_trial_finished=_recorder(seen)), "record-trials")
    result = CliRunner().invoke(cli, ["tune", str(recipe), "--target", "nvidia:sm_90", "--target", "amd:gfx942",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    amd = [p for t, p in seen if t == "amd:gfx942"]
    nvidia = [p for t, p in seen if t == "nvidia:sm_90"]
    assert amd and nvidia
    assert all({"waves_per_eu", "kpack"} <= set(p) and "maxnreg" not in p for p in amd)
    assert all("maxnreg" in p and not {"waves_per_eu", "kpack", "matrix_instr_nonkdim"} & set(p) for p in nvidia)


def _recorder(seen):
    from kt_cli.hookspecs import hookimpl

    @hookimpl
    def kt_trial_finished(result):
        seen.append((result.target, dict(result.params)))

    return kt_trial_finished


def test_an_amd_knob_at_the_top_level_of_the_space_is_refused(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text((ROOT / "recipes/softmax.toml").read_text().replace(
        "[search.space]\n", "[search.space]\nkpack = [1, 2]\n"))
    result = CliRunner().invoke(cli, ["tune", str(recipe), "--target", "amd:gfx942", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "search.space.kpack" in result.output and "[search.space.amd]" in result.output


# --- the kernel library, cross-compiled -------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", _library())
def test_every_library_kernel_cross_compiles_for_amd(name, arch):
    from kt_cli.recipe.parse import load_recipe

    recipe = load_recipe(ROOT / "recipes" / f"{name}.toml")  # the problem a user would tune
    shape, dtype = recipe.problem.shapes[0], recipe.problem.dtype
    params = first_valid_params(name, dtype, shape, f"amd:{arch}")
    out = compile_for(name, f"amd:{arch}", shape, dtype, params)
    res = out["resources"]
    assert res["registers"] > 0 and res["threads"] % 64 == 0
    assert 1 <= res["programs_per_unit"] and 0 < res["extra"]["waves_per_simd"] <= 8
    assert res["shared_bytes"] <= target(f"amd:{arch}").properties["lds_per_unit"]
    assert out["estimate"]["seconds"] > 0


# --- measured mode: timers and devices ------------------------------------------------------------


def test_rocprofv3_kernel_trace_is_parsed_into_dispatch_times():
    from vendor_amd.rocprof import durations, parse_kernel_trace

    # the CSV follows rocprofv3's documented kernel_trace.csv columns (written by hand: no AMD GPU here)
    dispatches = parse_kernel_trace(ROOT / "tests/data/rocprofv3_kernel_trace.csv")
    assert len(dispatches) == 6
    mm = dispatches[-1]
    assert (mm.vgprs, mm.agprs, mm.lds_bytes, mm.grid[0]) == (128, 64, 32768, 65536)
    times = durations(dispatches, "softmax")
    # 4 softmax dispatches, the first (95 us, cold) dropped: 12.0, 12.5, 11.8 us
    assert times == {"softmax_kernel": pytest.approx([12.0e-6, 12.5e-6, 11.8e-6])}


def _fake_rocprofv3(bin_dir: Path) -> None:
    """A rocprofv3 stand-in that writes the sample trace where `-d DIR` says, like the real one."""
    sample = ROOT / "tests/data/rocprofv3_kernel_trace.csv"
    script = bin_dir / "rocprofv3"
    script.write_text(f"""#!/bin/sh
while [ "$1" != "--" ]; do [ "$1" = "-d" ] && out="$2"; shift; done
mkdir -p "$out/host/123" && cp {sample} "$out/host/123/kt_kernel_trace.csv"
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_kt_rocprof_time_reports_each_kernels_median(tmp_path, monkeypatch):

    load_plugins().hook.kt_register_commands(cli=cli)
    monkeypatch.setenv("PATH", str(tmp_path))
    missing = CliRunner().invoke(cli, ["rocprof-time", "--", "true"])
    assert missing.exit_code == 2 and "rocprofv3 is not on PATH" in missing.output
    _fake_rocprofv3(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin:/bin")
    result = CliRunner().invoke(cli, ["rocprof-time", "--json", "--kernel", "softmax", "--", "python", "x.py"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["kernel"] for r in rows] == ["softmax_kernel"]
    assert rows[0]["median"] == pytest.approx(12.0e-6) and rows[0]["calls"] == 3


def _fake_rocm_torch(monkeypatch):
    props = types.SimpleNamespace(name="AMD Instinct MI300X", gcnArchName="gfx942:sramecc+:xnack-",
                                  multi_processor_count=304, total_memory=192 * 2**30, L2_cache_size=4 * 2**20)
    fake = types.SimpleNamespace(
        version=types.SimpleNamespace(hip="6.4.43482", cuda=None),
        cuda=types.SimpleNamespace(is_available=lambda: True, device_count=lambda: 2,
                                   get_device_properties=lambda i: props))
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)


def test_kt_devices_lists_rocm_gpus_with_arch_cus_memory_and_rocm(monkeypatch):
    _fake_rocm_torch(monkeypatch)
    result = CliRunner().invoke(cli, ["devices"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "MI300X" in line]
    assert len(lines) == 2
    for field in ("amd:gfx942", "arch=gfx942", "cu_count=304", "memory=192 GiB", "rocm=6.4.43482"):
        assert field in lines[0]
    data = json.loads(CliRunner().invoke(cli, ["devices", "--json"]).output)
    assert data["devices"][0]["peaks"]["bfloat16"] == pytest.approx(1307.4e12)


def test_hip_timer_flushes_twice_the_whole_l2_and_infinity_cache(monkeypatch):
    _fake_rocm_torch(monkeypatch)
    from kt_cli.plugins import devices, vendor

    device = devices()[0]
    timer = vendor(device.vendor).timer(device)
    # torch reports one XCD's 4 MiB; the chip has 8 x 4 MiB of L2 and 256 MiB of Infinity Cache
    assert timer.name == "hip-events" and timer.flush_bytes == 2 * (32 + 256) * 2**20


# --- a whole static-mode tune ---------------------------------------------------------------------


def test_kt_tune_softmax_for_mi300_and_mi350_writes_estimated_amd_results(tmp_path):
    out = tmp_path / "tmp"
    result = CliRunner().invoke(cli, ["tune", str(ROOT / "recipes/softmax.toml"), "--target", "amd:gfx942",
                                      "--target", "amd:gfx950", "--trials", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    manifest = json.loads(next(out.glob("*.kt/manifest.json")).read_text())
    entries = manifest["results"]
    assert {e["target"] for e in entries} == {"amd:gfx942", "amd:gfx950"}
    for e in entries:
        assert e["mode"] == "estimated"
        assert {"agprs", "sgprs", "waves_per_simd"} <= set(e["resources"]["extra"])
        assert e["resources"]["threads"] % 64 == 0
    shown = CliRunner().invoke(cli, ["show", str(next(out.glob("*.kt")))])
    assert shown.exit_code == 0 and "waves_per_simd=" in shown.output and "agprs=" in shown.output


# --- on a ROCm GPU only ---------------------------------------------------------------------------


@pytest.mark.amd
def test_measured_tune_on_the_present_amd_gpu_stays_under_its_peak(tmp_path):
    from kt_cli.plugins import devices

    here = next(d for d in devices() if d.vendor == "amd")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["tune", str(ROOT / "recipes/softmax.toml"), "--target", here.target,
                                      "--trials", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    for e in json.loads(next(out.glob("*.kt/manifest.json")).read_text())["results"]:
        assert e["mode"] == "measured" and e["stats"]["timer"] == "hip-events"
        assert 0 < e["stats"]["fraction_of_peak"] <= 1.0


@pytest.mark.amd
def test_rocprofv3_times_a_real_kernel(tmp_path):
    from vendor_amd.rocprof import available, durations, trace_command

    if not available():
        pytest.skip("rocprofv3 is not on PATH")
    script = tmp_path / "run.py"
    script.write_text("import torch\nx = torch.randn(4096, 4096, device='cuda')\n"
                      "for _ in range(6):\n    torch.softmax(x, -1)\ntorch.cuda.synchronize()\n")
    times = durations(trace_command(["python", str(script)]), "softmax")
    assert times and all(len(t) == 5 and all(0 < s < 0.1 for s in t) for t in times.values())
