"""Finalizing a static artifact on a present device: each estimated result's shortlist (the cost
model's best configs) verified and timed by kt's measured path (IsolatedVerifier.verify_and_time,
the calls measured tuning makes), and the fastest verified config written back as a measured result.
`kt finalize` and the first call of `kt_cli.load` both come here."""

from __future__ import annotations

from pathlib import Path

from kt_cli import plugins
from kt_cli.artifact import store
from kt_cli.errors import BadInput, EnvironmentProblem, JobFailed
from kt_cli.evaluate.race import Race, ranked_seconds
from kt_cli.types import Device

TIMEOUT_S = 120.0  # seconds one config may take, as a recipe's default search.timeout
SEED = 0  # the inputs measured tuning verifies and times on (a recipe's default search.seed)


def finalizable(manifest: dict, target: str | None = None) -> list[dict]:
    """The estimated results with a config (of `target`, when given)."""
    return [e for e in manifest["results"] if e["mode"] == "estimated" and e.get("params") is not None
            and target in (None, e["target"])]


def device_for(manifest: dict, index: int | None = None) -> Device:
    """The present device (of index `index`, when given) whose target has estimated results in the
    artifact; EnvironmentProblem naming the targets when there is none."""
    wanted = {e["target"] for e in finalizable(manifest)}
    present = plugins.devices()
    found = [d for d in present if d.target in wanted and (index is None or d.index == index)]
    if not found:
        here = ", ".join(f"#{d.index} {d.name} ({d.target})" for d in present) or "none"
        which = f"device {index} of " if index is not None else "device of "
        raise EnvironmentProblem(f"{manifest['_path']}: no {which}{' or '.join(sorted(wanted))} here (devices "
                                 f"present: {here}); run kt finalize on a GPU of that target")
    return found[0]


def finalize_artifact(path, index: int | None = None, timeout: float = TIMEOUT_S, progress=None) -> list[dict]:
    """Finalize every estimated result of the present device's target and rewrite the artifact at
    `path` atomically; returns the finalized entries ([] when nothing is estimated). Nothing is
    written unless every one of them found a verified config (JobFailed otherwise). `progress(entry,
    row)` is called after each shortlisted config with what became of it."""
    path = Path(path)
    if path.name.endswith(".kt"):  # a rewrite killed last time is undone first (its artifact put back)
        store.remove_dead_writes(path.parent, path.name[:-len(".kt")])
    manifest = store.read(path)
    if not finalizable(manifest):
        return []
    device = device_for(manifest, index)
    entries = finalizable(manifest, device.target)
    for e in entries:
        if not e.get("shortlist"):
            raise BadInput(f"{path}: results[{e['target']} {e['shape_key']}]: no shortlist (tuned by an older kt); "
                           "re-run kt tune without a GPU of that target to write one")
    done = dict(zip(map(id, entries), finalize_entries(manifest, entries, device, timeout,
                                                                   progress)))
    manifest["results"] = [done.get(id(e), e) for e in manifest["results"]]
    store.rewrite_manifest(path, manifest)
    return list(done.values())


def finalize_entries(manifest: dict, entries: list[dict], device: Device, timeout: float = TIMEOUT_S,
                     progress=None) -> list[dict]:
    """`entries` (estimated, with shortlists) finalized on `device` by time_shortlist, in worker processes
    of their own: what `kt finalize` and the first call of kt_cli.load's kernel both run."""
    from kt_cli.evaluate.isolated import device_workers

    workers = device_workers(plugins.target(device.target, "artifact target"), timeout, device)
    try:
        return [time_shortlist(manifest, e, device, workers, progress) for e in entries]
    finally:
        for process in workers:
            process.stop()


def time_shortlist(manifest: dict, entry: dict, device: Device, workers: tuple, progress=None) -> dict:
    """`entry` as measured on `device`: every shortlisted config verified and timed (on the problem and
    the first small verification shape, as measured tuning does), the fastest verified one its config.
    Each shortlisted config keeps its measured median, or why it failed. JobFailed when none passed."""
    from kt_cli.kernel import Kernel

    source = store.kernel_source(manifest)
    # the device's own peaks, not the target's reference part's the estimate was made against: an sm_90
    # artifact finalized on an H200 (4.8 TB/s) would otherwise judge 120% of an H100's 3.35 TB/s wrong
    peaks = (plugins.vendor(device.vendor).device_peaks(device) or entry.get("peaks") or {},
             Kernel.load(source).peak_dtype(manifest["dtype"]))
    tried, timed, race = [], {}, Race()  # ranked as measured tuning ranks (kt_cli.evaluate.race)
    for point in entry["shortlist"]:
        row, measured = _time_config(source, manifest["dtype"], entry, point, device, workers, race, peaks)
        tried.append(row)
        if measured is not None:
            timed[len(tried) - 1] = measured
        if progress:
            progress(entry, row)
    if not timed:
        why = "; ".join(f"{t['failure']}: {t['message'][:120]}" for t in tried)
        raise JobFailed(f"{manifest['_path']}: {entry['target']} {entry['shape_key']}: no shortlisted config passed "
                        f"verification on {device.name} ({why})")
    best = min(timed, key=lambda i: tried[i]["measured_seconds"])
    return measured_entry(entry, device, tried, tried[best]["params"], *timed[best], peaks)


def measured_rates(entry: dict, seconds: float, peaks: tuple) -> dict:
    """The estimate's FLOP and byte rates (the same FLOPs and bytes) at a measured time, and their fraction
    of the device's peaks (`peaks`: the device's table and the dtype the kernel's FLOPs run at)."""
    from kt_cli.evaluate.evaluator import peak_fraction

    scale = entry["seconds"] / seconds if entry.get("seconds") else 0.0
    rates = {k: v * scale for k, v in (entry.get("stats") or {}).items()
             if k in ("flops_per_s", "bytes_per_s") and v is not None}
    return {**rates, "fraction_of_peak": peak_fraction(rates, *peaks)}


def _time_config(source, dtype: str, entry: dict, point: dict, device: Device, workers: tuple, race,
                 peaks: tuple) -> tuple:
    """(what became of one shortlisted config, (verification, timing) or None when it failed). Its
    `measured_seconds` is its time as `race` ranks the entry's configs: by the ratio to the baseline timed
    beside each, at the first one's reference, where that is not too noisy (kt_cli.evaluate.race)."""
    from kt_cli.evaluate.evaluator import above_peak
    from kt_cli.evaluate.failure import WorkerFailure
    from kt_cli.evaluate.phases import PhaseClock
    from kt_cli.types import Candidate

    worker, judge = workers
    verification = entry.get("verification") or {}
    small = [s for s in verification.get("shapes", []) if s != entry["shape"]][:1]
    candidate = Candidate(source.path, point["params"], entry["target"], entry["shape"], dtype, "measured",
                          tuple(small), device.index)
    row = {"params": point["params"], "estimated_seconds": point["seconds"]}
    key = (entry["target"], entry["shape_key"])
    try:
        checked, out = judge.verify_and_time(worker, source, candidate, [entry["shape"], *small], SEED,
                                             PhaseClock(), verification.get("tolerance"), lambda: race.bound(key, None))
    except WorkerFailure as exc:
        return {**row, "failure": exc.kind, "message": exc.message[:500]}, None
    out = {**out, "stats": race.ranked(key, out)}  # kept and ranked as measured tuning's (kt_cli.evaluate.race)
    median = ranked_seconds(out["stats"])
    if not (median > 0 and out["stats"]["median"] > 0):
        return {**row, "failure": "wrong", "message": "timed at zero: a measurement error"}, None
    # the same rule as measured tuning: past 100% of the device's peak is a measurement error or skipped work
    above = above_peak(measured_rates(entry, median, peaks)["fraction_of_peak"])
    if above:
        return {**row, "failure": "wrong", "message": above}, None
    return {**row, "measured_seconds": median}, (checked, out)


def measured_entry(entry: dict, device: Device, tried: list, params: dict, verification: dict, out: dict,
                   peaks: tuple) -> dict:
    """The manifest entry of a finalized result: measured on `device` with `params`."""
    from kt_cli.evaluate.evaluator import throttled

    stats = out["stats"]
    median = ranked_seconds(stats)
    return {**entry, "mode": "measured", "params": params, "seconds": median,
            "device": {"name": device.name, "index": device.index, **device.info},
            "peaks": peaks[0] or entry.get("peaks"),
            # its baseline in it: Race.ranked
            "stats": {**stats, **measured_rates(entry, median, peaks), "timer": out["timer"],
                      "speedup": out["baseline"]["median"] / stats["median"],
                      "throttled": throttled(stats.get("device_state", {}))},
            "verification": verification, "shortlist": tried,
            "finalized": {"estimated_params": entry["params"], "estimated_seconds": entry.get("seconds")}}
