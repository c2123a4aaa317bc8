"""What keeps a candidate's side effects out of kt's way. Each worker process runs in a scratch
directory of its own (relative writes land there, not in the output directory; it is removed when the
worker stops, or by the next kt run after a kill), reads nothing from kt's stdin, and ends when kt
does. Its stdout and stderr go to a file in the scratch directory that kt reads after every request:
the first and last OUTPUT_KEEP bytes of each request stay with the trial (TrialResult.output); the rest
is dropped, and the file is emptied whenever it passes OUTPUT_SPILL bytes, so a candidate that prints
without end fills neither kt's terminal nor the disk.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import shutil
import sys
import tempfile

from kt_cli.processes import MACHINE_TAG, end_with_parent, process_alive

OUTPUT_KEEP = 1024  # bytes kept from the start and from the end of each request's output
OUTPUT_SPILL = 1 << 20  # the file is emptied past this size while a request runs
TRIAL_OUTPUT_CHARS = 4096  # at most this much of a trial's output is recorded
SCRATCH_PREFIX = "kt-worker-"
_OUTPUT_FILE = "kt-worker-output"

_printed: contextvars.ContextVar[list | None] = contextvars.ContextVar("kt_candidate_output", default=None)


@contextlib.contextmanager
def collect_output():
    """Collects, as (request, text) pairs, what workers printed while serving requests made in this
    thread meanwhile (one candidate's compile, verification and timing)."""
    printed: list = []
    token = _printed.set(printed)
    try:
        yield printed
    finally:
        _printed.reset(token)


def report_output(request: str, text: str) -> None:
    printed = _printed.get()
    if printed is not None and text:
        printed.append((request, text))


def trial_output(printed: list) -> str:
    """One trial's record of what its requests printed: labelled, at most TRIAL_OUTPUT_CHARS."""
    return clip("".join(f"[{request}]\n{text.rstrip()}\n" for request, text in printed), TRIAL_OUTPUT_CHARS)


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters not kept ...]\n{text[-half:]}"


_STACK_FRAME = re.compile(r"\s*(frame #\d+|#\d+ |File \"|Exception raised from)")  # a C++/Python trace's lines


class Scratch:
    """The parent's side of one worker process's scratch directory and captured output."""

    def __init__(self):
        sweep_scratch()
        self.dir = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{MACHINE_TAG}-{os.getpid()}-")
        self.output_path = os.path.join(self.dir, _OUTPUT_FILE)
        self._fd = os.open(self.output_path, os.O_RDWR | os.O_CREAT, 0o600)
        self._head: bytes | None = None  # this request's first bytes, once read
        self._tail = b""  # the last bytes before the file was last emptied
        self._dropped = 0

    def spill(self) -> None:
        """While a request runs: past OUTPUT_SPILL bytes, keep the head and the last bytes, empty the file."""
        size = os.fstat(self._fd).st_size
        if size <= OUTPUT_SPILL:
            return
        start = self._keep_head()
        self._dropped += len(self._tail) + size - OUTPUT_KEEP - start
        self._tail = os.pread(self._fd, OUTPUT_KEEP, size - OUTPUT_KEEP)
        os.ftruncate(self._fd, 0)

    def take(self) -> str:
        """What the worker printed since the last take (head and tail, the middle counted); empties the file."""
        size = os.fstat(self._fd).st_size
        start = self._keep_head()
        tail_start = max(start, size - OUTPUT_KEEP)
        tail = self._tail + os.pread(self._fd, size - tail_start, tail_start)
        dropped = self._dropped + tail_start - start + max(0, len(tail) - OUTPUT_KEEP)
        head, tail = self._head, tail[-OUTPUT_KEEP:]
        os.ftruncate(self._fd, 0)
        self._head, self._tail, self._dropped = None, b"", 0
        middle = f"\n[... {dropped} bytes not kept ...]\n".encode() if dropped else b""
        return (head + middle + tail).decode(errors="replace")

    def last_words(self) -> str:
        """The last line of what the worker printed that names an error (else its last line), for the
        message of a worker that died: a driver's or runtime's own reason before an abort."""
        size = os.fstat(self._fd).st_size
        text = (self._tail + os.pread(self._fd, OUTPUT_KEEP, max(0, size - OUTPUT_KEEP))).decode(errors="replace")
        text = (self._head or os.pread(self._fd, OUTPUT_KEEP, 0)).decode(errors="replace") + "\n" + text
        lines = [line.strip() for line in text.splitlines() if line.strip() and not _STACK_FRAME.match(line)]
        errors = [line for line in lines if "error:" in line.lower()]
        return clip((errors or lines or [""])[-1], 300)

    def _keep_head(self) -> int:
        """Keep the request's first bytes (once); returns where the rest starts in the file."""
        if self._head is not None:
            return 0
        self._head = os.pread(self._fd, OUTPUT_KEEP, 0)
        return len(self._head)

    def remove(self) -> None:
        os.close(self._fd)
        shutil.rmtree(self.dir, ignore_errors=True)


def sweep_scratch() -> None:
    """Remove the scratch directories left by kt processes that were killed (their pid is gone)."""
    root = tempfile.gettempdir()
    mine = f"{SCRATCH_PREFIX}{MACHINE_TAG}-"
    try:
        names = [n for n in os.listdir(root) if n.startswith(mine)]
    except OSError:
        return
    for name in names:
        pid = name[len(mine):].split("-", 1)[0]
        if pid.isdigit() and not process_alive({"pid": int(pid)}):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def enter_scratch(scratch_dir: str, output_path: str, parent_pid: int) -> None:
    """In the worker, before any candidate code: work in the scratch directory, print into the output
    file, read nothing, and end when the kt process that started it ends."""
    sys.path[:] = [os.path.abspath(p) if p else p for p in sys.path]  # imports keep working from scratch
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    out = os.open(output_path, os.O_WRONLY | os.O_APPEND)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.close(nothing)
    os.chdir(scratch_dir)
    end_with_parent(parent_pid)


def flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a candidate closed or replaced it
            pass
