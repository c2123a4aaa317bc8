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


def triton_configs(path) -> str:
    """A Python module defining CONFIGS = {target: [triton.Config(...), ...]} and KEYS (the problem
    each config was tuned for, same order), for `@triton.autotune(configs=CONFIGS[target], ...)`."""
    manifest = artifact.read(path)
    by_target: dict = {}
    for e in manifest["results"]:
        if e.get("params") is None:
            continue
        options = set(manifest.get("launch_options", {}).get(e["target"], ()))
        kwargs = {k: v for k, v in e["params"].items() if k not in options}
        config_options = {k: v for k, v in e["params"].items() if k in options}
        by_target.setdefault(e["target"], []).append((e["shape"], e["mode"], kwargs, config_options))
    lines = [f'"""triton.Config lists exported by kt from {Path(manifest["_path"]).name} '
             f'({manifest["name"]}, {manifest["dtype"]}, created {manifest["created"]})."""',
             "", "import triton", "", "CONFIGS = {"]
    keys = ["KEYS = {"]
    for target, configs in by_target.items():
        lines.append(f"    {target!r}: [")
        keys.append(f"    {target!r}: [")
        for shape, mode, kwargs, options in configs:
            # Options triton.Config takes by name are passed by name; other launch options (a vendor's own
            # knobs) travel in kwargs, which is where Triton's backends read them.
            named = {k: v for k, v in options.items() if k in _config_keywords()}
            extra = {k: v for k, v in options.items() if k not in named}
            args = "".join(f", {k}={v!r}" for k, v in named.items())
            lines.append(f"        triton.Config({ {**kwargs, **extra}!r}{args}),  # {mode}")
            keys.append(f"        {shape!r},")
        lines.append("    ],")
        keys.append("    ],")
    return "\n".join(lines + ["}", ""] + keys + ["}", ""])
