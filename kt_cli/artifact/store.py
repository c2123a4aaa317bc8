"""The tuned kernel artifact `NAME.kt/`: manifest.json, the kernel source, trials.jsonl.
Written atomically (temporary directory, then rename); read back with integrity checks."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import secrets
import shutil
from pathlib import Path

from kt_cli.errors import BadInput
from kt_cli.processes import MACHINE_TAG, process_alive
from kt_cli.types import failure_counts, shape_key

SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
TRIALS = "trials.jsonl"


def collect(studies, shortlist: int = 1) -> list[dict]:
    """Per (target, problem): the best ok trial, failure counts, every trial result and, in static
    mode, the `shortlist` best distinct configs by estimate (what `kt finalize` times)."""
    from kt_cli.search.storage import trial_result

    out = []
    for plan, shape, study in studies:
        firsts = [trial_result(t) for t in study.get_trials(deepcopy=False) if "duplicate_of" not in t.user_attrs]
        firsts = [r for r in firsts if r is not None]
        ok = [r for r in firsts if r.ok and r.value is not None]
        best = fastest(ok)
        device = plan.device
        out.append({
            "target": plan.spec.name,
            "shape": dict(shape),
            "mode": plan.mode,
            "device": None if device is None else {"name": device.name, "index": device.index, **device.info},
            "peaks": plan.peaks,
            "best": best,
            "failures": failure_counts(firsts),
            "trials": firsts,
            "shortlist": best_distinct(ok, shortlist) if plan.mode == "estimated" else None,
        })
    return out


def fastest(ok: list):
    """The best of `ok` (TrialResults), or None: by the ratio to the baseline timed beside it where every
    fully timed result was ranked by it (processes sharing a study each turn ratios into seconds at a
    reference of their own, taken at another moment: kt_cli.evaluate.race), else by value (results
    stored before kt kept the ratio, problems ranked by their own medians). A candidate raced out cannot
    be the best either way."""
    timed = [r for r in ok if not r.stats.get("raced_out")]
    if timed and all(r.stats.get("ranked") for r in timed):
        return min(timed, key=lambda r: r.stats["ratio"]["median"])
    return min(ok, key=lambda r: r.value) if ok else None


def best_distinct(ok: list, count: int) -> list[dict]:
    """The `count` fastest distinct configs of `ok` (TrialResults), each with its time: [{params, seconds}]."""
    seen, out = set(), []
    for r in sorted(ok, key=lambda r: r.value):
        key = json.dumps(r.params, sort_keys=True)
        if key not in seen and len(out) < count:
            seen.add(key)
            out.append({"params": r.params, "seconds": r.value})
    return out


def provenance() -> dict:
    import importlib.metadata as md

    from kt_cli import __version__
    from kt_cli.evaluate.pool import fp_fusion_default

    def version(name):
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return None

    return {"kt": __version__, "torch": version("torch"), "triton": version("triton"), "optuna": version("optuna"),
            "python": platform.python_version(), "host": platform.node(), "machine": platform.machine(),
            "triton_default_fp_fusion": fp_fusion_default()}


def _entry(r: dict) -> dict:
    best = r["best"]
    return {
        "target": r["target"], "shape": r["shape"], "shape_key": shape_key(r["shape"]), "mode": r["mode"],
        "device": r["device"], "peaks": r["peaks"],
        "found_by": best.worker if best else {},  # host, pid and device of the process that evaluated it
        "params": best.params if best else None,
        "seconds": best.value if best else None,
        "stats": best.stats if best else {},
        "verification": best.verification if best else {},
        "resources": best.resources if best else {},
        "trials": sum(n for kind, n in r["failures"].items() if kind != "invalid"),
        "failures": r["failures"],
        "profile": r.get("profile"),
        **({"shortlist": r["shortlist"]} if r.get("shortlist") else {}),
    }


def write(out_dir: Path, recipe, source, results: list[dict], plans, storage_url: str) -> Path:
    """Write `out_dir/NAME.kt/` atomically; an existing artifact is replaced only once the new one is complete."""
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / f"{recipe.name}.kt"
    source_file = Path(source.path).name
    manifest = {
        "schema": SCHEMA_VERSION,
        "name": recipe.name,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "kernel": {"generator": source.generator, "name": source.name, "source_file": source_file,
                   "source_sha256": source.sha256(), "functions": source.functions, "meta": source.meta},
        "recipe": {"path": str(recipe.path), "sha256": recipe.text_hash},
        "dtype": recipe.problem.dtype,
        "launch_options": {p.spec.name: list(p.spec.launch_options) for p in plans},
        "storage": storage_url,
        "provenance": provenance(),
        "results": [_entry(r) for r in results],
    }
    source_copy = Path(source.path)

    def fill(tmp: Path) -> None:
        shutil.copyfile(source_copy, tmp / source_file)
        with open(tmp / TRIALS, "w") as f:
            for r in results:
                for t in r["trials"]:  # each point once: a duplicate proposal is answered, not run
                    f.write(json.dumps(t.to_json(), sort_keys=True) + "\n")
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")

    replace_atomically(final, fill)
    return final


def replace_atomically(final: Path, fill) -> None:
    """Make the artifact directory `final` anew: `fill(tmp)` writes every file into a new folder beside
    it, which then replaces `final` by rename, so a reader (or a kill at any moment) sees the old
    artifact or the new one, never a mix; remove_dead_writes undoes what a killed write left."""
    tmp = _new_dir(final, "tmp")
    try:
        fill(tmp)
        if final.exists():
            old = _new_dir(final, "old")
            os.replace(final, old / "a")
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _new_dir(final: Path, kind: str) -> Path:
    """A new folder `.NAME.kt.KIND.MACHINE.PID.RANDOM` beside the artifact `final` (NAME.kt), created with
    the user's umask (as the artifact it becomes), named after this process so a later run knows when it
    is dead."""
    while True:
        path = final.parent / f".{final.name}.{kind}.{MACHINE_TAG}.{os.getpid()}.{secrets.token_hex(4)}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


def rewrite_manifest(path: Path, manifest: dict) -> None:
    """Replace the manifest of the artifact at `path` (a manifest read() returned, changed), its other
    files kept, atomically as write() does."""
    path = Path(path)
    kept = {k: v for k, v in manifest.items() if not k.startswith("_")}  # what read() added

    def fill(tmp: Path) -> None:
        for f in path.iterdir():
            if f.name != MANIFEST and f.is_file():
                shutil.copyfile(f, tmp / f.name)
        (tmp / MANIFEST).write_text(json.dumps(kept, indent=2, sort_keys=True) + "\n")

    replace_atomically(path, fill)


def remove_dead_writes(out_dir: Path, name: str) -> None:
    """Remove the temporary folders of writes of NAME.kt whose process was killed. A write killed
    between its two renames had moved the previous artifact aside: it is put back first."""
    final = Path(out_dir) / f"{name}.kt"
    prefix = f".{name}.kt."
    for path in sorted(Path(out_dir).glob(prefix + "*")) if Path(out_dir).is_dir() else []:
        parts = path.name[len(prefix):].split(".")
        if len(parts) != 4:
            continue
        kind, machine, pid, _ = parts
        if machine != MACHINE_TAG or not pid.isdigit() or process_alive({"pid": int(pid)}):
            continue
        if kind == "old" and not final.exists() and (path / "a" / MANIFEST).is_file():
            os.replace(path / "a", final)
        shutil.rmtree(path, ignore_errors=True)


def read(path: str | Path) -> dict:
    """The manifest of an artifact, after checking its schema and the source's sha256; `_path` and
    `_sha256` (of manifest.json) are added."""
    path = Path(path)
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise BadInput(f"{path}: not a kt artifact (no {MANIFEST}); give a NAME.kt directory written by kt tune")
    try:
        raw = manifest_path.read_bytes()
        manifest = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{manifest_path}: not valid JSON ({exc}); re-run kt tune") from None
    except OSError as exc:
        raise BadInput(f"{manifest_path}: cannot be read ({exc.strerror}); check its permissions") from None
    schema = manifest.get("schema") if isinstance(manifest, dict) else None
    if schema != SCHEMA_VERSION:
        raise BadInput(f"{manifest_path}: schema: version {schema!r}, this kt reads {SCHEMA_VERSION}; re-run kt tune")
    kernel = manifest.get("kernel") if isinstance(manifest.get("kernel"), dict) else {}
    names = kernel.get("source_file"), kernel.get("source_sha256")
    if not all(isinstance(n, str) for n in names) or Path(names[0]).name != names[0] \
            or not isinstance(manifest.get("results"), list):
        raise BadInput(f"{manifest_path}: kernel.source_file, kernel.source_sha256 or results missing or "
                       "malformed: the manifest was modified; re-run kt tune")
    for i, e in enumerate(manifest["results"]):
        if not (isinstance(e, dict) and isinstance(e.get("target"), str) and isinstance(e.get("shape"), dict)
                and isinstance(e.get("shape_key"), str) and e.get("mode") in ("measured", "estimated")
                and isinstance(e.get("params"), (dict, type(None))) and isinstance(e.get("stats", {}), dict)):
            raise BadInput(f"{manifest_path}: results[{i}]: target, shape, shape_key, mode or params missing or "
                           "malformed: the manifest was modified; re-run kt tune")
    source = path / names[0]
    if not source.is_file():
        raise BadInput(f"{path}: kernel source {source.name} is missing; the artifact is incomplete")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    if digest != names[1]:
        raise BadInput(f"{source}: sha256 does not match kernel.source_sha256 in the manifest: the artifact was "
                       "modified; re-run kt tune")
    manifest["_path"] = str(path)
    manifest["_sha256"] = hashlib.sha256(raw).hexdigest()  # the artifact's content: the manifest names the source's
    return manifest


def kernel_source(manifest: dict):
    """The KernelSource of a manifest read() returned: the artifact's own copy of the kernel module."""
    from kt_cli.kernel import KernelSource

    k = manifest["kernel"]
    return KernelSource(str(Path(manifest["_path"]) / k["source_file"]), k["generator"], k["name"],
                        dict(k.get("functions") or {}), meta=dict(k.get("meta") or {}))
