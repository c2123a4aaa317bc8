"""kt's per-user cache: $KT_CACHE_DIR, else $XDG_CACHE_HOME/kt, else ~/.cache/kt. First-call
finalizations (kt_cli/artifact/finalized_cache.py), calibrations (kt_cli/calibration.py) and what vendors
read from compiled binaries (kt_cli/binary_features.py) live under it."""

from __future__ import annotations

import os
from pathlib import Path


def directory() -> Path:
    if os.environ.get("KT_CACHE_DIR"):
        return Path(os.environ["KT_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kt"
