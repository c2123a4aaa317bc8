"""`kt export`: an artifact's tuned configs for another tool (today: triton.Config lists for
`@triton.autotune`)."""

from __future__ import annotations

from pathlib import Path

from kt_cli.artifact import store as artifact


def _config_keywords() -> frozenset:
    """The launch options triton.Config takes by name (num_warps, num_stages...), asked of Triton."""
    import inspect

    import triton

    return frozenset(inspect.signature(triton.Config.__init__).parameters) - {"self", "kwargs"}


EXPORT_TIMEOUT_S = 300.0  # recording one config's launches on meta tensors (a worker's start included)


def triton_configs(path) -> str:
    """A Python module defining CONFIGS = {target: [triton.Config(...), ...]} and KEYS (the problem
    each config was tuned for, same order), for `@triton.autotune(configs=CONFIGS[target], ...)`.

    A config holds what the kernel really got at its tuned problem (kt's launch function recorded on
    meta tensors in a worker: a value the launch rewrites is exported as rewritten, and says so). What
    a triton.Config cannot carry is refused with the reason: a launch that runs several kernels, or a
    knob that is neither an argument of the kernel nor a launch option (it shapes the grid or the
    launch itself): kt_cli.load runs those."""
    manifest = artifact.read(path)
    by_target, computed, kernel_names = _recorded_configs(manifest)
    return _module_text(manifest, by_target, computed, kernel_names)


def _recorded_configs(manifest: dict) -> tuple[dict, dict, dict]:
    """({target: [(shape, mode, kernel arguments, launch options, rewritten)]}, the constexprs kt's
    launch function computes per problem, the kernels launched), or a BadInput where a config cannot
    be a triton.Config."""
    from kt_cli.errors import BadInput
    from kt_cli.evaluate.pool import Worker
    from kt_cli.evaluate.requests import split_params

    source = artifact.kernel_source(manifest)
    by_target: dict = {}
    computed: dict = {}  # ordered sets
    kernel_names: dict = {}
    with Worker() as worker:
        for e in manifest["results"]:
            if e.get("params") is None:
                continue
            options_named = tuple(manifest.get("launch_options", {}).get(e["target"], ()))
            params, options = split_params(e["params"], options_named)
            launches = worker.call("launch_arguments", {"source": source, "shape": e["shape"],
                                                        "dtype": manifest["dtype"], "params": params,
                                                        "options": options}, EXPORT_TIMEOUT_S)
            kernels = list(dict.fromkeys(launch["kernel"] for launch in launches))
            where = f"{manifest['_path']}: {e['target']} {e['shape']}"
            if len(kernels) != 1:
                raise BadInput(f"{where}: the launch runs {len(kernels)} kernels ({', '.join(kernels) or 'none'}); a "
                               "triton.Config list tunes one @triton.jit function: load the artifact with kt_cli.load")
            got = launches[0]["arguments"]
            shaping = sorted(k for k in params if k not in got)
            if shaping:
                raise BadInput(f"{where}: knob {shaping[0]!r} is not an argument of {kernels[0]}: it shapes the launch "
                               "(the grid, the kernels run), which a triton.Config cannot carry: load the artifact "
                               "with kt_cli.load")
            rewritten = {k: (params[k], v) for k, v in got.items() if v != params[k]}
            by_target.setdefault(e["target"], []).append((e["shape"], e["mode"], got, options, rewritten))
            computed.update(dict.fromkeys(launches[0]["computed"]))
            kernel_names.update(dict.fromkeys(kernels))
    return by_target, computed, kernel_names


def _module_text(manifest: dict, by_target: dict, computed: dict, kernel_names: dict) -> str:
    lines = [f'"""triton.Config lists exported by kt from {Path(manifest["_path"]).name} '
             f'({manifest["name"]}, {manifest["dtype"]}, created {manifest["created"]})."""',
             ""]
    if computed:
        lines += [f"# A config sets the tuned knobs only: each call of {', '.join(kernel_names)} still passes "
                  f"{', '.join(computed)},", "# which kt's launch function computes for each problem.", ""]
    lines += ["import triton", "", "CONFIGS = {"]
    keys = ["KEYS = {"]
    for target, configs in by_target.items():
        lines.append(f"    {target!r}: [")
        keys.append(f"    {target!r}: [")
        for shape, mode, kwargs, options, rewritten in configs:
            # Options triton.Config takes by name are passed by name; other launch options (a vendor's own
            # knobs) travel in kwargs, which is where Triton's backends read them.
            named = {k: v for k, v in options.items() if k in _config_keywords()}
            extra = {k: v for k, v in options.items() if k not in named}
            args = "".join(f", {k}={v!r}" for k, v in named.items())
            said = "".join(f"; {k}: searched {was!r}, kt's launch passes {now!r} at this problem"
                           for k, (was, now) in rewritten.items())
            lines.append(f"        triton.Config({ {**kwargs, **extra}!r}{args}),  # {mode}{said}")
            keys.append(f"        {shape!r},")
        lines.append("    ],")
        keys.append("    ],")
    return "\n".join(lines + ["}", ""] + keys + ["}", ""])
