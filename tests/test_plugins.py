"""Plugin discovery: built-ins listed, a broken third-party plugin warns and the CLI still works,
duplicate names are refused naming both plugins."""

import json

import pytest

from kt_cli.errors import PluginConflict
from kt_cli.hookspecs import hookimpl
from kt_cli.plugins import DEFAULT_PLUGINS
from tests.helpers import ROOT, kt, kt_process

BUILT_INS = set(DEFAULT_PLUGINS) | {"vendor_nvidia.plugin", "vendor_amd.plugin"}


def fake_distribution(root, entry_points: str, modules: dict) -> str:
    """An installed distribution on a path of its own: METADATA, entry_points.txt and modules."""
    dist = root / "kt_fake_plugin-1.2.3.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kt-fake-plugin\nVersion: 1.2.3\n")
    (dist / "entry_points.txt").write_text(entry_points)
    for name, text in modules.items():
        (root / f"{name}.py").write_text(text)
    return str(root)


def test_plugins_lists_builtins_with_their_hooks():
    result = kt("plugins", "--json")
    assert result.exit_code == 0
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert BUILT_INS <= set(rows)
    assert rows["vendor_nvidia.plugin"]["hooks"] == ["kt_register_vendors"]
    assert rows["kt_templates"]["hooks"] == ["kt_register_generators"]


def test_broken_plugin_warns_once_and_the_cli_still_works(tmp_path):
    path = fake_distribution(tmp_path, "[kt]\nbroken = kt_broken_mod\ngood = kt_good_mod\n", {
        "kt_broken_mod": "raise RuntimeError('boom at import')\n",
        "kt_good_mod": "from kt_cli.hookspecs import hookimpl\n\n@hookimpl\ndef kt_trial_finished(result):\n    pass\n",
    })
    result = kt_process("plugins", "--json", extra_path=path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count('Error loading plugin "broken": RuntimeError: boom at import') == 1
    assert "Traceback" not in result.stderr
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert rows["good"]["version"] == "1.2.3" and BUILT_INS <= set(rows)
    devices = kt_process("devices", extra_path=path)
    assert devices.returncode == 0 and "nvidia:sm_90" in devices.stdout


def test_environment_variable_disables_external_plugins(tmp_path):
    path = fake_distribution(tmp_path, "[kt]\nbroken = kt_broken_mod\n", {"kt_broken_mod": "raise ImportError('x')\n"})
    result = kt_process("plugins", "--json", extra_path=path, env={"KT_NO_EXTERNAL_PLUGINS": "1"})
    assert result.returncode == 0 and "broken" not in result.stderr
    assert {r["name"] for r in json.loads(result.stdout)} == BUILT_INS


class _Generator:
    name = "templates"

    def build(self, kernel_table, recipe_path):
        raise AssertionError("never used")


class _DuplicatePlugin:
    @hookimpl
    def kt_register_generators(self, register):
        register(_Generator())


def test_duplicate_generator_names_both_plugins(plugin):
    from kt_cli.plugins import generators

    plugin(_DuplicatePlugin(), "copycat")
    with pytest.raises(PluginConflict, match='"templates" is registered by both plugin "kt_templates" and plugin "copycat"'):
        generators()


class _Observer:
    def __init__(self):
        self.kinds = []

    @hookimpl
    def kt_trial_finished(self, result):
        self.kinds.append(result.failure_kind)


def test_third_party_observer_sees_every_trial(plugin, write, tmp_path):
    from tests.helpers import dsl_recipe

    observer = plugin(_Observer(), "observer")
    result = kt("tune", dsl_recipe(write, trials=2), "--out", tmp_path / "art")
    assert result.exit_code == 0, result.stderr
    assert observer.kinds.count("ok") == 2


def test_every_hook_is_documented_for_plugin_authors():
    import inspect

    from kt_cli import hookspecs

    docs = (ROOT / "docs" / "plugins.md").read_text()
    hooks = [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("kt_")]
    assert len(hooks) >= 4
    for name in hooks:
        fn = getattr(hookspecs, name)
        assert f"`{name}(" in docs, f"{name} is not described in docs/plugins.md"
        assert (fn.__doc__ or "").strip(), f"{name} has no docstring"
        for arg in inspect.signature(fn).parameters:
            assert f":param {arg}:" in fn.__doc__, f"{name}'s docstring does not describe {arg}"


def test_every_vendor_method_is_documented_for_plugin_authors():
    import inspect

    from kt_cli import vendor

    docs = (ROOT / "docs" / "plugins.md").read_text()
    for cls in (vendor.Vendor, vendor.DeviceRuntime, vendor.Timer, vendor.DeviceEvent, vendor.DeviceGraph):
        assert (cls.__doc__ or "").strip(), f"{cls.__name__} has no docstring"
        for name, fn in inspect.getmembers(cls, inspect.isfunction):
            if not name.startswith("_"):
                assert (fn.__doc__ or "").strip(), f"{cls.__name__}.{name} has no docstring"
                assert f"`{name}" in docs, f"{cls.__name__}.{name} is not described in docs/plugins.md"
