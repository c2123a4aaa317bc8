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

Timed calls are watched too, for where their work goes (`watching_work`: tensor operations, data
leaving torch, the stream; the tripwires and the pristine check cost milliseconds and stay with
verification): a candidate that detects the full watch and computes with torch only when it is gone
is rejected when timed. What stays possible: behaving differently while the tripwires are set, in
ways the work watch cannot see (a kernel that sleeps only when unwatched); such a kernel is only
slower than it looks, never faster, and its timed outputs are still checked (re-poisoned per batch,
the physical floor).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import sys
import types
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
# tensor methods that hand the data to something torch cannot see (numpy, Python lists)
LEAVES_TORCH = frozenset({"numpy", "tolist", "__array__", "__dlpack__"})
TIME_NAMES = tuple(f"time.{n}" for n in (
    "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns", "process_time",
    "process_time_ns", "thread_time", "thread_time_ns", "sleep"))
# work done where the watch cannot see it: other threads and processes
ELSEWHERE_NAMES = ("threading.Thread.start", "_thread.start_new_thread", "subprocess.Popen", "os.system",
                   "os.fork", "os.posix_spawn", "multiprocessing.Process.start")
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


# What a candidate must not replace: kt's judging and timing code, torch's namespaces (the reference
# computes with them), the clocks. Their identities are taken when a worker starts, before any
# candidate code runs in it, and compared after a module is imported and after every watched launch.
GUARDED_MODULES = ("kt_cli.evaluate.verify", "kt_cli.evaluate.timing", "kt_cli.evaluate.launch_watch",
                   "kt_cli.evaluate.requests", "kt_cli.kernel", "torch", "torch.nn.functional", "torch.linalg",
                   "torch.special", "torch.fft", "time", "threading")
GUARDED_CLASSES = ("torch.Tensor", "kt_cli.evaluate.verify.Judge", "kt_cli.evaluate.timing.EventTimer",
                   "kt_cli.evaluate.launch_watch.LaunchWatch")


class Pristine:
    """Identities of the guarded functions and classes' members, as they were before any candidate."""

    def __init__(self):
        self.entries: dict[str, tuple] = {}  # dotted name -> (owner, attribute, the object stored there)
        self._owners: set = set()

    def take(self, extra_names: tuple = ()) -> None:
        """Remember what is not remembered yet (vendor names are added once the vendor is known)."""
        for module_name in GUARDED_MODULES:
            try:
                self._remember_members(module_name, importlib.import_module(module_name))
            except ImportError:
                continue
        for dotted in (*GUARDED_CLASSES, *extra_names):
            found = resolve(dotted, static=True)
            if found is None:
                continue
            self.entries.setdefault(dotted, (found[0], found[1], found[2]))
            if isinstance(found[2], type):  # its members too, also when its module remembered the class
                self._remember_members(dotted, found[2])

    def _remember_members(self, prefix: str, owner) -> None:
        if prefix in self._owners:
            return
        self._owners.add(prefix)
        for name, value in list(vars(owner).items()):
            if callable(value) and not name.startswith("__") or name in ("__eq__", "__torch_function__"):
                self.entries[f"{prefix}.{name}"] = (owner, name, value)

    def replaced(self) -> list[str]:
        """The guarded names whose object is no longer the one remembered. torch's own wrapper of the
        remembered object is not a replacement, and is remembered in its place: importing
        torch._dynamo (a candidate may; kt's watch no longer does, _tensor_ops) wraps torch.manual_seed so."""
        missing, out = object(), []
        for dotted, (owner, name, remembered) in list(self.entries.items()):
            # A module's attribute is what its namespace holds (a module has no metaclass a candidate could
            # add a data descriptor to): read there first; the device's worker checks before and after every
            # timed candidate, and getattr_static over the ~1900 names took 5-10 ms each time.
            if isinstance(owner, types.ModuleType) and vars(owner).get(name, missing) is remembered:
                continue
            now = inspect.getattr_static(owner, name, missing)
            if now is remembered:
                continue
            if _torch_wrapper_of(now, remembered):
                self.entries[dotted] = (owner, name, now)
                continue
            out.append(dotted)
        return out


def _torch_wrapper_of(now, remembered) -> bool:
    """Whether `now` is a wrapper torch itself made of `remembered` (functools.wraps in torch's code)."""
    import torch

    code = getattr(now, "__code__", None)
    return (getattr(now, "__wrapped__", None) is remembered and code is not None
            and os.path.abspath(code.co_filename).startswith(os.path.dirname(os.path.abspath(torch.__file__)) + os.sep))


PRISTINE = Pristine()


def every_watched_name() -> tuple:
    """Vendor.watched_names of every registered vendor, once each."""
    from kt_cli import plugins

    return tuple(dict.fromkeys(n for v in plugins.vendors().values() for n in v.watched_names()))


def check_pristine(when: str) -> None:
    """Reject a candidate that replaced what kt judges and times with (a patch of torch or of kt)."""
    replaced = PRISTINE.replaced()
    if replaced:
        raise WorkerFailure("rejected", f"{when} replaced {', '.join(replaced[:4])}: a candidate may not patch "
                                        "torch, the clocks or kt's own verification and timing")


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
        """Everything, for a verified launch: tensor operations, the stream, timers and kt's own objects."""
        with self.watching_work():
            with contextlib.ExitStack() as stack:
                for dotted in (*TIME_NAMES, *ELSEWHERE_NAMES, *self.watched_names):
                    stack.enter_context(_tripwire(self, dotted))
                yield self
        check_pristine("the launch")

    @contextlib.contextmanager
    def watching_work(self) -> Iterator["LaunchWatch"]:
        """Where a launch's work goes: tensor operations, data leaving torch, the stream. Cheap enough
        (tens of µs of host time) for every timed call, so a candidate that detects the full watch and
        computes with torch (or on another stream) only when the tripwires are gone is seen too."""
        with contextlib.ExitStack() as stack:
            stack.enter_context(_tensor_ops(self))
            stack.enter_context(_leaving_torch(self))
            stack.enter_context(_stream_check(self))
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
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # torch wraps a mode's __torch_dispatch__ in torch._dynamo.disable unless this says
            # False, and that wrapper imports torch._dynamo at its first call: 4.9-6.2 s of a device
            # worker's start on the H100 hosts (and Triton with it). Nothing here is ever compiled.
            return False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.overloadpacket.__name__
            if name not in ALLOWED_OPS and not _inside_triton():
                watch.note(f"computed with torch (aten.{name})")
            return func(*args, **(kwargs or {}))

    with Ops():
        yield


@contextlib.contextmanager
def _leaving_torch(watch: LaunchWatch):
    from torch.overrides import TorchFunctionMode

    class Leaving(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name in LEAVES_TORCH and not _inside_triton():
                watch.note(f"took tensor data out of torch (.{name}(): computing where kt cannot see)")
            return func(*args, **(kwargs or {}))

    with Leaving():
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


def resolve(dotted: str, static: bool = False):
    """(owner, attribute name, value) of `package.module.Class.attr`, or None when it does not exist.
    `static`: the object as stored (a classmethod itself, not a new bound method on every lookup)."""
    get = inspect.getattr_static if static else getattr
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for name in parts[cut:-1]:
                owner = getattr(owner, name)
            return owner, parts[-1], get(owner, parts[-1])
        except AttributeError:
            return None
    return None


@contextlib.contextmanager
def _tripwire(watch: LaunchWatch, dotted: str):
    found = resolve(dotted)
    if found is None:
        yield
        return
    owner, attr, original = found

    def tripped(*args, **kwargs):
        if _inside_triton():
            return original(*args, **kwargs)
        why = f"used {dotted} (timers, events, streams, threads and processes belong to kt)"
        watch.note(why)
        raise WorkerFailure("rejected", f"the launch {why}")

    setattr(owner, attr, tripped)
    try:
        yield
    finally:
        setattr(owner, attr, original)
