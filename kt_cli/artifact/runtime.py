"""Run-time use of a tuned artifact: `kt_cli.load(path)` returns a callable that picks the tuned
config for the current device and problem and launches the kernel, compiled by Triton from the
artifact's own (integrity-checked) source. Also the export of configs as `triton.Config` lists."""

from __future__ import annotations

import math
import os

from kt_cli.artifact import store as artifact
from kt_cli.errors import BadInput, EnvironmentProblem


def shape_distance(a: dict, b: dict) -> float:
    """Euclidean distance of the log2 sizes: 4096 is as near 2048 as 8192, and a small problem is
    never matched to a huge one because their absolute difference is small."""
    return math.sqrt(sum((math.log2(max(a[k], 1)) - math.log2(max(b[k], 1))) ** 2 for k in a))


def select(entries: list[dict], target: str, shape: dict, where: str = "artifact") -> dict:
    """The entry tuned for `target` and exactly `shape`, else the nearest shape (same target, same size
    names) by shape_distance; ties go to the first in the artifact. BadInput names what there is."""
    same_target = tuned_for(entries, target, where)
    for e in same_target:
        if e["shape"] == shape:
            return e
    comparable = [e for e in same_target if set(e["shape"]) == set(shape)]
    if not comparable:
        have = "; ".join(e["shape_key"] for e in same_target)
        raise BadInput(f"{where}: problem {', '.join(f'{k}={v}' for k, v in shape.items())} has other size names "
                       f"than the tuned problems for {target} ({have}); is this the right kernel's artifact?")
    return min(comparable, key=lambda e: shape_distance(shape, e["shape"]))


def tuned_for(entries: list[dict], target: str, where: str = "artifact") -> list[dict]:
    """The entries with a config for `target`; BadInput naming the targets there are when none."""
    usable = [e for e in entries if e.get("params") is not None]
    same_target = [e for e in usable if e["target"] == target]
    if not same_target:
        have = ", ".join(sorted({e["target"] for e in usable})) or "none"
        raise BadInput(f"{where}: no tuned config for target {target}; the artifact has: {have}; "
                       f"tune it for {target} (kt tune --target {target})")
    return same_target


def present_target() -> str:
    from kt_cli import plugins

    found = plugins.devices()
    if not found:
        raise EnvironmentProblem("kt_cli.load: no GPU present; pass target='vendor:arch' to pick a config "
                                 "(the kernel then runs only under TRITON_INTERPRET=1)")
    current = plugins.vendor(found[0].vendor).runtime().current_index()
    return next((d.target for d in found if d.index == current), found[0].target)


class TunedKernel:
    """Callable: `kernel(inputs)` launches on the kernel protocol's inputs dict (outputs included).
    With `finalize`, an estimated entry with a shortlist is timed on the present device at its first
    use (kt_cli.artifact.finalize) and the winner cached on disk (finalized_cache)."""

    def __init__(self, manifest: dict, target: str, finalize: bool = True):
        from kt_cli.kernel import Kernel, KernelModuleError

        self.manifest, self.target = manifest, target
        self.path = manifest["_path"]
        if os.environ.get("TRITON_INTERPRET") == "1":  # on the CPU: the interpreter as kt verified with
            from kt_cli.evaluate.interpreter_fixes import apply as fix_interpreter

            fix_interpreter()
        try:
            self.kernel = Kernel.load(artifact.kernel_source(manifest))
        except KernelModuleError as exc:
            raise BadInput(f"{self.path}: {exc}") from None
        tuned = [e["shape"] for e in manifest.get("results", ()) if e.get("shape")]
        try:  # the module's shape_of, else one derived from its make_inputs at a tuned shape
            self.shape_of = self.kernel.shape_reader(tuned[0] if tuned else {}, manifest["dtype"])
        except KernelModuleError as exc:
            raise BadInput(f"{self.path}: {exc}; kt_cli.load needs it to pick a config") from None
        stored = manifest.get("launch_options", {}).get(target)
        self.launch_options = tuple(stored if stored is not None else self._vendor_launch_options(target))
        self._chosen: dict = {}
        self.finalize, self._warned = finalize, False

    @staticmethod
    def _vendor_launch_options(target: str) -> tuple:
        """An artifact without launch options for `target` has no config for it either (select says so)."""
        from kt_cli import plugins

        spec = plugins.targets().get(target)
        return spec.launch_options if spec else ()

    def config(self, shape: dict) -> dict:
        """The manifest entry used for `shape` (cached per shape)."""
        key = tuple(sorted(shape.items()))
        if key not in self._chosen:
            entry = select(self.manifest["results"], self.target, dict(shape), self.path)
            if self.finalize and entry["mode"] == "estimated" and entry.get("shortlist"):
                entry = self._finalized(entry)
            self._chosen[key] = entry
        return self._chosen[key]

    def _finalized(self, entry: dict) -> dict:
        """The entry finalized on the present device of this target: from the cache, else timed now and
        cached. On any failure, `entry` itself, with one warning for this kernel."""
        from kt_cli import plugins
        from kt_cli import user_cache
        from kt_cli.artifact import finalized_cache
        from kt_cli.artifact.finalize import finalize_entries

        try:
            devices = [d for d in plugins.devices() if d.target == self.target]
            if not devices:
                raise EnvironmentProblem(f"no {self.target} device here")
            device = devices[0]
            cached = finalized_cache.read(self.manifest, entry, device)
            if cached is not None:
                return cached
            finalized = finalize_entries(self.manifest, [entry], device)[0]
        except Exception as exc:  # the application runs on with the cost model's choice
            self._warn(f"finalizing {entry['target']} {entry['shape_key']} failed ({exc}); using the cost model's "
                       "choice (set KT_FINALIZE=0 or pass finalize=False to skip finalizing)")
            return entry
        try:
            finalized_cache.write(self.manifest, entry, device, finalized)
        except OSError as exc:
            self._warn(f"cannot cache the finalized config in {user_cache.directory()} ({exc.strerror}); a "
                       "later process will time the shortlist again (set KT_CACHE_DIR to a writable folder)")
        return finalized

    def _warn(self, message: str) -> None:
        """One warning for this kernel, the first; the application goes on."""
        if not self._warned:
            import warnings

            self._warned = True
            warnings.warn(f"kt_cli.load: {self.path}: {message}", RuntimeWarning, stacklevel=5)

    def __call__(self, inputs: dict) -> dict:
        from kt_cli.evaluate.requests import split_params
        from kt_cli.kernel import torch_dtype

        if not isinstance(inputs, dict):
            raise BadInput(f"{self.path}: the tuned kernel takes the inputs dict of its kernel module's make_inputs "
                           f"(outputs included), not {type(inputs).__name__}")
        # A kernel may mix dtypes (fp8 in, bf16 out), so only inputs that hold none of the tuned dtype are refused.
        want = torch_dtype(self.manifest["dtype"])
        floats = {n: v.dtype for n, v in inputs.items() if getattr(v, "is_floating_point", lambda: False)()}
        if floats and want not in floats.values():
            found = ", ".join(f"{n} {str(d).replace('torch.', '')}" for n, d in floats.items())
            raise BadInput(f"{self.path}: no input is {self.manifest['dtype']}, the dtype the artifact was tuned "
                           f"for (got {found}); tune for this dtype or convert the inputs")
        try:
            shape = self.shape_of(inputs)
            params, options = split_params(self.config(shape)["params"], self.launch_options)
            self.kernel.launch(inputs, params, options)
        except KeyError as exc:
            if exc.args and isinstance(exc.args[0], str) and exc.args[0] not in inputs:
                raise BadInput(f"{self.path}: inputs has no {exc.args[0]!r}, which the kernel reads; it has: "
                               f"{', '.join(map(str, inputs)) or 'nothing'} (make_inputs of its module gives every key)") from None
            raise
        return inputs


def load(path, target: str | None = None, finalize: bool | None = None) -> TunedKernel:
    """The artifact at `path` (checked: schema, source sha256) ready to launch on `target`, by default
    the target of the current GPU. Every argument is checked here, not at the first call: BadInput
    names the bad value. `finalize` (default: on unless KT_FINALIZE=0): an estimated config is timed
    against its shortlist on the first call for its problem (docs/runtime.md)."""
    import os

    if finalize is None:
        finalize = os.environ.get("KT_FINALIZE", "1") != "0"
    elif not isinstance(finalize, bool):
        raise BadInput(f"kt_cli.load: finalize {finalize!r}: must be True or False")

    if not isinstance(path, (str, os.PathLike)):
        raise BadInput(f"kt_cli.load: path {path!r}: must be the path of a NAME.kt artifact directory")
    manifest = artifact.read(path)
    if target is None:
        target = present_target()
    else:
        _check_target(target)
    tuned_for(manifest["results"], target, manifest["_path"])
    return TunedKernel(manifest, target, finalize)


def _check_target(target) -> None:
    from kt_cli import plugins

    known = sorted(plugins.targets())
    if not isinstance(target, str) or target not in known:
        raise BadInput(f"kt_cli.load: target {target!r}: not a target kt knows; must be one of: {', '.join(known)}")
