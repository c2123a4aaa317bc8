"""Where `kt_cli.load` keeps what first-call finalization measured, so that later calls and later
processes use it without timing again: one JSON file per (artifact content, target, device name,
problem) under $KT_CACHE_DIR, else $XDG_CACHE_HOME/kt, else ~/.cache/kt."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from kt_cli import user_cache


def entry_path(manifest: dict, entry: dict, device) -> Path:
    key = json.dumps([manifest["_sha256"], entry["target"], device.name, entry["shape_key"]])
    return user_cache.directory() / "finalized" / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


def read(manifest: dict, entry: dict, device) -> dict | None:
    """The finalized entry cached for `entry` on `device`; None when there is none (or it is unreadable,
    or not a measured config of this entry's shortlist: then it is measured again)."""
    try:
        cached = json.loads(entry_path(manifest, entry, device).read_text())
    except (OSError, ValueError):
        return None
    shortlisted = [p["params"] for p in entry.get("shortlist") or []]
    if not (isinstance(cached, dict) and cached.get("mode") == "measured" and cached.get("params") in shortlisted):
        return None
    return cached


def write(manifest: dict, entry: dict, device, finalized: dict) -> None:
    """Cache `finalized` for `entry` on `device` (a temporary file renamed: a reader never sees half a file).
    Raises OSError when the cache cannot be written."""
    path = entry_path(manifest, entry, device)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(finalized, sort_keys=True))
    os.replace(tmp, path)
