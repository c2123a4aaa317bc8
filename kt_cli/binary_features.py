"""What a vendor reads from a compiled binary, kept on disk per binary. Reading can cost more than the
compile it follows: NVIDIA's disassembler spends about 0.3 s of CPU starting up, whatever the binary's
size, where a binary Triton finds in its cache loads in milliseconds (docs/performance.md, ninth
session). A binary compiled again (a resumed or repeated tune, another worker of the host, the same
point of another problem) is read once.

Entries live in kt's per-user cache (kt_cli/user_cache.py), under binary_features/KIND/, one JSON file
per binary named by the SHA-256 of its bytes and of the source files of the code that reads it: a
change to that code reads every binary again. Written whole (temp file + rename); an entry that cannot
be read or written is read from the binary instead."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Callable

from kt_cli import user_cache


def cached(kind: str, binary: bytes, read: Callable[[bytes], dict], reader_files: tuple[str, ...]) -> dict:
    """read(binary), or what it returned for the same bytes and reader before. Empty results (nothing
    could be read: a missing tool) are not kept."""
    digest = hashlib.sha256(binary)
    digest.update(_fingerprint(tuple(reader_files)).encode())
    key = digest.hexdigest()
    path = user_cache.directory() / "binary_features" / kind / key[:2] / f"{key}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    value = read(binary)
    if value:
        _write(path, value)
    return value


@functools.lru_cache(maxsize=None)
def _fingerprint(files: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for name in files:
        digest.update(Path(name).read_bytes())
    return digest.hexdigest()


def _write(path: Path, value: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_suffix(f".tmp{os.getpid()}")
        temp.write_text(json.dumps(value, sort_keys=True))
        temp.replace(path)
    except OSError:  # a read-only or full cache: the next compile of this binary reads it again
        pass
