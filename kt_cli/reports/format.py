"""Human formatting of times, rates and result rows (shared by show, tune and compare)."""

from __future__ import annotations


def estimate_mark(text: str, estimated: bool) -> str:
    """Every figure a cost model gave, in every table: `~text (est)`; a measured one, or none, as is."""
    return f"~{text} (est)" if estimated and text != "-" else text


def seconds(value: float | None, mode: str = "measured") -> str:
    if value is None:
        return "-"
    return estimate_mark(f"{value * 1e6:.1f} us" if value < 1e-3 else f"{value * 1e3:.3f} ms", mode == "estimated")


def duration(value: float) -> str:
    """Seconds for a person: `0.4 s`, `42 s`, `3m 05s`, `2h 10m`."""
    if value < 10:
        return f"{value:.1f} s"
    if value < 60:
        return f"{value:.0f} s"
    minutes = int(value + 0.5) // 60
    if minutes < 60:
        return f"{minutes}m {int(value + 0.5) % 60:02d}s"
    return f"{minutes // 60}h {minutes % 60:02d}m"


def fraction(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def params(p: dict | None) -> str:
    return "-" if not p else " ".join(f"{k}={v}" for k, v in p.items())


def info(details: dict) -> str:
    """A vendor's free-form details as `key=value` pairs; byte counts in GiB/MiB, fractions to 2 places."""
    parts = []
    for key, value in details.items():
        if key.endswith("_bytes") and isinstance(value, (int, float)) and value >= 2**20:
            unit, scale = ("GiB", 2**30) if value >= 2**30 else ("MiB", 2**20)
            value = f"{value / scale:.0f} {unit}"
            key = key.removesuffix("_bytes")
        elif isinstance(value, float):
            value = f"{value:.2f}".rstrip("0").rstrip(".")
        parts.append(f"{key}={value}")
    return " ".join(parts) or "-"


def outcomes(kinds: dict) -> str:
    """Candidates per failure kind, in kt's order of kinds: `ok 20, slow_compile 2, spills 1, wrong 1`."""
    from kt_cli.types import FAILURE_KINDS

    order = {kind: i for i, kind in enumerate(FAILURE_KINDS)}
    ranked = sorted(kinds.items(), key=lambda kv: (kv[0] != "ok", order.get(kv[0], len(order)), kv[0]))
    return ", ".join(f"{k} {n}" for k, n in ranked if n)


def timing_flags(stats: dict) -> str:
    """What a user must know before trusting a measured time: the interval missed its target, or the
    device slowed itself down while it was measured."""
    flags = []
    timed = stats.get("ranked") or stats  # the time it was ranked by: its ratio to its baseline's, else its own
    median = timed.get("seconds", timed.get("median"))
    short = "raced out" if stats.get("raced_out") else "imprecise" if timed.get("precise") is False else ""
    if short and median:
        flags.append(f"±{(timed['ci_high'] - timed['ci_low']) / 2 / median:.1%}, {short}")
    if stats.get("throttled"):
        flags.append("throttled")
    if stats.get("check_pairing_failed"):  # kt check then compares against the tuning's own ratio
        flags.append("not paired with its reference")
    return f" ({'; '.join(flags)})" if flags else ""


def result_rows(entries: list[dict]) -> list[list]:
    rows = []
    for e in entries:
        stats = e.get("stats") or {}
        speedup = stats.get("speedup")
        rows.append([
            e["target"], e.get("shape_key") or ",".join(f"{k}={v}" for k, v in e["shape"].items()), e["mode"],
            seconds(e.get("seconds"), e["mode"]) + timing_flags(stats),
            estimate_mark(fraction(stats.get("fraction_of_peak")), e["mode"] == "estimated"),
            "-" if speedup is None else f"{speedup:.2f}x",
            params(e.get("params")),
            "-" if not e.get("verification") else f"{e['verification'].get('max_rel_error', 0):.1e}",
            e.get("trials", 0),
        ])
    return rows


RESULT_HEADERS = ["target", "problem", "mode", "time", "% peak", "vs baseline", "best params", "rel err", "trials"]
