"""kt compare on recorded artifacts of two vendors (tuned on different machines)."""

import csv
import io
import json
import sys

import pytest

from tests.recorded import amd_artifact, kt_cli_runner, nvidia_artifact, tamper, write_artifact


@pytest.fixture
def kt():
    return kt_cli_runner()


@pytest.fixture
def two_vendors(tmp_path):
    return nvidia_artifact(tmp_path), amd_artifact(tmp_path)


def rows(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["rows"]


def test_artifacts_from_two_machines_join_per_problem(kt, two_vendors):
    nv, amd = two_vendors
    result = kt("compare", nv, amd)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    big = [line for line in lines if "M=32768,N=4096" in line]
    assert [line.split()[2] for line in big] == ["amd:gfx942", "nvidia:sm_100", "nvidia:sm_90"]
    # H100: 2*32768*4096*2 B in 180 us = 2983 GB/s = 89% of 3.35 TB/s; MI300X: 3835 GB/s = 72% of 5.3 TB/s
    h100 = next(line for line in big if "nvidia:sm_90" in line)
    assert "89%" in h100 and "1.50x" in h100 and "BLOCK_N=4096" in h100
    assert "72%" in next(line for line in big if "amd:gfx942" in line)


def test_a_directory_means_every_artifact_inside(kt, two_vendors, tmp_path):
    nv, amd = two_vendors
    assert rows(kt("compare", tmp_path / "h100", tmp_path / "mi300x", "--format", "json")) == \
        rows(kt("compare", nv, amd, "--format", "json"))
    found = rows(kt("compare", tmp_path / "h100", "--format", "json"))
    assert {r["target"] for r in found} == {"nvidia:sm_90", "nvidia:sm_100"}
    empty = tmp_path / "empty"
    empty.mkdir()
    result = kt("compare", empty)
    assert result.exit_code == 2 and "no *.kt artifact inside" in result.stderr


def test_an_estimate_is_marked_in_every_format(kt, two_vendors):
    nv, amd = two_vendors
    table = kt("compare", nv, amd).stdout
    b200 = next(line for line in table.splitlines() if "nvidia:sm_100" in line)
    assert "(est)" in b200 and "estimated" in b200
    assert "mixed: some figures are measured, some are cost-model estimates" in table
    markdown = kt("compare", nv, amd, "--format", "markdown").stdout
    assert markdown.startswith("| kernel")
    assert "(est)" in next(line for line in markdown.splitlines() if "nvidia:sm_100" in line)
    assert "(est)" not in next(line for line in markdown.splitlines() if "nvidia:sm_90" in line)
    data = json.loads(kt("compare", nv, amd, "--format", "json").stdout)
    assert {r["target"]: r["estimated"] for r in data["rows"]}["nvidia:sm_100"] is True
    assert not any(r["estimated"] for r in data["rows"] if r["target"] != "nvidia:sm_100")
    assert any(n.startswith("mixed") for n in data["notes"])
    result = kt("compare", nv, amd, "--format", "csv")
    parsed = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(parsed) == 5
    assert {r["target"]: r["estimated"] for r in parsed}["nvidia:sm_100"] == "True"
    assert {r["target"]: r["speedup"] for r in parsed}["nvidia:sm_100"] == ""
    assert "mixed" in result.stderr


def test_a_vendor_asked_for_but_absent_is_a_note(kt, two_vendors):
    nv, _ = two_vendors
    result = kt("compare", nv, "--vendors", "amd,nvidia")
    assert result.exit_code == 0, result.output
    assert "no results for vendor amd" in result.stdout
    assert "nvidia:sm_90" in result.stdout
    only_amd = rows(kt("compare", *two_vendors, "--vendors", "amd", "--format", "json"))
    assert {r["vendor"] for r in only_amd} == {"amd"}
    result = kt("compare", nv, "--vendors", "intel")
    assert result.exit_code == 2 and "must be one of: amd, nvidia" in result.stderr


def test_the_same_result_in_two_artifacts_shows_once_with_a_note(kt, two_vendors, tmp_path):
    nv, _ = two_vendors
    manifest = json.loads((nv / "manifest.json").read_text())
    again = write_artifact(tmp_path / "rerun", "softmax", manifest["results"][:1], created="2026-11-22T00:00:00+00:00")
    data = json.loads(kt("compare", nv, again, "--format", "json").stdout)
    assert sum(r["target"] == "nvidia:sm_90" and r["problem"] == "M=32768,N=4096" for r in data["rows"]) == 1
    assert any("showing the newer" in n for n in data["notes"])


def test_plot_without_matplotlib_is_refused_before_the_table(kt, two_vendors, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed: `import matplotlib` fails
    out = tmp_path / "peak.png"
    result = kt("compare", *two_vendors, "--plot", out)
    assert result.exit_code == 2
    assert result.stderr.strip() == "kt: error: --plot: matplotlib is not installed; pip install kt-tune[plot]"
    assert not out.exists() and result.stdout == ""  # refused before the table, not after it


def _overlapping(boxes) -> list:
    return [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a[1].overlaps(b[1])]


def test_the_plot_reads_title_values_legend_beside_and_missing_results_marked(kt, two_vendors, tmp_path):
    """The PNG `kt compare --plot` writes, and the figure it draws looked at: a title; each bar's % of
    peak written on it (an estimate as ~N% (est)); the legend beside the axes, over no bar; a problem a
    device has no result for marked so; no two labels on top of each other."""
    pytest.importorskip("matplotlib")
    import matplotlib.image

    from kt_cli.reports.compare import compare, figure

    out = tmp_path / "peak.png"
    result = kt("compare", *two_vendors, "--plot", out)
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:4] == b"\x89PNG"
    pixels = matplotlib.image.imread(out)
    assert pixels.shape[1] > 600 and len({tuple(p) for p in pixels[::7, ::7].reshape(-1, pixels.shape[2])}) > 5

    fig = figure(compare([str(p) for p in two_vendors], None))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    assert ax.get_title().startswith("softmax: % of each device's peak")
    texts = [t for t in ax.texts if t.get_text()]
    values = sorted(t.get_text() for t in texts if t.get_text() != "no result")
    assert values == sorted(["72%", "~84% (est)", "89%", "68%", "84%"])  # every bar, as the table rounds it
    assert [t.get_text() for t in texts].count("no result") == 1  # nvidia:sm_100 at M=4096,N=32768
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.x0 >= ax.get_window_extent(renderer).x1  # beside the axes: over no bar
    labels = [(t.get_text(), t.get_window_extent(renderer)) for t in texts + list(ax.get_xticklabels())]
    assert not _overlapping(labels)


def test_a_tampered_or_incompatible_artifact_is_refused_in_one_line(kt, two_vendors):
    nv, amd = two_vendors
    tamper(amd)
    result = kt("compare", nv, amd)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "sha256 does not match" in result.stderr
    manifest = json.loads((nv / "manifest.json").read_text())
    (nv / "manifest.json").write_text(json.dumps({**manifest, "schema": 99}))
    result = kt("compare", nv)
    assert result.exit_code == 2 and "schema: version 99, this kt reads 1" in result.stderr
    (nv / "manifest.json").write_text(json.dumps({**manifest, "kernel": {**manifest["kernel"], "source_file": "../x.py"}}))
    result = kt("compare", nv)
    assert result.exit_code == 2 and "the manifest was modified" in result.stderr
    del manifest["results"][1]["shape"]
    (nv / "manifest.json").write_text(json.dumps(manifest))
    result = kt("compare", nv)
    assert result.exit_code == 2 and "results[1]: target, shape" in result.stderr


def test_a_real_static_mode_artifact_compares_checks_and_loads(kt, tmp_path):
    """kt tune's own artifact (no GPU: cross-compiled, estimated) through compare, check and load."""
    from kt_cli.artifact.runtime import load

    recipe = tmp_path / "softmax.toml"
    recipe.write_text(
        '[kernel]\ngenerator = "templates"\nname = "softmax"\n'
        '[problem]\ndtype = "float32"\nshapes = [{M = 4096, N = 4096}]\n'
        '[search]\ntrials = 2\nseed = 0\n[search.space]\nBLOCK_N = [4096]\nnum_warps = [8, 16]\nnum_stages = [1]\n'
        '[targets]\nnames = ["nvidia:sm_90", "amd:gfx942"]\n')
    tuned = kt("tune", recipe, "--out", tmp_path / "out")
    assert tuned.exit_code == 0, tuned.output
    data = json.loads(kt("compare", tmp_path / "out", "--format", "json").stdout)
    assert {(r["target"], r["mode"], r["estimated"]) for r in data["rows"]} == \
        {("nvidia:sm_90", "estimated", True), ("amd:gfx942", "estimated", True)}
    assert all(0 < r["fraction_of_peak"] <= 1 for r in data["rows"])
    checked = kt("check", tmp_path / "out" / "softmax.kt")
    assert checked.exit_code == 2 and "only estimated results" in checked.stderr
    kernel = load(tmp_path / "out" / "softmax.kt", target="amd:gfx942")
    assert kernel.config({"M": 1000, "N": 3000})["params"]["BLOCK_N"] == 4096
