"""Cross-compile a recorded Triton launch for any backend, no GPU needed. Vendor plugins call this with
their own target; it holds what differs between Triton 3.6 and 3.9.

The launch is specialised by Triton's own JIT code (its binder and `_pack_args`), as a real launch
of the same arguments would be, so the binary lands in Triton's cache under the key the device
worker's JIT computes: the device loads it instead of compiling the candidate again. Specialising
by hand drifted between Triton versions (3.6 keys constexprs by argument index and lists no
attribute for them; 3.9 by name), and then every candidate compiled twice, once on the device's
critical path (tests/test_compile_cache.py)."""

from __future__ import annotations


WARM_ENV = "KT_WORKER_WARM"  # "compile" in a worker's environment: it calls warm_up as it starts


def warm_up() -> None:
    """Do now, once for this process, what its first cross-compile would otherwise do on a candidate's
    time: import Triton and its compiler, and compute the key Triton hashes its own sources and
    libraries into (`triton_key`, cached per process; 0.4 s of a 2-core CPU machine's first compile,
    more where a host's every compile worker starts at once). A compile worker calls it as it starts,
    while kt opens its studies and readies its devices: its first candidate's compile then costs what a
    later one does (benchmarks/first_compile.py); a device's worker calls it as it readies. Best effort:
    where a Triton version keeps the key elsewhere, the first compile computes it as before."""
    import importlib

    import triton  # noqa: F401
    from triton.compiler import make_backend  # noqa: F401 - the compiler and its backends' discovery

    for module in ("triton.runtime.cache", "triton.compiler.compiler"):
        key = getattr(importlib.import_module(module), "triton_key", None)
        if callable(key):
            key()
            return


def cross_compile(launch, backend: str, arch, warp_size: int):
    """Compile `launch` (kt_cli.kernel.Launch: fn, args by name, launch options) for the target."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend

    target = GPUTarget(backend, arch, warp_size)
    signature, constexprs, attrs, options = specialise(launch, make_backend(target))
    source = source_class(launch.fn)(launch.fn, signature, constexprs, attrs)
    return triton.compile(source, target=target, options=options)


def specialise(launch, backend) -> tuple[dict, dict, dict, dict]:
    """(signature, constexprs, attrs, options) of `launch` for `backend`, exactly as JITFunction.run
    derives them before it looks up its cache."""
    from triton.runtime.jit import create_function_from_signature

    fn = launch.fn
    kwargs = _run_options(fn, launch.options)
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    # by keyword; a kernel parameter named like a launch option (num_stages) takes the option's value
    args = {name: value for name, value in launch.args.items() if name not in kwargs}
    bound, specialization, options = binder(**args, **kwargs)
    options, signature, constexprs, attrs = fn._pack_args(backend, kwargs, bound, specialization, options)
    return signature, constexprs, attrs, options.__dict__


def _run_options(fn, options: dict) -> dict:
    """The launch options as JITFunction.run completes them from Triton's knobs (which knobs it adds
    depends on the version)."""
    from triton import knobs

    kwargs = dict(options)
    kwargs["debug"] = kwargs.get("debug", fn.debug) or knobs.runtime.debug
    for name in ("instrumentation_mode", "fpsan_homomorphic_casts"):
        if hasattr(knobs.compilation, name):
            kwargs[name] = getattr(knobs.compilation, name)
    return kwargs


def source_class(fn):
    """The AST source Triton's JIT compiles `fn` from: its own ASTSource, or the one of the Triton
    dialect the function is written in (a Gluon kernel's GluonASTSource, which sets the layouts'
    module attributes up front); both exist in Triton 3.6 to 3.9. (The JIT picks it when it binds a
    device, which a cross-compile has none of.)"""
    from triton.compiler import ASTSource

    is_gluon = getattr(fn, "is_gluon", None)
    if callable(is_gluon) and is_gluon():
        from triton.experimental.gluon._runtime import GluonASTSource

        return GluonASTSource
    return ASTSource
