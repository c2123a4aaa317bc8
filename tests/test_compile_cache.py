"""The compile pool compiles each candidate ahead of the device. That only saves the device's time if
the binary lands in Triton's cache under the key the device worker's JIT computes for the real launch;
otherwise the JIT compiles the candidate again on the device's critical path. These tests build both
keys on the CPU (Triton's own binder and cache-key code for the JIT side) and require them equal."""

import pytest

from kt_cli.kernel import Kernel, Tensors, record_launches
from tests.kernel_checks import template

CASES = [
    ("softmax", "bfloat16", {"M": 4096, "N": 4096}, {"BLOCK_N": 4096, "ROWS": 2, "ROW_STAGES": 2},
     {"num_warps": 8, "num_stages": 1}),
    ("rmsnorm", "float16", {"M": 37, "N": 300}, {"BLOCK_N": 512}, {"num_warps": 4, "num_stages": 2}),
    # split-K: two launches (the GEMM into the workspace, then the reduction), ragged 1000-wide rows
    ("matmul", "bfloat16", {"M": 1000, "N": 1000, "K": 1000},
     {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 2, "PROGRAMS_PER_UNIT": 0,
      "UNITS": 132, "TMA": 0}, {"num_warps": 4, "num_stages": 3}),
    ("matmul", "bfloat16", {"M": 256, "N": 256, "K": 256},
     {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 1,
      "UNITS": 132, "TMA": 1}, {"num_warps": 8, "num_stages": 3}),
    # the Gluon kernel: host-built descriptor arguments, Gluon's own AST source, num_stages bound as a parameter
    ("matmul", "bfloat16", {"M": 1000, "N": 1000, "K": 1000},
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "SPLIT_K": 1, "PROGRAMS_PER_UNIT": 1,
      "UNITS": 132, "TMA": 1, "GLUON": 1}, {"num_warps": 8, "num_stages": 3}),
]


def _keys(name, dtype, shape, params, options):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    from triton.compiler.compiler import get_cache_key
    from triton.runtime.jit import create_function_from_signature

    from kt_cli.evaluate.cross_compile import source_class, specialise
    from kt_cli.evaluate.requests import split_params

    target = GPUTarget("cuda", 90, 32)
    backend = make_backend(target)
    env = {}
    kernel = Kernel.load(template(name))
    kernel_params, _ = split_params(params, tuple(options))
    pool = record_launches(kernel, shape, dtype, kernel_params, options)  # what the compile pool compiles
    real = []  # what the device worker launches: real (CPU) tensors, the JIT's own specialisation
    kernel.launch(kernel.make_inputs(shape, dtype, Tensors("cpu", 0)), kernel_params, options, launches=real)
    assert [launch.fn for launch in pool] == [launch.fn for launch in real]
    out = []
    for ahead, launch in zip(pool, real):
        signature, constexprs, attrs, options = specialise(ahead, backend)  # the pool's path
        pool_key = get_cache_key(source_class(ahead.fn)(ahead.fn, signature, constexprs, attrs), backend,
                                 backend.parse_options(options), env)
        fn = launch.fn
        kwargs = {**launch.options, "debug": False}  # JITFunction.run adds debug
        binder = create_function_from_signature(fn.signature, fn.params, backend)
        # by keyword: a parameter named like a launch option (num_stages) takes the option's value, as in the JIT
        args = {n: launch.args[n] for n in fn.arg_names if n not in kwargs}
        bound, specialization, jit_options = binder(**args, **kwargs)
        jit_options, signature, constexprs, attrs = fn._pack_args(backend, kwargs, bound, specialization,
                                                                  jit_options)
        jit_key = get_cache_key(source_class(fn)(fn, signature, constexprs, attrs), backend, jit_options, env)
        out.append((fn.__name__, pool_key, jit_key))
    return out


@pytest.mark.parametrize("name,dtype,shape,params,options", CASES)
def test_the_device_finds_the_binary_the_compile_pool_made(name, dtype, shape, params, options):
    for fn, pool_key, jit_key in _keys(name, dtype, shape, params, options):
        assert pool_key == jit_key, f"{fn}: the device's JIT would compile the candidate again"


@pytest.mark.parametrize("readied", [False, True])
def test_a_readied_compile_worker_does_not_ready_the_compiler_on_its_first_candidates_time(tmp_path, readied):
    """A compile worker readies Triton as it starts (cross_compile.warm_up): its first candidate's
    compile request no longer computes the key Triton hashes its own files into (0.4 s and more of every
    compile worker's first compile, the run's whole first batch). Read from the request's own profile."""
    import pstats

    from kt_cli import plugins
    from kt_cli.evaluate.cross_compile import WARM_ENV
    from kt_cli.evaluate.pool import WorkerPool
    from kt_cli.types import Candidate

    profiles = tmp_path / "profiles"
    profiles.mkdir()
    env = {"TRITON_INTERPRET": "0", WARM_ENV: "compile" if readied else "", "TRITON_CACHE_DIR": str(tmp_path / "t"),
           "KT_CACHE_DIR": str(tmp_path / "k"), "KT_PROFILE_DIR": str(profiles), "KT_PROFILE_REQUESTS": "1"}
    target = plugins.target("nvidia:sm_90")
    source = template("softmax")
    candidate = Candidate(source.path, {"BLOCK_N": 1024, "ROWS": 1, "ROW_STAGES": 1, "num_warps": 4, "num_stages": 1},
                          target.name, {"M": 64, "N": 1000}, "float16", "measured")
    pool = WorkerPool(1, env)
    try:
        compiled = pool.call("compile", {"source": source, "candidate": candidate, "target": target}, 300)
    finally:
        pool.stop()
    assert compiled["resources"]["registers"] > 0
    (profile,) = profiles.glob("compile-*.prof")
    called = {name for (_, _, name) in pstats.Stats(str(profile)).stats}
    assert ("triton_key" in called) is not readied
