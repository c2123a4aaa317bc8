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
    each config was tuned for, same order), for `@triton.autotune(configs=CONFIGS[target], ...)`, and,
    where the module declares them, HEURISTICS for `@triton.heuristics` and the GRID of the launch.

    A config holds what the kernel really got at its tuned problem (kt's launch function recorded on
    meta tensors in a worker), the constexprs that launch computes included. It is checked at every
    problem the artifact names (its tuned and verification shapes): config + HEURISTICS must give the
    arguments kt's launch gave there, and GRID its grid (export_rules). What a triton.Config cannot
    carry is refused with the reason: a launch that runs several kernels, a knob that is neither an
    argument of the kernel nor a launch option, a value the launch changes per problem that the module
    does not declare: kt_cli.load runs those."""
    manifest = artifact.read(path)
    by_target, declared = _recorded_configs(manifest)
    return _module_text(manifest, by_target, declared)


def _probe_shapes(manifest: dict) -> list[dict]:
    """Every problem the artifact names: tuned shapes and verification shapes, each once."""
    shapes = [e["shape"] for e in manifest["results"]]
    shapes += [s for e in manifest["results"] for s in ((e.get("verification") or {}).get("shapes") or ())]
    return list({tuple(sorted(s.items())): s for s in shapes}.values())


def _recorded_configs(manifest: dict) -> tuple[dict, tuple]:
    """({target: [(shape, mode, kernel arguments, launch options, rewritten)]}, (heuristics, grid)), or a
    BadInput where a config cannot be a triton.Config."""
    from kt_cli.evaluate.pool import Worker
    from kt_cli.evaluate.requests import split_params

    source = artifact.kernel_source(manifest)
    by_target: dict = {}
    declared = ({}, None)
    with Worker() as worker:
        for e in manifest["results"]:
            if e.get("params") is None:
                continue
            options_named = tuple(manifest.get("launch_options", {}).get(e["target"], ()))
            params, options = split_params(e["params"], options_named)

            def record(shape, params=params, options=options):
                return worker.call("launch_arguments", {"source": source, "shape": shape, "dtype": manifest["dtype"],
                                                        "params": params, "options": options}, EXPORT_TIMEOUT_S)

            where = f"{manifest['_path']}: {e['target']} {e['shape']}"
            config, declared = _one_config(where, params, record(e["shape"]),
                                           [(s, record(s)) for s in _probe_shapes(manifest)])
            rewritten = {k: (params[k], v) for k, v in config.items() if k in params and v != params[k]}
            by_target.setdefault(e["target"], []).append((e["shape"], e["mode"], config, options, rewritten))
    return by_target, declared


def _one_kernel(where: str, launches: list[dict]) -> dict:
    from kt_cli.errors import BadInput

    kernels = list(dict.fromkeys(launch["kernel"] for launch in launches))
    if len(kernels) != 1:
        raise BadInput(f"{where}: the launch runs {len(kernels)} kernels ({', '.join(kernels) or 'none'}); a "
                       "triton.Config list tunes one @triton.jit function: load the artifact with kt_cli.load")
    return launches[0]


def _one_config(where: str, params: dict, tuned: list[dict], probes: list[tuple]) -> tuple[dict, tuple]:
    """The config's kwargs (kernel arguments only) and the module's compiled (heuristics, grid), checked
    at every probe: (a problem, the launches recorded there)."""
    from kt_cli.artifact import export_rules
    from kt_cli.errors import BadInput

    launch = _one_kernel(where, tuned)
    shaping = sorted(k for k in params if k not in launch["arguments"])
    if shaping:
        raise BadInput(f"{where}: knob {shaping[0]!r} is not an argument of {launch['kernel']}: it shapes the launch "
                       "(the grid, the kernels run), which a triton.Config cannot carry: load the artifact "
                       "with kt_cli.load")
    heuristics, grid = export_rules.compiled(launch["declared"], launch["scalars"], f"{where}: {launch['kernel']}")
    # computed constexprs at their tuned values, but for those a heuristic sets without reading them
    kept = [n for n in launch["computed"] if n not in heuristics or f"args[{n!r}]" in heuristics[n]]
    config = {**launch["arguments"], **{n: launch["scalars"][n] for n in kept}}
    seen = [(shape, _one_kernel(where, p)) for shape, p in probes]
    export_rules.check(where, config, [{"shape": shape, "scalars": p["scalars"], "grid": p["grid"],
                                        "values": {n: p["scalars"][n] for n in [*p["arguments"], *p["computed"]]}}
                                       for shape, p in seen], heuristics, grid)
    return config, (heuristics, grid)


def _module_text(manifest: dict, by_target: dict, declared: tuple) -> str:
    heuristics, grid = declared
    lines = [f'"""triton.Config lists exported by kt from {Path(manifest["_path"]).name} '
             f'({manifest["name"]}, {manifest["dtype"]}, created {manifest["created"]}).', ""]
    usage = "@triton.autotune(configs=CONFIGS[target], key=[...])"
    if heuristics:
        usage += " over @triton.heuristics(HEURISTICS)"
    lines += [f"On the kernel: {usage}; each call passes the kernel's other arguments"
              + (" and launches on GRID" if grid else "") + ".", "Checked by kt: at every problem the artifact "
              "names, these give the arguments kt's launch gave.", '"""', "", "import triton", "", "CONFIGS = {"]
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
    lines += ["}", "", *keys, "}", ""]
    if heuristics:  # the constexprs kt's launch computes per call, as the module declares them
        lines += ["HEURISTICS = {", *(f"    {k!r}: {v}," for k, v in heuristics.items()), "}", ""]
    if grid:
        lines += [f"GRID = {grid}", ""]
    return "\n".join(lines)
