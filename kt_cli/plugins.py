"""The plugin manager: built-ins first, then entry points of group `kt`, each on its own.

kt's own vendors (and any other vendor) come in through entry points: the vendor packages ship in
kt's distribution and declare themselves in its pyproject.toml, so the core names none of them."""

from __future__ import annotations

import importlib
import os
import sys
import threading
from importlib import metadata

import pluggy

from kt_cli import hookspecs
from kt_cli.errors import BadInput, PluginConflict

DEFAULT_PLUGINS = (
    "kt_templates",
    "kt_dsl",
    "kt_cli.commands",
    "kt_llm",
)
KT_DISTRIBUTION = "kt-tune"  # entry points of kt's own distribution are built-ins
# Set to 1 to load only kt's built-in plugins (a broken third-party plugin can then be bypassed).
NO_EXTERNAL_ENV = "KT_NO_EXTERNAL_PLUGINS"
# Comma-separated module names to register as plugins besides the installed ones (as PYTEST_PLUGINS
# does): a plugin under development, or a test's fake vendor. Worker processes inherit it.
EXTRA_ENV = "KT_PLUGINS"

pm = pluggy.PluginManager("kt")
pm.add_hookspecs(hookspecs)
_loaded = False
_loading = threading.RLock()  # a plugin's import may ask for the manager again
_dist_versions: dict[str, str] = {}
_built_ins: set[str] = set(DEFAULT_PLUGINS)


def load_plugins() -> pluggy.PluginManager:
    """Register built-ins and entry points once; later calls return the same manager. Threads that
    ask while the first call registers wait for it (none sees a half-filled manager)."""
    global _loaded
    if _loaded:
        return pm
    with _loading:
        if not _loaded:
            _register_all()
            _loaded = True
    return pm


def _register_all() -> None:
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    external = os.environ.get(NO_EXTERNAL_ENV, "") in ("", "0")
    for ep in metadata.entry_points(group="kt"):
        if ep.dist is not None and ep.dist.name == KT_DISTRIBUTION:
            _built_ins.add(ep.value)
            pm.register(ep.load(), name=ep.value)
        elif external and _register_external(ep.name, ep.load):
            _dist_versions[ep.name] = ep.dist.version if ep.dist else "?"
    if external:
        for name in filter(None, (n.strip() for n in os.environ.get(EXTRA_ENV, "").split(","))):
            _register_external(name, lambda name=name: importlib.import_module(name))


def _register_external(name: str, load) -> bool:
    """Register the plugin `load()` returns under `name`; a broken plugin is a warning, not a crash."""
    if pm.get_plugin(name) is not None:
        return False
    try:
        pm.register(load(), name=name)
    except Exception as exc:  # a broken plugin must not break the CLI
        print(f'kt: warning: Error loading plugin "{name}": {type(exc).__name__}: {exc}', file=sys.stderr)
        return False
    return True


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
    return sorted(rows, key=lambda r: (r["name"] not in _built_ins, r["name"]))


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


_vendors: tuple = (None, {})  # (the registered plugins they were collected from, {name: Vendor})


def vendors() -> dict:
    """Every registered Vendor by name, collected again only when the registered plugins change."""
    global _vendors
    registered = frozenset(name for name, _ in load_plugins().list_name_plugin())
    if _vendors[0] != registered:
        _vendors = (registered, _collect("kt_register_vendors", "vendor"))
    return _vendors[1]


def vendor(name: str):
    """The Vendor called `name` (a target's or device's `vendor`)."""
    found = vendors()
    if name not in found:
        raise BadInput(f"vendor {name!r} is not installed; installed: {', '.join(sorted(found)) or 'none'}")
    return found[name]


def vendor_names() -> list[str]:
    return sorted(vendors())


def targets() -> dict:
    """Every TargetSpec the vendors offer, by `vendor:arch` name."""
    from kt_cli.calibration import applied

    return {spec.name: applied(spec) for v in vendors().values() for spec in v.targets()}


def target(name: str, where: str = "--target") -> object:
    """The TargetSpec called `name`, or a BadInput listing the valid ones."""
    specs = targets()
    if name not in specs:
        vendor_name = name.split(":", 1)[0]
        if vendor_name not in vendors():
            raise BadInput(f"{where}: unknown vendor in {name!r}; must be one of: {', '.join(vendor_names())}")
        raise BadInput(f"{where}: unknown target {name!r}; must be one of: {', '.join(sorted(specs))}")
    return specs[name]


def devices() -> list:
    """Every vendor's devices present now."""
    return [d for v in vendors().values() for d in v.detect_devices()]
