"""Cross-vendor comparison: the results of several artifacts (typically one per vendor, tuned on
different machines) joined per kernel and problem, as % of each device's peak. An estimated figure
is marked as such in every format; nothing estimated passes for a measurement."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from kt_cli.artifact import store as artifact
from kt_cli.errors import BadInput, EnvironmentProblem
from kt_cli.reports.format import estimate_mark, fraction, params as format_params, seconds

FORMATS = ("table", "markdown", "json", "csv")
ESTIMATE_NOTE = "(est): cost-model estimate (no device of that target where it was tuned), not a measurement"


@dataclass(frozen=True)
class Row:
    kernel: str
    problem: str
    vendor: str
    target: str
    device: str  # the device measured on, or "static" for an estimate
    mode: str  # "measured" or "estimated"
    seconds: float | None
    tflops: float | None
    gbps: float | None
    fraction_of_peak: float | None
    speedup: float | None  # over the reference op timed in the same run (measured only)
    params: dict
    artifact: str

    @property
    def estimated(self) -> bool:
        return self.mode == "estimated"


def artifact_paths(arguments: list[str]) -> list[Path]:
    """Each argument is an artifact (NAME.kt/) or a directory whose *.kt children are artifacts."""
    found: list[Path] = []
    for arg in arguments:
        path = Path(arg)
        if (path / artifact.MANIFEST).is_file():
            found.append(path)
        elif path.is_dir():
            inside = sorted(p for p in path.glob("*.kt") if p.is_dir())
            if not inside:
                raise BadInput(f"{path}: no *.kt artifact inside; give NAME.kt directories written by kt tune")
            found.extend(inside)
        else:
            raise BadInput(f"{path}: not a kt artifact or a directory of them")
    return list(dict.fromkeys(found))


def rows_of(manifest: dict) -> list[Row]:
    rows = []
    for e in manifest["results"]:
        if e.get("params") is None:
            continue
        stats = e.get("stats") or {}
        device = (e.get("device") or {}).get("name") or "static"
        flops, moved = stats.get("flops_per_s"), stats.get("bytes_per_s")
        rows.append(Row(
            kernel=manifest["name"], problem=e["shape_key"], vendor=e["target"].split(":", 1)[0],
            target=e["target"], device=device, mode=e["mode"], seconds=e.get("seconds"),
            tflops=flops / 1e12 if flops else None, gbps=moved / 1e9 if moved else None,
            fraction_of_peak=stats.get("fraction_of_peak"),
            speedup=stats.get("speedup") if e["mode"] == "measured" else None,
            params=e["params"], artifact=manifest["_path"]))
    return rows


@dataclass(frozen=True)
class Comparison:
    rows: list[Row]
    notes: list[str]


def compare(arguments: list[str], vendors: list[str] | None = None) -> Comparison:
    """Read (and integrity-check) every artifact, join their rows, keep the asked vendors."""
    from kt_cli.plugins import vendors as known_vendors

    if vendors:
        known = sorted(known_vendors())
        for v in vendors:
            if v not in known:
                raise BadInput(f"--vendors: unknown vendor {v!r}; must be one of: {', '.join(known)}")
    manifests = [artifact.read(p) for p in artifact_paths(arguments)]
    notes = []
    sources: dict = {}
    for m in manifests:
        sources.setdefault(m["name"], {}).setdefault(m["kernel"]["source_sha256"], m["_path"])
    for name, by_hash in sources.items():
        if len(by_hash) > 1:
            notes.append(f"{name}: the artifacts hold different kernel sources ({', '.join(by_hash.values())}); "
                         "their rows compare different code")
    rows: dict = {}
    for m in sorted(manifests, key=lambda m: m["created"]):
        for row in rows_of(m):
            key = (row.kernel, row.problem, row.target, row.device, row.mode)
            if key in rows:
                notes.append(f"{row.kernel} {row.problem} {row.target} on {row.device}: in {rows[key].artifact} "
                             f"and {row.artifact}; showing the newer ({row.artifact})")
            rows[key] = row
    kept = list(rows.values())
    if vendors:
        for v in vendors:
            if not any(r.vendor == v for r in kept):
                notes.append(f"no results for vendor {v} in the given artifacts; tune on a {v} GPU "
                             f"(or with --target {v}:ARCH) and pass that artifact too")
        kept = [r for r in kept if r.vendor in vendors]
    kept.sort(key=lambda r: (r.kernel, r.problem, r.vendor, r.target, r.device))
    if any(r.estimated for r in kept) and any(not r.estimated for r in kept):
        notes.append("mixed: some figures are measured, some are cost-model estimates (marked); "
                     "do not read an estimate against a measurement as a like-for-like result")
    return Comparison(kept, notes)


HEADERS = ["kernel", "problem", "target", "device", "mode", "time", "TFLOP/s", "GB/s", "% peak", "vs baseline",
           "best params"]


def _mark(text: str, row: Row) -> str:
    return estimate_mark(text, row.estimated)


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def text_rows(rows: list[Row]) -> list[list[str]]:
    return [[r.kernel, r.problem, r.target, r.device, r.mode, seconds(r.seconds, r.mode),
             _mark(_number(r.tflops, 2), r), _mark(_number(r.gbps), r), _mark(fraction(r.fraction_of_peak), r),
             "-" if r.speedup is None else f"{r.speedup:.2f}x", format_params(r.params)] for r in rows]


def render(comparison: Comparison, fmt: str) -> str:
    """The comparison as `fmt`; table and markdown end with the notes, json carries them, csv has none
    (its estimated column marks every estimate)."""
    from tabulate import tabulate

    if fmt not in FORMATS:
        raise BadInput(f"--format: unknown format {fmt!r}; must be one of: {', '.join(FORMATS)}")
    rows = comparison.rows
    if fmt == "json":
        data = [{**asdict(r), "estimated": r.estimated} for r in rows]
        return json.dumps({"rows": data, "notes": comparison.notes}, indent=2, sort_keys=True)
    if fmt == "csv":
        out = io.StringIO()
        fields = [f for f in Row.__dataclass_fields__ if f != "artifact"] + ["estimated", "artifact"]
        writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({**asdict(r), "params": format_params(r.params), "estimated": r.estimated})
        return out.getvalue().rstrip("\n")
    cells = text_rows(rows)
    if fmt == "markdown":  # GitHub renders ~text~ as strikethrough
        cells = [[c.replace("~", "\\~") for c in row] for row in cells]
    body = tabulate(cells, headers=HEADERS, tablefmt="github" if fmt == "markdown" else "simple")
    notes = list(comparison.notes)
    if any(r.estimated for r in rows):
        notes.append(ESTIMATE_NOTE)
    if not notes:
        return body
    bullet = "- " if fmt == "markdown" else "note: "
    return body + "\n\n" + "\n".join(bullet + n for n in notes)


def require_matplotlib():
    """matplotlib, set to draw to files; EnvironmentProblem naming --plot when it is not installed (kt
    compare asks before it prints anything)."""
    try:
        import matplotlib
    except ImportError:
        raise EnvironmentProblem("--plot: matplotlib is not installed; pip install kt-tune[plot]") from None
    matplotlib.use("Agg")
    return matplotlib


def plot(comparison: Comparison, path: str) -> None:
    """Bars of % of peak per kernel/problem, one bar per target and device: a title, each bar's value
    on it (estimates `~N% (est)` and hatched), the legend beside the axes, a missing result marked."""
    require_matplotlib()
    import matplotlib.pyplot as plt

    fig = figure(comparison)
    fig.savefig(path, bbox_inches="tight", dpi=120)
    plt.close(fig)


def _bars(comparison: Comparison) -> tuple[list[str], list[tuple], dict]:
    """(the groups: "kernel\nproblem", the series: (target, device, mode), {(series, group): % of peak})."""
    groups = list(dict.fromkeys(f"{r.kernel}\n{r.problem}" for r in comparison.rows))
    series = list(dict.fromkeys((r.target, r.device, r.mode) for r in comparison.rows))
    values = {((r.target, r.device, r.mode), f"{r.kernel}\n{r.problem}"): 100 * (r.fraction_of_peak or 0.0)
              for r in comparison.rows}
    if not groups:
        raise BadInput("--plot: nothing to plot: no results for the asked vendors")
    return groups, series, values


def figure(comparison: Comparison):
    """The --plot chart as a matplotlib Figure (plot() saves it)."""
    import matplotlib.pyplot as plt

    groups, series, values = _bars(comparison)
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(groups) * len(series) + 1.5), 4.8))
    top = max([100.0, *values.values()]) * 1.12  # room for the labels above the bars
    for i, key in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        present = [(x, values[key, group]) for x, group in zip(xs, groups) if (key, group) in values]
        estimated = key[2] == "estimated"
        bars = ax.bar([x for x, _ in present], [v for _, v in present], width, hatch="//" if estimated else None,
                      edgecolor="black", linewidth=0.5, label=f"{key[0]} {key[1]}" + (" (estimate)" if estimated else ""))
        ax.bar_label(bars, [estimate_mark(f"{v:.0f}%", estimated) for _, v in present], fontsize=7, padding=2)
        for x, group in zip(xs, groups):
            if (key, group) not in values:  # the gap says why it is one
                ax.text(x, top * 0.02, "no result", rotation=90, ha="center", va="bottom", fontsize=7, color="0.4")
    kernels = ", ".join(dict.fromkeys(r.kernel for r in comparison.rows))
    ax.set_title(f"{kernels}: % of each device's peak (estimates hatched)", fontsize=10)
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    ax.set_ylabel("% of the device's peak")
    ax.set_ylim(0, top)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # beside, not over
    fig.tight_layout()
    return fig
