"""Small helpers shared by the CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
SCALED_ADD = (ROOT / "recipes" / "examples" / "scaled_add.py").read_text()


def kt(*args: str):
    """Run the kt CLI in-process; returns click's Result (exit_code, stdout, stderr)."""
    from kt_cli.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args])


KT_COMMAND = [sys.executable, "-c", "from kt_cli.cli import main; main()"]  # kt from this checkout


def process_env(extra_path: str | None = None, **env: str) -> dict:
    """The environment of a child process that imports kt from this checkout (installed or not), and
    whatever this one's PYTHONPATH holds (on the GPU hosts: kt's dependencies installed from wheels into
    a folder of their own)."""
    paths = [str(ROOT), str(ROOT / "plugins")] + ([extra_path] if extra_path else []) + \
        [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), **env}


def kt_process(*args: str, env: dict | None = None, extra_path: str | None = None, **kwargs):
    """Run the kt CLI in a fresh interpreter (plugin discovery, signals)."""
    return subprocess.run([*KT_COMMAND, *map(str, args)], capture_output=True, text=True,
                          env=process_env(extra_path, **(env or {})), **kwargs)


def dsl_recipe(write, kernel_text: str = SCALED_ADD, space: str | None = None, extra: str = "",
               shapes: str = "[{N = 4096}]", trials: int = 4, kernel_extra: str = "") -> Path:
    """A dsl recipe in tmp_path around `kernel_text`, static targets nvidia:sm_90."""
    write("kernel.py", kernel_text)
    return write("recipe.toml", dsl_recipe_text(space, extra, shapes, trials, kernel_extra=kernel_extra))


def dsl_recipe_text(space: str | None = None, extra: str = "", shapes: str = "[{N = 4096}]", trials: int = 4,
                    timeout: int = 60, kernel_extra: str = "") -> str:
    """The text of a dsl recipe around kernel.py (static target nvidia:sm_90); `extra` goes in [search]."""
    space = space or "BLOCK = [256, 512, 1024]\nnum_warps = [2, 4]"
    return f"""
[kernel]
generator = "dsl"
file = "kernel.py"
{kernel_extra}

[problem]
dtype = "float32"
shapes = {shapes}

[search]
trials = {trials}
timeout = {timeout}
{extra}

[search.space]
{space}

[targets]
names = ["nvidia:sm_90"]
"""


def one_error_line(result) -> str:
    """The single line kt printed for an error; fails if it printed a traceback or several lines."""
    lines = [line for line in result.stderr.splitlines() if line.strip() and "warning" not in line.lower()
             and not line.startswith("[")]  # progress lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("kt: error: "), lines[0]
    assert "Traceback" not in result.stderr
    return lines[0]


def processes_of(tmpdir) -> list[int]:
    """Processes still running with TMPDIR=tmpdir (a killed kt's workers, their compilers)."""
    mark = f"TMPDIR={tmpdir}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and mark in (proc / "environ").read_bytes().split(b"\0"):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def resident_keepers(folder: str) -> list[int]:
    """The keepers of `kt serve` running with their sockets in `folder` (kt_cli/resident/keeper.py)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0") if proc.name.isdigit() else []
        except OSError:
            continue
        if b"kt_cli.resident.keeper" in command and str(folder).encode() in command:
            found.append(int(proc.name))
    return found


def wait_until_gone(tmpdir, seconds: float = 20.0) -> list[int]:
    """Wait for every process of `tmpdir` to end; returns those still there after `seconds`."""
    deadline = time.monotonic() + seconds
    while processes_of(tmpdir) and time.monotonic() < deadline:
        time.sleep(0.5)
    return processes_of(tmpdir)
