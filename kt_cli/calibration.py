"""Cost-model constants measured on a GPU by `kt devices --calibrate`, kept per target on disk and laid
over the vendor's table wherever kt estimates for that target (kt_cli/evaluate/estimate.py reads
them from the target's properties).

They live in kt's per-user cache (kt_cli/user_cache.py), under calibration/: one JSON file per target,
written whole (temp file + rename)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from kt_cli import user_cache

CONSTANTS = ("dram_latency_s", "l2_latency_s", "l2_bytes_per_s", "dram_attainable", "math_attainable")


def path_for(target_name: str) -> Path:
    return user_cache.directory() / "calibration" / f"{target_name.replace(':', '_')}.json"


def save(result: dict) -> Path:
    """Keep a calibration (requests.calibrate's result) for its target; returns where."""
    path = path_for(result["target"])
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(f".tmp{os.getpid()}")
    temp.write_text(json.dumps(result, indent=1, sort_keys=True))
    temp.replace(path)
    return path


def constants(target_name: str) -> dict:
    """The calibrated constants of a target, {} when none were measured or the file is unreadable."""
    try:
        stored = json.loads(path_for(target_name).read_text())["constants"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {k: float(v) for k, v in stored.items() if k in CONSTANTS and isinstance(v, (int, float)) and v > 0}


def applied(spec):
    """`spec` with its calibrated constants over the vendor's table (the same spec when none)."""
    measured = constants(spec.name)
    return dataclasses.replace(spec, properties={**spec.properties, **measured}) if measured else spec
