"""The plugin manager: built-ins first, then entry points of group `kt`, each on its own."""

from __future__ import annotations

import importlib
import os
import sys
from importlib import metadata

import pluggy

from kt_cli import hookspecs
from kt_cli.errors import BadInput, PluginConflict

DEFAULT_PLUGINS = (
    "vendor_nvidia.plugin",
    "vendor_amd.plugin",
    "kt_templates",
    "kt_dsl",
    "kt_cli.commands",
    "kt_llm",
    "kt_cli.status",
)
# Set to 1 to load only kt's built-in plugins (a broken third-party plugin can then be bypassed).
NO_EXTERNAL_ENV = "KT_NO_EXTERNAL_PLUGINS"

pm = pluggy.PluginManager("kt")
pm.add_hookspecs(hookspecs)
_loaded = False
_dist_versions: dict[str, str] = {}


def load_plugins() -> pluggy.PluginManager:
    """Register built-ins and entry points once; later calls return the same manager."""
    global _loaded
    if _loaded:
        return pm
    _loaded = True
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    if os.environ.get(NO_EXTERNAL_ENV, "") in ("", "0"):
        for ep in metadata.entry_points(group="kt"):
            if pm.get_plugin(ep.name) is not None:
                continue
            try:
                pm.register(ep.load(), name=ep.name)
                _dist_versions[ep.name] = ep.dist.version if ep.dist else "?"
            except Exception as exc:  # a broken plugin must not break the CLI
                message = f'Error loading plugin "{ep.name}": {type(exc).__name__}: {exc}'
                print(f"kt: warning: {message}", file=sys.stderr)
    return pm


def plugin_version(name: str, plugin) -> str:
    if name in _dist_versions:
        return _dist_versions[name]
    from kt_cli import __version__

    return getattr(plugin, "__version__", __version__)


def describe_plugins() -> list[dict]:
    """Each loaded plugin with its version and the hooks it implements."""
    load_plugins()
    rows = []
    for plugin in pm.get_plugins():
        name = pm.get_name(plugin)
        hooks = sorted(h.name for h in pm.get_hookcallers(plugin) or [])
        rows.append({"name": name, "version": plugin_version(name, plugin), "hooks": hooks})
    return sorted(rows, key=lambda r: (r["name"] not in DEFAULT_PLUGINS, r["name"]))


def _collect(hook_name: str, kind: str) -> dict:
    """Call a `register`-style hook; refuse a duplicate name, naming both plugins."""
    load_plugins()
    found: dict = {}
    owners: dict = {}
    hook = getattr(pm.hook, hook_name)
    for impl in hook.get_hookimpls():
        def register(obj, _plugin=impl.plugin_name):
            if obj.name in found:
                raise PluginConflict(
                    f'{kind} "{obj.name}" is registered by both plugin "{owners[obj.name]}" and '
                    f'plugin "{_plugin}"; uninstall one or set {NO_EXTERNAL_ENV}=1'
                )
            found[obj.name] = obj
            owners[obj.name] = _plugin

        impl.function(register=register)
    return found


def generators() -> dict:
    return _collect("kt_register_generators", "generator")


def targets() -> dict:
    """Every TargetSpec the vendor plugins offer, by `vendor:arch` name."""
    load_plugins()
    specs = {}
    for result in pm.hook.kt_targets():
        for spec in result or []:
            specs[spec.name] = spec
    return specs


def vendors() -> list[str]:
    return sorted({spec.vendor for spec in targets().values()})


def target(name: str, where: str = "--target") -> object:
    """The TargetSpec called `name`, or a BadInput listing the valid ones."""
    specs = targets()
    if name not in specs:
        vendor = name.split(":", 1)[0]
        if vendor not in vendors():
            raise BadInput(f"{where}: unknown vendor in {name!r}; must be one of: {', '.join(vendors())}")
        raise BadInput(f"{where}: unknown target {name!r}; must be one of: {', '.join(sorted(specs))}")
    return specs[name]


def devices() -> list:
    load_plugins()
    found = []
    for result in pm.hook.kt_detect_devices():
        found.extend(result or [])
    return found
