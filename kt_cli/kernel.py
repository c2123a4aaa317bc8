"""The kernel-module protocol (docs/kernel-protocol.md): load a module, make inputs, record launches.

Runs in worker processes only: it imports torch and the kernel's own code.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REQUIRED = ("make_inputs", "launch")  # without `reference`, kt verifies against a reference configuration
TRITON_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")  # launch options every target takes
TORCH_DTYPES = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16", "float8_e4m3": "float8_e4m3fn"}


@dataclass(frozen=True)
class KernelSource:
    """What a generator hands the core: a kernel module on disk and the names of its protocol functions."""

    path: str
    generator: str
    name: str
    functions: dict = field(default_factory=dict)  # protocol name -> name in the module, where they differ
    space: dict = field(default_factory=dict)  # the generator's space; the recipe's replaces it
    constraints: tuple[str, ...] = ()
    meta: dict = field(default_factory=dict)  # anything the artifact should keep (prompt hashes...)
    # The module that defines the problem (make_inputs, reference, TOLERANCE) when it is not this one:
    # a generated module is judged by its task's definitions, loaded where its own code never ran.
    problem_path: str = ""

    def __post_init__(self):
        # Workers run in a scratch directory of their own, where a relative path would not find the module.
        object.__setattr__(self, "path", os.path.abspath(self.path))
        if self.problem_path:
            object.__setattr__(self, "problem_path", os.path.abspath(self.problem_path))

    def problem(self) -> "KernelSource":
        """The source kt makes inputs and reference outputs from."""
        return KernelSource(self.problem_path, self.generator, self.name) if self.problem_path else self

    def text(self) -> str:
        return Path(self.path).read_text()

    def sha256(self) -> str:
        return hashlib.sha256(Path(self.path).read_bytes()).hexdigest()

    def fn_name(self, protocol_name: str) -> str:
        return self.functions.get(protocol_name, protocol_name)


MODULE_BYTES_MAX = 4 << 20  # a kernel module is source code: 4 MiB is past any real one


def parse_module_file(path: Path) -> tuple[str, "ast.Module"]:
    """A kernel module's text and syntax tree, read in the CLI process (nothing of it runs here); a file
    that is not UTF-8 Python is a BadInput naming the file."""
    import ast

    from kt_cli.errors import BadInput

    try:
        if path.stat().st_size > MODULE_BYTES_MAX:
            raise BadInput(f"{path}: {path.stat().st_size} bytes; a kernel module is at most {MODULE_BYTES_MAX}")
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); save "
                       "the file as UTF-8") from None
    except OSError as exc:
        raise BadInput(f"{path}: cannot read the file ({exc.strerror}); check the path") from None
    try:
        return text, ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise BadInput(f"{path}: does not import: SyntaxError line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # a NUL byte; nesting past the parser's limits
        raise BadInput(f"{path}: does not import: {type(exc).__name__}: {str(exc)[:200]}") from None


class KernelModuleError(Exception):
    """The kernel module does not import or lacks a protocol function."""


def torch_dtype(name: str):
    import torch

    return getattr(torch, TORCH_DTYPES[name])


def import_module(path: str):
    """Import a kernel module from its file under a name derived from its content hash."""
    data = Path(path).read_bytes()
    modname = f"kt_kernel_{hashlib.sha256(data).hexdigest()[:16]}"
    if modname in sys.modules:
        return sys.modules[modname]
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise KernelModuleError(f"{path}: does not import: {type(exc).__name__}: {exc}") from exc
    sys.modules[modname] = module
    return module


@dataclass
class Kernel:
    """A loaded kernel module, with its protocol functions resolved."""

    module: Any
    source: KernelSource

    @classmethod
    def load(cls, source: KernelSource) -> "Kernel":
        module = import_module(source.path)
        for name in REQUIRED:
            attr = source.fn_name(name)
            if not callable(getattr(module, attr, None)):
                raise KernelModuleError(f"{source.path}: has no function {attr!r} (the {name} function)")
        if not jit_functions(module):
            raise KernelModuleError(f"{source.path}: defines no @triton.jit function")
        return cls(module, source)

    def fn(self, name: str, default=None):
        return getattr(self.module, self.source.fn_name(name), default)

    def attr(self, name: str, default=None):
        return getattr(self.module, name, default)

    def peak_dtype(self, dtype: str) -> str:
        """Which dtype's peak the kernel's FLOPs run at for inputs of `dtype` (the module's PEAK_DTYPE, e.g.
        fp32 inputs on tf32 tensor cores), `dtype` itself where it does not say."""
        return (self.attr("PEAK_DTYPE", {}) or {}).get(dtype, dtype)

    def main_launch(self, launches: list):
        """The launch that does the work, whose resources and grid the cost model reads: the first one, or
        the first whose kernel the module does not name in SETUP_KERNELS (launches that prepare the main
        one's input first, as a sequence kernel's projection of every step's input)."""
        setup = set(self.attr("SETUP_KERNELS", ()))
        return next((launch for launch in launches if launch.fn.__name__ not in setup), launches[0])

    def make_inputs(self, shape: dict, dtype: str, tensors) -> dict:
        return self.fn("make_inputs")(dict(shape), torch_dtype(dtype), tensors)

    def outputs(self, inputs: dict) -> tuple[str, ...]:
        names = self._output_names(inputs)
        missing = [n for n in names if n not in inputs]
        if missing:
            raise KernelModuleError(f"{self.source.path}: OUTPUTS names {missing[0]!r}, which make_inputs does not return")
        return names

    def _output_names(self, inputs: dict) -> tuple[str, ...]:
        """OUTPUTS, else the inputs the reference returns by name (asked once, on meta copies of the
        inputs: nothing computed), else ("out",). Without a reference function: the inputs the
        reference configuration's launch changes (asked once, on copies of real inputs)."""
        declared = self.attr("OUTPUTS")
        if declared is not None:
            return tuple(declared)
        if self.differential and "_outputs" not in self.__dict__:
            self.__dict__["_outputs"] = self._written_by_reference_config(inputs)
        if "_outputs" not in self.__dict__:
            self.__dict__["_outputs"] = ("out",)
            try:
                meta = {k: v.to("meta") if hasattr(v, "to") and hasattr(v, "shape") else v for k, v in inputs.items()}
                returned = self.fn("reference")(meta)
                if isinstance(returned, dict) and returned and set(returned) <= set(inputs):
                    self.__dict__["_outputs"] = tuple(returned)
            except Exception:  # a reference that needs data: the default stands, and says so when it misses
                pass
        return self.__dict__["_outputs"]

    @property
    def differential(self) -> bool:
        """No reference function: the kernel at its reference configuration is the reference."""
        return self.fn("reference") is None

    def reference_point(self) -> tuple[dict, dict]:
        """(params, launch options) of the reference configuration: the recipe's kernel.reference_config,
        else the module's first SEEDS point, else its @triton.autotune's first config."""
        point = self.source.meta.get("reference_config") or next(
            iter(self.attr("SEEDS", None) or autotune_space(self.module)[1]), None)
        if not point:
            raise KernelModuleError(
                f"{self.source.path}: no reference(inputs) and no configuration to verify against: define "
                "reference, or set kernel.reference_config in the recipe (the author's config), or SEEDS")
        return ({k: v for k, v in point.items() if k not in TRITON_OPTIONS},
                {k: v for k, v in point.items() if k in TRITON_OPTIONS})

    def run_reference_config(self, inputs: dict) -> dict:
        """A copy of `inputs` after the reference configuration's launch on it."""
        copy = {k: v.clone() if hasattr(v, "clone") else v for k, v in inputs.items()}
        self.launch(copy, *self.reference_point())
        return copy

    def _written_by_reference_config(self, inputs: dict) -> tuple[str, ...]:
        if any(getattr(v, "is_meta", False) for v in inputs.values()):
            raise KernelModuleError(f"{self.source.path}: no reference(inputs) and no OUTPUTS: kt finds the outputs "
                                    "by running the reference configuration, which cannot run here; set OUTPUTS")
        after = self.run_reference_config(inputs)
        written = tuple(k for k, v in inputs.items() if hasattr(v, "clone") and not _same_bits(v, after[k]))
        if not written:
            raise KernelModuleError(f"{self.source.path}: the reference configuration changed no input; set OUTPUTS "
                                    "(or define reference)")
        return written

    def reference(self, inputs: dict) -> dict:
        result = self.fn("reference")(inputs)
        names = self._output_names(inputs)
        if not isinstance(result, dict):
            result = dict(zip(names, result if isinstance(result, (tuple, list)) else (result,)))
        return result

    def launch(self, inputs: dict, params: dict, options: dict | None = None, launches: list | None = None) -> None:
        """Call the module's launch function. Launch `options` (num_warps, vendor knobs) are added to
        every kernel launch; with `launches`, launches are recorded there instead of run."""
        options = dict(options or {})
        if launches is not None:
            wrap = lambda k: _Recorder(k, launches, options, params)  # noqa: E731
        else:
            wrap = lambda k: _WithOptions(k, options, params)  # noqa: E731
        self.fn("launch")(KernelSet(self.module, wrap), inputs, self._launch_params(params, options))

    def bound_launch(self, inputs: dict, params: dict, options: dict | None = None):
        """A zero-argument callable that launches the kernel on `inputs`, its wrappers built once, so
        that timing it adds as little host work as possible."""
        options = dict(options or {})
        kernels = KernelSet(self.module, lambda k: _WithOptions(k, options, params))
        launch, params = self.fn("launch"), self._launch_params(params, options)
        return lambda: launch(kernels, inputs, params)

    @functools.cached_property
    def jit_arguments(self) -> frozenset:
        """Every argument name of the module's @triton.jit functions."""
        return frozenset(name for fn in jit_functions(self.module).values() for name in fn.arg_names)

    def _launch_params(self, params: dict, options: dict) -> dict:
        """What the launch function gets: the kernel parameters, among them a launch option that is also
        an argument of a @triton.jit function (the tutorial softmax's own `num_stages`)."""
        return {**params, **{k: v for k, v in options.items() if k in self.jit_arguments}}

    def shape_reader(self, shape: dict, dtype: str):
        """inputs -> the problem shape of real inputs: the module's shape_of, else one derived from
        make_inputs (on meta tensors, nothing allocated): each size of `shape` is the length of the
        axis of an input that doubles when that size alone doubles (a scalar input equal to it counts as
        well). KernelModuleError when some size cannot be found that way."""
        own = self.fn("shape_of")
        if own is not None:
            return lambda inputs: {k: int(v) for k, v in own(inputs).items()}

        def sizes(s: dict) -> dict:
            made = self.make_inputs(s, dtype, Tensors("meta", 0))
            return {k: tuple(v.shape) if hasattr(v, "shape") else v for k, v in made.items()}

        base, where = sizes(shape), {}
        for dim, size in shape.items():
            doubled = sizes({**shape, dim: 2 * size})
            for key, dims in base.items():
                if isinstance(dims, tuple):
                    axis = next((a for a, n in enumerate(dims) if n == size and a < len(doubled[key])
                                 and doubled[key][a] == 2 * size), None)
                elif isinstance(dims, int) and not isinstance(dims, bool) and dims == size \
                        and doubled[key] == 2 * size:
                    axis = -1  # the input is the size itself
                else:
                    axis = None
                if axis is not None:
                    where[dim] = (key, axis)
                    break
            else:
                raise KernelModuleError(f"{self.source.path}: no input has a length that follows the problem size "
                                        f"{dim!r}; define shape_of(inputs) (docs/kernel-protocol.md)")

        def read(inputs: dict) -> dict:
            return {dim: int(inputs[key]) if axis == -1 else int(inputs[key].shape[axis])
                    for dim, (key, axis) in where.items()}

        return read

    def baseline(self, inputs: dict):
        """The op a result is compared with for speed: the module's baseline, else its reference, else
        the kernel at its reference configuration (into output buffers of its own: what the candidate's
        launches leave stays theirs)."""
        fn = self.fn("baseline") or self.fn("reference")
        if fn is not None:
            return fn(inputs)
        held = self.__dict__.get("_baseline_inputs")
        if held is None or held[0] is not inputs:  # kept with its inputs: an id of a freed dict may come back
            own = {k: v.clone() if k in self._output_names(inputs) else v for k, v in inputs.items()}
            self.__dict__["_baseline_inputs"] = held = (inputs, own)
        return self.launch(held[1], *self.reference_point())

    def count(self, what: str, shape: dict, dtype: str) -> float:
        """flops or bytes_moved of the problem. Where the module does not say: no flops (0), and the bytes
        of every tensor make_inputs returns, each read or written once."""
        fn = self.fn(what)
        if fn is not None:
            return float(fn(dict(shape), torch_dtype(dtype)))
        if what != "bytes_moved":
            return 0.0
        made = self.make_inputs(shape, dtype, Tensors("meta", 0))
        return float(sum(v.numel() * v.element_size() for v in made.values() if hasattr(v, "element_size")))

    def traffic(self, shape: dict, dtype: str, params: dict) -> float:
        """Bytes the kernel really moves with these params (for the cost model), default bytes_moved."""
        fn = self.fn("traffic")
        if fn is None:
            return self.count("bytes_moved", shape, dtype)
        return float(fn(dict(shape), torch_dtype(dtype), dict(params)))

    def work_items(self, shape: dict, dtype: str, params: dict) -> float:
        """Independent pieces of work (output tiles) the programs share out, for the cost model; 0 when the
        module does not say (one per program). A persistent kernel launches fewer programs than tiles."""
        return self._count_at_point("work_items", shape, dtype, params)

    def grid_syncs(self, shape: dict, dtype: str, params: dict) -> float:
        """How many times one call's programs wait for each other across the grid (a sequence kernel's
        per-step barrier), for the cost model; 0 when the module does not say."""
        return self._count_at_point("grid_syncs", shape, dtype, params)

    def lockstep_reads(self, shape: dict, dtype: str, params: dict) -> float:
        """Bytes of the traffic that programs of one wave re-read from the same tiles at the same step (a
        GEMM's tiles of one row or column of C, read at the same K step), which an L2 may serve from one
        lookup for several requesters, for the cost model; 0 when the module does not say."""
        return self._count_at_point("lockstep_reads", shape, dtype, params)

    def pipeline_stages(self, shape: dict, dtype: str, params: dict) -> float:
        """Shared-memory stages the kernel's main loop rotates through (one read while the others load),
        where they are all its shared memory, for the cost model; 0 when the module does not say."""
        return self._count_at_point("pipeline_stages", shape, dtype, params)

    def load_warps(self, shape: dict, dtype: str, params: dict) -> float:
        """Warps of a program that only issue its main loop's loads (a warp-specialized producer), for the
        cost model; 0 when the module does not say (the warps that compute also load)."""
        return self._count_at_point("load_warps", shape, dtype, params)

    def _count_at_point(self, what: str, shape: dict, dtype: str, params: dict) -> float:
        """The module's `what`(shape, dtype, params) as a number, 0 where the module has none."""
        fn = self.fn(what)
        return 0.0 if fn is None else float(fn(dict(shape), torch_dtype(dtype), dict(params)))


@dataclass(frozen=True)
class KernelObject:
    """A module-level Triton kernel as kt launches it. Under an `@triton.autotune`, kt is the tuner:
    it launches what the autotuner wraps and supplies the point's values of the kernel's arguments (the
    config's kwargs), which the module's launch then leaves out, as it does for an autotuned kernel.
    `@triton.heuristics` between them still computes its arguments at every launch."""

    call: Any  # what kt launches: the object under the autotuner (heuristics or the JIT function)
    jit: Any  # the innermost @triton.jit function: its arguments and constexprs are what is compiled
    heuristics: tuple = ()  # each @triton.heuristics' {argument: fn(args)}, outermost first
    autotuner: Any = None  # the @triton.autotune object: its configs seed the space

    @property
    def arg_names(self) -> list:
        return list(self.jit.arg_names)

    def supplied(self, params: dict) -> dict:
        """The point's values kt passes to an autotuned kernel: those naming its arguments."""
        if self.autotuner is None:
            return {}
        return {k: v for k, v in params.items() if k in self.jit.arg_names}

    def zeroed(self) -> tuple:
        """Arguments the autotuner resets to zero before each launch (`reset_to_zero`)."""
        return tuple(getattr(self.autotuner, "reset_to_zero", ()) or ()) if self.autotuner is not None else ()


def kernel_objects(module) -> dict:
    """{name: KernelObject} of the module's Triton kernels: @triton.jit functions, under
    @triton.heuristics and @triton.autotune or not."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover
        InterpretedFunction = JITFunction
    found = {}
    for name, obj in vars(module).items():
        autotuner = obj if isinstance(obj, Autotuner) else None
        call = obj.fn if autotuner is not None else obj
        heuristics, inner = [], call
        while isinstance(inner, Heuristics):
            heuristics.append(dict(inner.values))
            inner = inner.fn
        if isinstance(inner, (JITFunction, InterpretedFunction)):
            found[name] = KernelObject(call, inner, tuple(heuristics), autotuner)
    return found


def _same_bits(a, b) -> bool:
    """Whether two tensors hold the same bytes (NaN payloads included)."""
    import torch

    return a.shape == b.shape and torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def jit_functions(module) -> dict:
    """{name: the innermost @triton.jit function} of the module's kernels."""
    return {name: k.jit for name, k in kernel_objects(module).items()}


def config_point(config) -> dict:
    """A triton.Config as a point: its kwargs and the launch options num_warps and num_stages (num_ctas
    where it is not 1)."""
    point = {**config.kwargs, "num_warps": config.num_warps, "num_stages": config.num_stages}
    if getattr(config, "num_ctas", 1) not in (None, 1):
        point["num_ctas"] = config.num_ctas
    return point


def autotune_space(module) -> tuple[dict, list]:
    """(space, seeds) from the module's @triton.autotune configs: every value a knob takes in some
    config, and each config as a point (launch options num_warps and num_stages included)."""
    space: dict = {}
    seeds = []
    for k in kernel_objects(module).values():
        for config in getattr(k.autotuner, "configs", None) or ():
            point = config_point(config)
            seeds.append(point)
            for key, value in point.items():
                values = space.setdefault(key, [])
                if value not in values:
                    values.append(value)
    return {k: sorted(v) if all(isinstance(x, (int, float)) for x in v) else v for k, v in space.items()}, seeds


class KernelSet:
    """What `launch(k, inputs, params)` receives: `k.NAME` is the module's kernel NAME."""

    def __init__(self, module, wrap=None):
        for name, k in kernel_objects(module).items():
            setattr(self, name, wrap(k) if wrap else k.call)


class Tensors:
    """The tensor factory make_inputs receives: seeded, on the worker's device; `meta` tensors have no data."""

    def __init__(self, device: str, seed: int):
        import torch

        self.device = device
        self.meta = device == "meta"
        self._gen = None if self.meta else torch.Generator(device=device).manual_seed(seed)

    def _make(self, fill, size, dtype):
        import torch

        size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
        if self.meta:
            return torch.empty(size, dtype=dtype, device="meta")
        return fill(size)

    def randn(self, *size, dtype=None, scale: float = 1.0):
        import torch

        dtype = dtype or torch.float32

        def fill(s):
            x = torch.randn(s, generator=self._gen, device=self.device, dtype=torch.float32)
            return (x * scale).to(dtype)

        return self._make(fill, size, dtype)

    def rand(self, *size, dtype=None, low: float = 0.0, high: float = 1.0):
        import torch

        dtype = dtype or torch.float32

        def fill(s):
            x = torch.rand(s, generator=self._gen, device=self.device, dtype=torch.float32)
            return (low + (high - low) * x).to(dtype)

        return self._make(fill, size, dtype)

    def randint(self, low: int, high: int, *size, dtype=None):
        import torch

        dtype = dtype or torch.int32
        return self._make(lambda s: torch.randint(low, high, s, generator=self._gen, device=self.device).to(dtype),
                          size, dtype)

    def empty(self, *size, dtype=None):
        import torch

        dtype = dtype or torch.float32
        return self._make(lambda s: torch.empty(s, dtype=dtype, device=self.device), size, dtype)

    def as_tensor(self, data, dtype=None):
        """Host data (index arrays, CSR structure) moved to the device; a meta tensor of its shape when meta."""
        import torch

        t = torch.as_tensor(data, dtype=dtype)
        return torch.empty(t.shape, dtype=t.dtype, device="meta") if self.meta else t.to(self.device)

    def generator(self):
        """A CPU torch.Generator seeded like this factory, for host-side random structure."""
        import torch

        return torch.Generator().manual_seed(int(self._gen.initial_seed()) if self._gen else 0)


@dataclass
class Launch:
    """One recorded `kernel[grid](...)` call: what a cross-compile needs."""

    fn: Any
    grid: tuple
    args: dict  # argument name -> value (tensors, ints, floats, constexprs)
    options: dict  # launch options (num_warps, num_stages, vendor knobs)

    @property
    def programs(self) -> int:
        n = 1
        for g in self.grid:
            n *= max(1, int(g))
        return n


def _first_option_parameter(fn, options: dict) -> int | None:
    """The position of the first parameter of `fn` named like a launch option, or None."""
    names = list(getattr(fn, "arg_names", ()))
    found = [names.index(k) for k in options if k in names]
    return min(found) if found else None


def _bind_options(fn, first: int | None, args: tuple, kwargs: dict, options: dict) -> tuple[tuple, dict]:
    """(args, kwargs) of `fn[grid](*args, **kwargs)` with the launch options added by keyword, as
    Triton's JIT binds them: a keyword naming a kernel parameter (the tutorial softmax's own
    `num_stages`) gives that parameter its value and is the launch option too. When such a parameter
    (at position `first`) is given by position, it and the arguments after it are passed by keyword
    instead (the same binding), so that the option's value reaches both."""
    if first is not None and len(args) > first:
        kwargs = {**dict(zip(fn.arg_names[first:], args[first:])), **kwargs}
        args = args[:first]
    return args, {**kwargs, **options}


def _supply(k: KernelObject, supplied: dict, args: tuple, kwargs: dict) -> dict:
    """kwargs with an autotuned kernel's point values added, where the call does not give them."""
    given = set(k.arg_names[:len(args)]) | set(kwargs)
    return {**{n: v for n, v in supplied.items() if n not in given}, **kwargs}


def interpretable(fn) -> bool:
    """Whether Triton's interpreter can run kernel function `fn`: under TRITON_INTERPRET=1 every
    @triton.jit function is an InterpretedFunction, but a kernel of another Triton dialect (a @gluon.jit
    function, a JITFunction subclass) stays a compiled function that only a device runs. Answers the
    same in a process with the interpreter on (InterpretedFunction) or off (exactly a JITFunction)."""
    from triton.runtime.jit import JITFunction

    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover - another Triton layout
        InterpretedFunction = JITFunction
    return isinstance(fn, InterpretedFunction) or type(fn) is JITFunction


class NotInterpretable(Exception):
    """A launch under TRITON_INTERPRET=1 of a kernel the interpreter cannot run (see interpretable)."""

    def __init__(self, kernel_name: str):
        super().__init__(f"{kernel_name}: Triton's interpreter cannot run this kernel")
        self.kernel_name = kernel_name


class _WithOptions:
    def __init__(self, k: KernelObject, options: dict, params: dict | None = None):
        self.k, self.fn, self.options = k, k.call, options
        self.first = _first_option_parameter(k.jit, options)
        self.supplied, self.zeroed = k.supplied(params or {}), k.zeroed()
        # on the CPU it would fail deep in Triton ("0 active drivers"), a crash it is not
        self.refused = os.environ.get("TRITON_INTERPRET") == "1" and not interpretable(k.jit)

    def __getitem__(self, grid):
        if self.refused:
            raise NotInterpretable(self.k.jit.__name__)
        runner = self.fn[grid]
        if self.first is None and not self.supplied and not self.zeroed:
            # the common case, kept as cheap as a launch can be: it is timed
            return lambda *args, **kwargs: runner(*args, **{**kwargs, **self.options})

        def run(*args, **kwargs):
            kwargs = _supply(self.k, self.supplied, args, kwargs)
            for name in self.zeroed:  # as the autotuner does before every launch
                value = dict(zip(self.k.arg_names, args)).get(name, kwargs.get(name))
                if value is not None:
                    value.zero_()
            args, kwargs = _bind_options(self.k.jit, self.first, args, kwargs, self.options)
            return runner(*args, **kwargs)

        return run


class _Recorder:
    def __init__(self, k: KernelObject, launches: list, options: dict, params: dict | None = None):
        self.k, self.fn, self.launches, self.options = k, k.jit, launches, options
        self.supplied = k.supplied(params or {})

    def __getitem__(self, grid):
        def record(*args, **kwargs):
            kwargs = _supply(self.k, self.supplied, args, kwargs)
            args, kwargs = _bind_options(self.fn, _first_option_parameter(self.fn, self.options), args, kwargs,
                                         self.options)
            names = self.fn.arg_names
            bound = dict(zip(names, args))
            options = {}
            for key, value in kwargs.items():
                if key in names:
                    bound[key] = value
                if key not in names or key in self.options:
                    options[key] = value
            for values in self.k.heuristics:  # as each @triton.heuristics computes them, outermost first
                for name, rule in values.items():
                    bound[name] = rule(dict(bound))
            g = grid(bound) if callable(grid) else grid
            g = tuple(g) if isinstance(g, (tuple, list)) else (g,)
            self.launches.append(Launch(self.fn, g, bound, options))

        return record


def record_launches(kernel: Kernel, shape: dict, dtype: str, params: dict, options: dict) -> list[Launch]:
    """Run the kernel's launch function on meta tensors, recording each kernel launch instead of running it."""
    launches: list[Launch] = []
    inputs = kernel.make_inputs(shape, dtype, Tensors("meta", 0))
    kernel.launch(inputs, params, options, launches=launches)
    return launches


class _ReadTracker(dict):
    """The params a launch function gets in a knob check: notes every key it reads, and the first key it
    asks for that is not there. Reading all keys at once (iterating, copying) counts as reading each."""

    def __init__(self, params: dict):
        super().__init__(params)
        self.read: set = set()
        self.missing = None

    def __getitem__(self, key):
        self.read.add(key)
        if not dict.__contains__(self, key) and self.missing is None:
            self.missing = key
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)

    def _all(self):
        self.read.update(dict.keys(self))

    def __iter__(self):
        self._all()
        return super().__iter__()

    def keys(self):
        self._all()
        return super().keys()

    def items(self):
        self._all()
        return super().items()

    def values(self):
        self._all()
        return super().values()

    def copy(self):
        self._all()
        return dict(self.items())


def knobs_read(kernel: Kernel, shape: dict, dtype: str, params: dict) -> dict:
    """What the kernel makes of a point's kernel knobs, on meta tensors (nothing runs on a device):
    the keys its launch read, the first one it asked for that `params` lacks, whether the launch ran
    to its end, and the names it takes otherwise (its SPACE, its @triton.jit functions' arguments)."""
    tracker = _ReadTracker(params)
    completed = True
    try:
        inputs = kernel.make_inputs(shape, dtype, Tensors("meta", 0))
        kernel.fn("launch")(KernelSet(kernel.module, lambda k: _Recorder(k, [], {}, params)), inputs, tracker)
    except Exception:
        completed = False
    known = set(kernel.attr("SPACE", {}) or {}) | kernel.jit_arguments
    return {"read": sorted(map(str, tracker.read)), "missing": tracker.missing, "completed": completed,
            "known": sorted(known)}


