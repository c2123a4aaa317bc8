"""Every hook kt calls, grouped by phase. Each hook's docstring says when kt calls it, what each
argument is and what a return value means; tests/test_plugins.py fails on an undocumented hook."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import pluggy

if TYPE_CHECKING:
    import click

    from kt_cli.types import TrialResult
    from kt_cli.vendor import Vendor

hookspec = pluggy.HookspecMarker("kt")
hookimpl = pluggy.HookimplMarker("kt")

# --- command line -------------------------------------------------------------


@hookspec
def kt_register_commands(cli: "click.Group") -> None:
    """Add click commands to the `kt` group. Called once when `kt` starts; kt's own commands are
    registered through this hook too.

    :param cli: the `kt` click group; call `cli.add_command(command)`.
    """


# --- kernels ------------------------------------------------------------------


@hookspec
def kt_register_generators(register: Callable[[object], None]) -> None:
    """Register kernel generators. Called whenever kt resolves a recipe's `kernel.generator`.

    :param register: call `register(generator)` for each generator. A generator has `name` (the value
        of `kernel.generator` that selects it) and `build(kernel_table, recipe_path)` returning a
        KernelSource. A generator that needs the build context (the recipe, the targets being tuned,
        workers to run candidates in) sets `needs_context = True` and is called as
        `build(kernel_table, recipe_path, context=BuildContext)`. A generator that ships ready recipes
        has `recipes()` returning {name: path}: `kt tune NAME` tunes one, `kt kernels` lists them. A
        name registered twice is refused, naming both plugins.
    """


# --- vendors ------------------------------------------------------------------


@hookspec
def kt_register_vendors(register: Callable[["Vendor"], None]) -> None:
    """Register GPU vendors. Called once per process, the first time kt needs targets or devices.

    :param register: call `register(vendor)` with a `kt_cli.vendor.Vendor` instance for each vendor
        this plugin supports. Its `name` is the vendor part of its targets (`name:arch`); a name
        registered twice is refused, naming both plugins.
    """


# --- observers ----------------------------------------------------------------


@hookspec
def kt_trial_finished(result: "TrialResult") -> None:
    """Called in the CLI process with every trial result as it is recorded (the return value is ignored).

    :param result: the TrialResult: failure kind, params, target, problem, time or estimate.
    """
