"""Runtime honesty: what a candidate's launch does while kt verifies it.

A kernel module must compute its answer in its own kernels. The AST gates of generated code are a
first, cheap line that aliases and dynamic code can get around; this watch sees what actually runs:

- every tensor operation, through a torch dispatch mode (below every Python alias: `T = torch`,
  `x ** 2`, `.nansum()`, `y[:] = …` all arrive as aten ops). Allowed are allocation, views and
  metadata, copies, and filling or zeroing (an accumulator for atomics); anything else computes with
  torch and the candidate is `rejected`. Operations issued from inside Triton's own launch machinery
  (the CPU interpreter copies arguments in and out) are the kernel launch itself and are allowed.
- the stream Triton launches on, through Triton's driver (`get_current_stream`): a launch on any stream
  but the one current when the launch began is rejected (work hidden from the timed stream).
- timers and sleeping: the `time` module's clocks and `sleep`, and the vendor's named event, stream
  and synchronisation objects (Vendor.watched_names), replaced by tripwires for the launch's duration.

What stays possible: a candidate that detects the watch and behaves only while watched. Its timed
calls are still checked (outputs re-poisoned per batch, the physical floor), so such a kernel can only
be slower than it looks, never faster.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Iterator

from kt_cli.evaluate.failure import WorkerFailure

# aten ops a launch may issue: allocation, views and metadata, copies and fills (no arithmetic).
ALLOWED_OPS = frozenset("""
empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like ones ones_like full full_like
new_zeros new_ones new_full scalar_tensor lift_fresh arange
view _unsafe_view reshape _reshape_alias as_strided slice select transpose t permute expand expand_as
unsqueeze squeeze unfold alias detach unbind split split_with_sizes chunk narrow movedim view_as
diagonal flatten unflatten _to_copy to clone contiguous copy_ fill_ zero_ set_ resize_ record_stream
is_contiguous is_pinned stride size sym_size sym_stride sym_numel sym_storage_offset numel dim
_local_scalar_dense item is_same_size is_nonzero _has_compatible_shallow_copy_type
""".split())
TIME_NAMES = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns",
              "process_time", "process_time_ns", "thread_time", "thread_time_ns", "sleep")
_TRITON_DIR = None


def _triton_dir() -> str:
    global _TRITON_DIR
    if _TRITON_DIR is None:
        import triton

        _TRITON_DIR = os.path.dirname(os.path.abspath(triton.__file__)) + os.sep
    return _TRITON_DIR


def _inside_triton() -> bool:
    """Whether the current aten op comes from Triton's launch machinery (its interpreter's copies)."""
    frame, root = sys._getframe(2), _triton_dir()
    while frame is not None:
        if frame.f_code.co_filename.startswith(root):
            return True
        frame = frame.f_back
    return False


class LaunchWatch:
    """What one launch did that a kernel launch must not: `findings` lists it in words."""

    def __init__(self, watched_names: tuple = ()):
        self.watched_names = watched_names
        self.findings: list[str] = []

    def note(self, finding: str) -> None:
        if finding not in self.findings:
            self.findings.append(finding)

    @contextlib.contextmanager
    def watching(self) -> Iterator["LaunchWatch"]:
        with contextlib.ExitStack() as stack:
            stack.enter_context(_tensor_ops(self))
            stack.enter_context(_stream_check(self))
            for dotted in (*(f"time.{n}" for n in TIME_NAMES), *self.watched_names):
                stack.enter_context(_tripwire(self, dotted))
            yield self

    def verdict(self) -> None:
        """Raise the candidate's rejection if the launch did anything but launch its kernels."""
        if self.findings:
            raise WorkerFailure("rejected", "the launch " + "; ".join(self.findings[:4]) +
                                " (a launch may allocate, view, copy and launch its own kernels only)")


@contextlib.contextmanager
def _tensor_ops(watch: LaunchWatch):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.overloadpacket.__name__
            if name not in ALLOWED_OPS and not _inside_triton():
                watch.note(f"computed with torch (aten.{name})")
            return func(*args, **(kwargs or {}))

    with Ops():
        yield


@contextlib.contextmanager
def _stream_check(watch: LaunchWatch):
    try:
        from triton.runtime import driver

        active = driver.active
        original = active.get_current_stream
        current = original(active.get_current_device())
    except Exception:  # noqa: BLE001 - no active driver (the CPU interpreter): nothing runs on a stream
        yield
        return

    def get_current_stream(*args):
        stream = original(*args)
        if stream != current:
            watch.note("launched on a stream other than the current one")
        return stream

    active.get_current_stream = get_current_stream
    try:
        yield
    finally:
        active.get_current_stream = original


@contextlib.contextmanager
def _tripwire(watch: LaunchWatch, dotted: str):
    module_name, _, attr = dotted.rpartition(".")
    try:
        owner = importlib.import_module(module_name)
        original = getattr(owner, attr)
    except (ImportError, AttributeError):
        yield
        return

    def tripped(*args, **kwargs):
        if not _inside_triton():
            watch.note(f"used {dotted} (timers, events and streams belong to kt)")
        return original(*args, **kwargs)

    setattr(owner, attr, tripped)
    try:
        yield
    finally:
        setattr(owner, attr, original)
