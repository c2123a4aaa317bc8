"""Every hook kt calls, grouped by phase. A firstresult hook returns None to decline."""

from __future__ import annotations

from typing import Any, Callable

import pluggy

hookspec = pluggy.HookspecMarker("kt")
hookimpl = pluggy.HookimplMarker("kt")

# --- command line -------------------------------------------------------------


@hookspec
def kt_register_commands(cli: Any) -> None:
    """Add click commands to the `kt` group (`cli.add_command(...)`)."""


# --- kernels ------------------------------------------------------------------


@hookspec
def kt_register_generators(register: Callable[[Any], None]) -> None:
    """Call `register(generator)` for each generator; a generator has `name` and
    `build(kernel_table: dict, recipe_path: Path) -> KernelSource`. Duplicate names are refused.
    A build() that also takes `context` receives a kt_cli.tune.BuildContext (recipe, targets, workers)."""


# --- vendors: targets and devices ---------------------------------------------


@hookspec
def kt_targets() -> list:
    """Return the TargetSpecs this vendor compiles for (may be empty)."""


@hookspec
def kt_detect_devices() -> list:
    """Return the Devices of this vendor present now (empty when none or no runtime)."""


@hookspec(firstresult=True)
def kt_device_peaks(device: Any) -> dict | None:
    """Return the peak table of a present Device (FLOP/s per dtype, dram_bytes_per_s), or None to decline."""


@hookspec(firstresult=True)
def kt_device_env(device: Any) -> dict | None:
    """Return the environment variables that leave a present Device the only one a child process sees
    (`kt tune --workers`), or None to decline."""


# --- vendors: compile, resources, time ----------------------------------------


@hookspec(firstresult=True)
def kt_param_problem(params: dict, target: Any) -> str | None:
    """Return a reason this point of the space (kernel params and launch options) cannot run on `target`
    (a TargetSpec), or None when it can or `target` is not this vendor's. Asked before compiling; a
    reason makes the trial `invalid`."""


@hookspec(firstresult=True)
def kt_compile(fn: Any, signature: dict, constexprs: dict, options: dict, target: Any) -> Any:
    """Cross-compile one Triton JITFunction for `target` (a TargetSpec) with launch `options`.
    Return the compiled kernel, or None when `target` is not this vendor's."""


@hookspec(firstresult=True)
def kt_resources(compiled: Any, target: Any) -> Any:
    """Return the Resources of a kernel this vendor compiled (registers, shared memory, spills,
    occupancy), or None when `target` is not this vendor's."""


@hookspec(firstresult=True)
def kt_timer(device: Any) -> Any:
    """Return a timer for a present Device (an object with `name` and `measure(fn) -> Stats`, such as
    kt_cli.measure.DeviceEventTimer), or None to decline."""


@hookspec(firstresult=True)
def kt_profile(device: Any, command: list, kernel_names: list) -> dict | None:
    """Run `command` (a process that launches the kernel a few times) under the vendor's profiler and
    return counters of the kernels named (occupancy, DRAM/L2 throughput, tensor-pipe use, top stall
    reasons) as {name: value}, or None when this vendor has no profiler here (or `device` is not its)."""


# --- observers ----------------------------------------------------------------


@hookspec
def kt_trial_finished(result: Any) -> None:
    """Called in the CLI process with every TrialResult as it is recorded."""
