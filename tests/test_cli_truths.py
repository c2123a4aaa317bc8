"""What the command line says is true: no stray warnings, the same global flags everywhere, the
datasheet without a GPU, and errors before output."""

import json

import pytest

from tests.helpers import dsl_recipe, kt, one_error_line


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """One `kt tune` of a dsl recipe in a fresh directory, output where a recipe puts it by default,
    TRITON_DEFAULT_FP_FUSION unset: (the directory, kt's result)."""
    here = tmp_path_factory.mktemp("run")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("TRITON_DEFAULT_FP_FUSION", raising=False)
        mp.chdir(here)

        def write(name, text):
            (here / name).write_text(text)
            return here / name

        yield here, kt("tune", dsl_recipe(write, trials=1), "--quiet", "--json")


def test_tune_sets_tritons_fp_fusion_knob_so_triton_does_not_warn_and_records_it(local_run):
    here, result = local_run
    assert result.exit_code == 0, result.stderr
    art = here / "artifacts" / "recipe.kt"
    assert "FP_FUSION" not in result.stderr + result.stdout + (art / "trials.jsonl").read_text()
    assert json.loads((art / "manifest.json").read_text())["provenance"]["triton_default_fp_fusion"] == "1"


def test_tune_quiet_json_prints_the_results_as_json_and_nothing_else(local_run):
    here, result = local_run
    assert result.stderr == ""  # no progress lines, no notes
    printed = json.loads(result.stdout)
    assert printed["artifact"].endswith("recipe.kt") and printed["this_run"] == {"ok": 1}
    assert printed["results"][0]["mode"] == "estimated" and printed["results"][0]["params"]["BLOCK"] > 0


def test_every_command_takes_the_global_flags_after_its_name():
    import click

    from kt_cli.cli import cli

    names = cli.list_commands(click.Context(cli))
    assert {"tune", "kernels", "show", "check", "compare", "export", "status", "devices", "plugins"} <= set(names)
    for name in names:
        result = kt(name, "--debug", "--quiet", "--json", "--help")
        assert result.exit_code == 0, (name, result.stderr)


def _runnable_arguments(command, missing) -> tuple[list[str], bool]:
    """(arguments that get `command` past click to kt's own checks: `missing`, a path that is not there,
    for each required argument, a value for each required option; whether the command passes what
    follows them on to another program, so that a flag typed last is that program's)."""
    import click

    args, passes_on = [], False
    for param in command.params:
        if isinstance(param, click.Argument) and param.required:
            passes_on = param.type is click.UNPROCESSED
            args += ["--", str(missing)] if passes_on else [str(missing)]
        elif param.required:
            args += [param.opts[0], "x"]
    return args, passes_on


def test_every_command_accepts_each_global_flag_wherever_it_is_typed(tmp_path):
    """`kt --json NAME ...`, `kt NAME --json ...` and `kt NAME ... --json`, for every registered command:
    the flag is never refused, the command ends in its own result or kt's one-line error (a traceback
    only with --debug), and --json output is JSON."""
    import click

    from kt_cli.cli import GLOBAL_FLAGS, cli

    names = cli.list_commands(click.Context(cli))
    assert {"tune", "init", "estimate", "finalize", "check", "devices", "plugins", "serve"} <= set(names)
    for name in names:
        args, passes_on = _runnable_arguments(cli.get_command(click.Context(cli), name), tmp_path / "missing")
        if name == "serve":
            args = ["--status"]  # (without it, a server that outlives the test)
        for flag, _, _ in GLOBAL_FLAGS:
            typed = [[flag, name, *args], [name, flag, *args]] + ([] if passes_on else [[name, *args, flag]])
            for line in typed:
                result = kt(*line)
                said = result.stderr.strip().splitlines()
                assert "No such option" not in result.stderr and "lists the options" not in result.stderr, (line, said)
                assert result.exit_code in (0, 2) and ("Traceback" in result.output) == (
                    flag == "--debug" and result.exit_code == 2), (line, result.output)
                if result.exit_code == 2:
                    assert said[-1].startswith("kt: error: ") and (flag == "--debug" or len(said) == 1), (line, said)
                elif flag == "--json":
                    json.loads(result.stdout)


def test_a_global_flag_means_the_same_before_and_after_the_command(tmp_path):
    assert json.loads(kt("plugins", "--json").stdout) == json.loads(kt("--json", "plugins").stdout)
    missing = tmp_path / "missing.toml"
    for args in (("--debug", "tune", missing), ("tune", missing, "--debug")):
        result = kt(*args)
        assert result.exit_code == 2 and "Traceback" in result.stderr and "recipe file not found" in result.stderr
    assert "Traceback" not in kt("tune", missing).stderr


def test_kt_status_finds_a_local_runs_study_by_name_recipe_or_artifact(local_run, monkeypatch):
    here, _ = local_run
    monkeypatch.chdir(here)
    for what in ("recipe", "recipe.toml", "artifacts/recipe.kt", "artifacts/recipe.kt/"):
        result = kt("status", what)
        assert result.exit_code == 0, (what, result.stderr)
        assert result.stdout.startswith("recipe|") and "evaluated 1 of 1" in result.stdout
    missing = kt("status", "other")
    assert missing.exit_code == 2 and "no local study at artifacts/other.study.db" in one_error_line(missing)


def test_kt_devices_without_a_gpu_lists_every_targets_datasheet_and_refuses_measure():
    result = kt("devices")
    assert result.exit_code == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines() if line.startswith(("nvidia:", "amd:"))}
    assert set(rows) >= {"nvidia:sm_80", "nvidia:sm_90", "nvidia:sm_100", "amd:gfx942", "amd:gfx950"}
    assert rows["nvidia:sm_90"][1] == "989" and rows["nvidia:sm_90"][-1] == "3.35"  # bf16 TFLOP/s, DRAM TB/s
    assert rows["nvidia:sm_80"][3] == "-"  # no fp8 on sm_80: nothing made up
    data = json.loads(kt("devices", "--json").stdout)
    assert data["target_peaks"]["amd:gfx942"]["dram_bytes_per_s"] == 5.3e12
    measured = kt("devices", "--measure")
    assert measured.exit_code == 2 and "--measure: no GPU present" in one_error_line(measured)
    assert measured.stdout == ""


def _readme_commands() -> dict[str, str]:
    """README's `## Commands` block: {command name: its lines (the usage line and its continuations)}."""
    from tests.helpers import ROOT

    block = (ROOT / "README.md").read_text().split("## Commands\n", 1)[1].split("\n## ", 1)[0]
    found: dict[str, str] = {}
    name = None
    for line in block.splitlines():
        if line.startswith("    kt "):
            name = line.split()[1]
            found[name] = found.get(name, "") + line
        elif line.startswith("      ") and name:
            found[name] += line
        elif not line.startswith("    "):
            name = None
    return found


def test_readme_lists_every_command_and_each_of_its_options():
    import click

    from kt_cli.cli import GLOBAL_FLAGS, cli

    listed = _readme_commands()
    ctx = click.Context(cli)
    global_opts = {opt for opt, _, _ in GLOBAL_FLAGS} | {"--help"}
    for name in cli.list_commands(ctx):
        assert name in listed, f"README's command list lacks kt {name}"
        options = {o for p in cli.get_command(ctx, name).params for o in p.opts if o.startswith("--")}
        missing = sorted(o for o in options - global_opts if o not in listed[name])
        assert not missing, f"README's line for kt {name} lacks {missing}"


def test_every_document_the_docs_name_is_in_the_repository():
    import re

    from tests.helpers import ROOT

    for doc in [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        named = set(re.findall(r"\b((?:docs|benchmarks|recipes|tests|\.ci)/[\w./-]+\.(?:md|py|toml)|\.ci/run)\b",
                               text))
        linked = {t for t in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text)}
        for name in sorted(named):
            assert (ROOT / name).exists(), f"{doc.name} names {name}, which is not in the repository"
        for link in sorted(linked):
            assert (doc.parent / link).exists(), f"{doc.name} links {link}, which is not in the repository"
