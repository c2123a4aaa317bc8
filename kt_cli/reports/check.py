"""`kt check`: re-verify and re-time an artifact's best configs on the present device, each timed
interleaved with the artifact's reference op, and call a regression only when the kernel/reference
ratio got worse than the artifact's by more than a threshold with 95% confidence.

The verdict (`decide`) is a pure function of paired samples, so recorded samples (`--replay`) give
the same verdict as the run that recorded them (`--record`), without a GPU."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from kt_cli.artifact import store as artifact
from kt_cli.errors import BadInput, EnvironmentProblem
from kt_cli.evaluate.timing import paired_ratios, quantile

BLOCKS = 5  # blocks of interleaved pairs per config, each on freshly made inputs
ROUNDS = 40  # interleaved (kernel, reference) pairs per block
RECORDING_VERSION = 1
SEED = 104729  # inputs kt tune (default seed 0) did not verify with
FAILING = ("regression", "wrong", "failed")


def parse_threshold(text: str) -> float:
    """`5%` or `0.05` -> 0.05."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise BadInput(f"--threshold: {text!r} is not a number; give a slowdown such as 5% or 0.05") from None
    if not 0 <= value < 10:
        raise BadInput(f"--threshold: {text!r} is out of range; give a slowdown such as 5% or 0.05")
    return value


@dataclass(frozen=True)
class Verdict:
    status: str  # "pass" or "regression"
    slowdown: float  # (kernel/reference now) / (kernel/reference in the artifact); > 1 is slower
    low: float  # 95% bootstrap interval of the slowdown
    high: float
    speedup_now: float  # reference/kernel now (the artifact's stats.speedup, re-measured)
    pairs: int


def decide(kernel: list[float], reference: list[float], stored_speedup: float, threshold: float,
           blocks: list[int] | None = None, stored_ratios: list[float] | None = None,
           rounds: int = 2000, seed: int = 0) -> Verdict:
    """Regression when even the low end of the slowdown's 95% interval exceeds 1 + threshold.

    Sample i of `kernel` and of `reference` were timed back to back, so their ratio cancels what drifts
    between pairs (clocks, temperature, other tenants). `blocks` gives how many consecutive pairs came
    from each block of fresh inputs; `stored_ratios` are the per-block median ratios kt tune measured.
    The interval comes from a two-level bootstrap (blocks, then pairs within them) of both sides, so
    a ratio that moves from block to block widens it instead of deciding the verdict."""
    if len(kernel) != len(reference) or len(kernel) < 5:
        raise BadInput(f"check samples: need at least 5 paired kernel/reference timings, got "
                       f"{len(kernel)} and {len(reference)}")
    if stored_speedup <= 0:
        raise BadInput(f"stats.speedup: {stored_speedup!r} is not a positive ratio; re-run kt tune")
    groups = _block_groups(kernel, reference, blocks)
    ratios = sorted(r for g in groups for r in g)
    if len(ratios) < 5:
        raise BadInput("check samples: the reference timings are not positive; re-measure")
    was = [r for r in stored_ratios or [] if r > 0] or [1.0 / stored_speedup]
    stored_ratio = 1.0 / stored_speedup
    rng = random.Random(seed)
    slowdowns = []
    for _ in range(rounds):
        pooled = [x for g in rng.choices(groups, k=len(groups)) for x in rng.choices(g, k=len(g))]
        then = quantile(sorted(rng.choices(was, k=len(was))), 0.5) if len(was) > 1 else stored_ratio
        slowdowns.append(quantile(sorted(pooled), 0.5) / then)
    slowdowns.sort()
    median = quantile(ratios, 0.5)
    low, high = quantile(slowdowns, 0.025), quantile(slowdowns, 0.975)
    status = "regression" if low > 1.0 + threshold else "pass"
    return Verdict(status, median / stored_ratio, low, high, 1.0 / median, len(ratios))


def _split(values: list[float], sizes: list[int] | None) -> list[list[float]]:
    """Consecutive runs of `sizes` values (one run of all when sizes is missing or does not add up)."""
    if not sizes or sum(sizes) != len(values):
        return [list(values)]
    out, start = [], 0
    for size in sizes:
        out.append(list(values[start:start + size]))
        start += size
    return out


def _block_groups(kernel: list[float], reference: list[float], blocks: list[int] | None) -> list[list[float]]:
    """The paired kernel/reference ratios of each block (blocks without a usable pair left out)."""
    return [g for g in (paired_ratios(k, r) for k, r in zip(_split(kernel, blocks), _split(reference, blocks))) if g]


def block_ratios(out: dict) -> list[float]:
    """The median kernel/reference ratio of each block of a recheck measurement."""
    return [quantile(sorted(g), 0.5) for g in _block_groups(out["kernel"], out["baseline"], out.get("blocks"))]


@dataclass(frozen=True)
class Outcome:
    """What became of one (artifact, target, problem)."""

    artifact: str
    name: str
    target: str
    problem: str
    status: str  # pass, regression, wrong, failed (crash/compile error now), no_device, estimated
    message: str
    device: str = ""
    verdict: Verdict | None = None

    @property
    def checked(self) -> bool:
        return self.status in ("pass",) + FAILING


def entry_key(entry: dict) -> str:
    return f"{entry['target']}|{entry['shape_key']}"


def time_interleaved(workers: tuple, source, target_name: str, device_index: int, shape: dict, params: dict,
                     dtype: str, tolerance, method: str, verify_shapes: list, timeout: float) -> dict:
    """One check measurement: the judge verifies the config on the device (the problem and
    `verify_shapes`), then the worker times BLOCKS blocks of ROUNDS interleaved (kernel, reference)
    pairs. `workers`: (candidate worker, judge) from kt_cli.evaluate.isolated.device_workers. Raises
    WorkerFailure."""
    from kt_cli import plugins
    from kt_cli.evaluate.failure import RESTART_ON
    from kt_cli.evaluate.requests import split_params

    worker, judge = workers
    spec = plugins.target(target_name, "artifact target")
    kernel_params, options = split_params(params, spec.launch_options)
    # the device is this measurement's once no candidate waits for it: `kt tune` pairs a finished study's
    # winner while other studies run, and their candidates go first (taken first, the pairings of a 2x H200
    # run held the device 0.6-0.9 s each while the last candidates waited 1.2-2.6 s: results/s44/start)
    with judge.lock.last():
        verification = judge.verify(worker, source, kernel_params, options, [shape] + list(verify_shapes), dtype, SEED,
                                    tolerance)
        out = worker.call("recheck", {"source": source, "target": spec, "device_index": device_index,
                                      "shape": shape, "params": params, "dtype": dtype, "seed": SEED, "method": method,
                                      "rounds": ROUNDS, "blocks": BLOCKS}, timeout, restart_on=RESTART_ON)
    return {**out, "verification": verification}


class LiveSamples:
    """Times on the GPUs present now, in a worker process (the kernel's code never runs in the CLI)."""

    def __init__(self, timeout: float = 600.0):
        from kt_cli import plugins

        self.devices = {}
        for device in plugins.devices():
            self.devices.setdefault(device.target, device)
        self.timeout = timeout
        self._workers: dict = {}  # target -> (candidate worker, judge) on its device
        self.recorded: dict = {}

    def device(self, manifest: dict, entry: dict) -> str | None:
        device = self.devices.get(entry["target"])
        return None if device is None else device.name

    def samples(self, manifest: dict, entry: dict) -> dict:
        from kt_cli import plugins
        from kt_cli.evaluate.failure import WorkerFailure
        from kt_cli.evaluate.isolated import device_workers

        target = entry["target"]
        if target not in self._workers:
            self._workers[target] = device_workers(plugins.target(target, "artifact target"), self.timeout)
        verification = entry.get("verification") or {}
        odd = [s for s in verification.get("shapes", []) if s != entry["shape"]][:1]
        try:
            out = time_interleaved(self._workers[target], artifact.kernel_source(manifest), target,
                                   self.devices[target].index, entry["shape"], entry["params"],
                                   manifest["dtype"], verification.get("tolerance"),
                                   (entry.get("stats") or {}).get("method", "events"), odd, self.timeout)
        except WorkerFailure as exc:
            out = {"failure_kind": exc.kind, "message": exc.message, "device": self.device(manifest, entry)}
        self.recorded.setdefault(manifest["kernel"]["source_sha256"], {"name": manifest["name"], "entries": {}})[
            "entries"][entry_key(entry)] = out
        return out

    def close(self) -> None:
        for worker, judge in self._workers.values():
            worker.stop()
            judge.stop()


class RecordedSamples:
    """Samples a `kt check --record FILE` run wrote, keyed by the artifact's source sha256."""

    def __init__(self, path: str):
        self.path = path
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise BadInput(f"--replay: {path}: cannot read recorded samples ({exc}); give a file written by "
                           "kt check --record") from None
        if not isinstance(data, dict) or data.get("kt_check_samples") != RECORDING_VERSION:
            raise BadInput(f"--replay: {path}: not a kt check recording (version {RECORDING_VERSION}); "
                           "give a file written by kt check --record")
        self.artifacts = data.get("artifacts", {})
        self.recorded = {}

    def _entry(self, manifest: dict, entry: dict) -> dict | None:
        return self.artifacts.get(manifest["kernel"]["source_sha256"], {}).get("entries", {}).get(entry_key(entry))

    def device(self, manifest: dict, entry: dict) -> str | None:
        found = self._entry(manifest, entry)
        return None if found is None else found.get("device") or entry["target"]

    def samples(self, manifest: dict, entry: dict) -> dict:
        return self._entry(manifest, entry)

    def close(self) -> None:
        pass


def check_artifact(manifest: dict, threshold: float, samples) -> list[Outcome]:
    path, name = manifest["_path"], manifest["name"]
    outcomes = []
    entries = [e for e in manifest["results"] if e.get("params") is not None]
    if entries and all(e["mode"] == "estimated" for e in entries):
        raise BadInput(f"{path}: has only estimated results (tuned without a GPU): nothing measured to check "
                       "against; tune it on a GPU of its target first")
    for entry in entries:
        base = dict(artifact=path, name=name, target=entry["target"], problem=entry["shape_key"])
        if entry["mode"] == "estimated":
            outcomes.append(Outcome(**base, status="estimated", message="estimated in the artifact: not checked"))
            continue
        # the ratio kt tune measured with this same interleaved protocol; older artifacts have only speedup
        stored = (entry.get("stats") or {}).get("check_speedup") or (entry.get("stats") or {}).get("speedup")
        if not isinstance(stored, (int, float)) or stored <= 0:
            raise BadInput(f"{path}: results[{entry['target']} {entry['shape_key']}].stats.speedup: missing or "
                           "not positive in a measured result; the artifact is damaged, re-run kt tune")
        found = samples.device(manifest, entry)
        if found is None:
            outcomes.append(Outcome(**base, status="no_device", message=f"no {entry['target']} device here"))
            continue
        out = samples.samples(manifest, entry)
        device = out.get("device") or found
        if out.get("failure_kind") == "bad_input":
            raise BadInput(f"{path}: {out.get('message', '')}")
        if "failure_kind" in out:
            status = "wrong" if out["failure_kind"] in ("wrong", "rejected") else "failed"
            outcomes.append(Outcome(**base, status=status, device=device,
                                    message=f"{out['failure_kind']}: {out.get('message', '')}"))
            continue
        verdict = decide(out["kernel"], out["baseline"], stored, threshold, out.get("blocks"),
                         (entry.get("stats") or {}).get("check_block_ratios"))
        was = (entry.get("device") or {}).get("name")
        moved = f"; tuned on {was}" if was and was != device else ""
        late = out.get("late_batches") or 0
        message = (f"{verdict.slowdown:.3f}x the artifact's kernel/reference time (95% {verdict.low:.3f}-"
                   f"{verdict.high:.3f}, threshold {1 + threshold:.3f}){moved}"
                   + (f"; {late} batch(es) of samples may hold host launch time (the device reached their "
                      "windows before the launches)" if late else ""))
        outcomes.append(Outcome(**base, status=verdict.status, device=device, message=message, verdict=verdict))
    return outcomes


def run_check(paths: list[str], threshold: float, replay: str | None = None) -> tuple[list[Outcome], object]:
    """Check every artifact; returns the outcomes and the sample source (whose `recorded` can be saved)."""
    manifests = [artifact.read(p) for p in paths]
    samples = RecordedSamples(replay) if replay else LiveSamples()
    try:
        outcomes = [o for m in manifests for o in check_artifact(m, threshold, samples)]
    finally:
        samples.close()
    return outcomes, samples


def cannot_run(outcomes: list[Outcome]) -> EnvironmentProblem | None:
    """Exit 2 when no config could be checked at all (no device for any measured target)."""
    if any(o.checked for o in outcomes):
        return None
    targets = sorted({o.target for o in outcomes if o.status == "no_device"})
    return EnvironmentProblem(f"no device here for any measured target of the artifacts ({', '.join(targets)}); "
                              "run kt check on a GPU of one of those targets")


def save_recording(path: str, recorded: dict) -> None:
    Path(path).write_text(json.dumps({"kt_check_samples": RECORDING_VERSION, "artifacts": recorded},
                                     indent=1, sort_keys=True) + "\n")


HEADERS = ["artifact", "target", "problem", "device", "verdict", "detail"]


def table_rows(outcomes: list[Outcome]) -> list[list[str]]:
    return [[o.name, o.target, o.problem, o.device or "-", o.status, o.message] for o in outcomes]


def junit_xml(outcomes: list[Outcome]) -> str:
    from xml.etree import ElementTree as ET

    failures = sum(o.status in FAILING for o in outcomes)
    skipped = sum(not o.checked for o in outcomes)
    suite = ET.Element("testsuite", name="kt check", tests=str(len(outcomes)), failures=str(failures),
                       skipped=str(skipped))
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname=o.name, name=f"{o.target} {o.problem}")
        if o.status in FAILING:
            ET.SubElement(case, "failure", type=o.status, message=o.message)
        elif not o.checked:
            ET.SubElement(case, "skipped", message=o.message)
    return ET.tostring(suite, encoding="unicode") + "\n"


def markdown(outcomes: list[Outcome]) -> str:
    from tabulate import tabulate

    marks = {"pass": "pass", "regression": "**REGRESSION**", "wrong": "**WRONG RESULT**", "failed": "**FAILED**"}
    rows = [[*r[:4], marks.get(o.status, f"skipped ({o.status})"), r[5]] for o, r in zip(outcomes, table_rows(outcomes))]
    return "## kt check\n\n" + tabulate(rows, headers=HEADERS, tablefmt="github") + "\n"
