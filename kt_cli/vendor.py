"""The vendor contract. A vendor is one object, registered by a plugin through
`kt_register_vendors(register)`; kt finds it once by the `vendor` of a target or device and calls its
methods, so no method ever sees another vendor's targets.

Subclass `Vendor` and override what your hardware needs: `targets`, `compile`, `resources` and, for
measured mode, `detect_devices`, `runtime` and `timer`; the rest have working defaults.
docs/plugins.md shows a complete third-party vendor; tests/fake_vendor.py is one whose "device" is
the CPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, runtime_checkable

if TYPE_CHECKING:
    from kt_cli.evaluate.evaluator.timing import Stats
    from kt_cli.types import Device, Resources, TargetSpec


@runtime_checkable
class DeviceEvent(Protocol):
    """A point on a device's timeline (a CUDA/HIP event, or a clock read on a synchronous device)."""

    def record(self) -> None:
        """Mark this point in the device's current stream."""

    def seconds_until(self, later: "DeviceEvent") -> float:
        """Seconds from this event to `later`; both recorded and the device synchronised first."""

    def done(self) -> bool:
        """Whether the device has reached this (recorded) event, without waiting for it."""


@runtime_checkable
class DeviceGraph(Protocol):
    """A captured sequence of device work that replays without host launch overhead."""

    def replay(self) -> None:
        """Enqueue the captured work once more."""


@runtime_checkable
class DeviceRuntime(Protocol):
    """The device operations kt's verification and timing need, in the worker that owns a device.

    `torch_device` is the torch device type tensors of this vendor live on ("cuda" for torch's CUDA
    and ROCm builds alike, "cpu" for a fake device)."""

    torch_device: str

    def select(self, index: int) -> None:
        """Make device `index` (as the vendor numbers it in this process) the current one."""

    def current_index(self) -> int:
        """The index of the current device."""

    def synchronize(self) -> None:
        """Wait until all work queued on the current device is done."""

    def event(self) -> DeviceEvent:
        """A new timing event."""

    def hold(self, seconds: float) -> bool:
        """(Optional.) Queue device work that keeps the current device busy for about `seconds`; False
        where the device runs work as it is queued (a fake CPU device). The timer queues a batch of
        samples behind it, so that no timed window opens before the host has launched what it times.
        Where it holds, the timer asks each sample's start event's done() right after queueing the
        launch: a window the device opened before the launch was queued is retaken."""

    def capture(self, work: Callable[[], None]) -> DeviceGraph | None:
        """`work` captured as a replayable graph, or None where this device cannot capture (the caller
        then times with events). Raises when `work` is not capturable (a host sync inside it)."""

    def free_bytes(self) -> int:
        """Device memory free now, in bytes."""


@runtime_checkable
class Timer(Protocol):
    """Times callables on a present device (kt_cli.evaluate.evaluator.timing.EventTimer is the usual one)."""

    name: str

    def measure(self, fn: Callable[[], None]) -> "Stats":
        """Statistics of `fn`'s run time: warm-up first, then samples until the median is tight."""

    def paired(self, first: Callable[[], None], second: Callable[[], None], rounds: int,
               method: str = "events") -> tuple[list[float], list[float]]:
        """`rounds` timings of each callable taken back to back in alternating order (kt check);
        `method` "graph" times from graph replays where the device can capture."""

    def measure_interleaved(self, fns: list[Callable[[], None]], method: str,
                            before_batch: Callable[[], None] | None = None,
                            stop: Callable[[list["Stats"]], bool] | None = None, ranked_by: str = "") -> list["Stats"]:
        """Stats of each of `fns` (a candidate and its baseline) sampled in turn by one method, until
        tight, capped, or `stop` (racing) says the samples settle it. With `ranked_by` ("own", "ratio",
        "either": whose tightness ends it), the Stats of the first's samples over the second's, pair by
        pair, come last."""

    def screen(self, fn: Callable[[], None], method: str, bound_s: float,
               before_batch: Callable[[], None] | None = None, first_call: Callable[[], None] | None = None,
               baseline: Callable[[], None] | None = None, bound_ratio: float | None = None) -> "Stats":
        """Racing's cheap first timing of `fn`; `raced_out` when surely slower than `bound_s`, or, with
        `baseline` and `bound_ratio`, when its ratio to the baseline sampled beside it is surely above
        `bound_ratio`."""


class Vendor:
    """One GPU vendor: its compile targets, its devices, its compiler and its runtime.

    `name` is the vendor part of every target it offers (`name:arch`). Methods receive only this
    vendor's targets and devices."""

    name: str = ""

    # --- targets and compiling (every machine, no GPU needed) -------------------------------------

    def targets(self) -> list["TargetSpec"]:
        """The targets this vendor compiles for (each `TargetSpec.vendor` equals `name`)."""
        return []

    def why_unrunnable(self, params: dict[str, Any], target: "TargetSpec") -> str | None:
        """Why this point of the space (kernel params and launch options) cannot run on `target`, or
        None when it can. Asked before compiling; a reason makes the trial `invalid`."""
        return None

    def compile(self, launch: Any, target: "TargetSpec") -> Any:
        """Cross-compile one recorded launch (kt_cli.kernel.Launch: the JITFunction, its arguments on meta
        tensors, the launch options) for `target`, specialised as Triton's JIT specialises the real
        launch (kt_cli.evaluate.cross_compile does both). Returns the compiled kernel; raises on a
        compile error."""
        raise NotImplementedError(f"vendor {self.name!r} cannot compile")

    def resources(self, compiled: Any, target: "TargetSpec") -> "Resources":
        """Registers, shared memory/LDS, spills and occupancy of a kernel `compile` returned."""
        raise NotImplementedError(f"vendor {self.name!r} cannot read resources")

    def instruction_mix(self, compiled: Any, target: "TargetSpec") -> dict[str, int]:
        """Static counts of the compiled code's instructions by class, for the cost model: `mma`,
        `global_load`, `async_copy`, `tma`, `shared_load`, `shared_store`, `global_store`, `barrier`,
        `special` (transcendental units) and `total`; `mma_warpgroup`, the MMAs issued for a whole
        warpgroup or CTA rather than per warp; `global_load_bytes`, the bytes per thread/lane the static
        global loads ask for, and `load_bytes_largest_phase`, the most of them between two reductions
        across the workgroup's warps (LoadPhases). Empty when the vendor cannot disassemble."""
        return {}

    def model_prunes(self, target: "TargetSpec") -> bool:
        """True when kt's cost model has been held against measurements on this target's devices
        (benchmarks/rank.py), so measured tuning may skip candidates it estimates far slower than the
        best so far. False (the default) times every candidate."""
        return False

    def is_compile_error(self, exc: BaseException) -> bool:
        """True when `exc`, raised while a device worker launched a kernel, is this vendor's toolchain
        refusing the kernel (a `compile_error` trial) rather than a crash."""
        return False

    # --- devices (measured mode) ------------------------------------------------------------------

    def detect_devices(self) -> list["Device"]:
        """This vendor's devices present now (empty when none or no runtime)."""
        return []

    def device_peaks(self, device: "Device") -> dict[str, float]:
        """The peak table of a present device: FLOP/s per dtype name and `dram_bytes_per_s`."""
        return next((t.peaks for t in self.targets() if t.name == device.target), {})

    def pin_env(self, device: "Device") -> dict[str, str]:
        """Environment variables that leave `device` the only one a child process sees
        (`kt tune --workers`); empty when the vendor cannot pin."""
        return {}

    def pinned_view(self, device: "Device") -> "Device":
        """`device` as a process started with its pin_env detects it: `kt tune --workers` hands each
        worker its device so, and the worker does not detect it again (on a GPU host that initialised the
        runtime in the study-driving process: 1.7 s of each worker's start, results/s47/decoder)."""
        return device

    def worker_env(self) -> dict[str, str]:
        """Environment variables a device worker process starts with (before it imports anything)."""
        return {"TRITON_INTERPRET": "0"}

    def runtime(self) -> DeviceRuntime:
        """The device operations of this vendor, used inside a device worker."""
        raise NotImplementedError(f"vendor {self.name!r} has no device runtime")

    def timer(self, device: "Device") -> Timer:
        """A timer for a present device, used inside a device worker."""
        raise NotImplementedError(f"vendor {self.name!r} has no timer")

    def watched_names(self) -> tuple[str, ...]:
        """Dotted names of this vendor's timing, stream and synchronisation objects (`module.attr`)
        that a candidate's launch must not touch; kt replaces them with tripwires while it verifies a
        launch (kt_cli.evaluate.launch_watch)."""
        return ()

    def device_state(self, device: "Device") -> dict[str, Any]:
        """Clocks and temperature of a present device where the vendor can read them cheaply (called
        in the device worker before and after each measurement): `sm_clock_mhz`, `temperature_c`, and
        `throttled` (True when the device reports power or thermal slowdown). Empty when unreadable."""
        return {}

    def profile(self, device: "Device", command: list[str], kernel_names: list[str]) -> dict | None:
        """Run `command` (a process that launches the kernel a few times) under this vendor's profiler
        and return counters of the kernels named ({name: value}: occupancy, DRAM/L2 throughput, tensor
        pipe use, `top_stalls`), or None when no profiler is available here."""
        return None


class LoadPhases:
    """Counts a kernel's static global loads into an instruction mix, in program order: all of them
    into `global_load_bytes`, and into `load_bytes_largest_phase` the most bytes loaded between two
    reductions across the warps of a program (a barrier after cross-lane shuffles: a row's sum; or the
    program's start and end): what a program has in flight at once before its warps wait on each other
    (the cost model's bytes in flight). A barrier with no shuffle before it (a layout change through
    shared memory) ends no phase."""

    def __init__(self, mix: dict):
        self.mix, self.shuffled, self.phase = mix, False, 0

    def cross_lane(self) -> None:
        self.shuffled = True

    def barrier(self) -> None:
        if self.shuffled:
            self.close()
            self.shuffled = False

    def load(self, width: int) -> None:
        self.mix["global_load_bytes"] = self.mix.get("global_load_bytes", 0) + width
        self.phase += width

    def close(self) -> None:
        """End the phase (at a reduction, and after the last instruction)."""
        if self.phase > self.mix.get("load_bytes_largest_phase", 0):
            self.mix["load_bytes_largest_phase"] = self.phase
        self.phase = 0


def backward_loops(code: list):
    """The bodies of a kernel's loops, from its instructions in program order, each a tuple whose first item is
    its position and third, for a branch that can close a loop, the position it goes to (else None): for every
    branch back, the span from its target to the branch."""
    for end, (position, _, target, *_) in enumerate(code):
        if target is not None and target < position:
            start = next(i for i, item in enumerate(code) if item[0] >= target)
            yield code[start:end + 1]


def innermost_mma_loop(code: list) -> dict:
    """The loop a kernel's MMAs run in, from its instructions in program order, each `(position, mma
    FLOPs, branch target)`, optionally followed by shared bytes and a barrier's warps: FLOPs that one issue
    of the instruction does (per warpgroup or wave, as the vendor counts them; 0 for anything else), for
    a branch that can close a loop the position it goes to (else None: NVIDIA's unconditional branches back
    are cold paths' returns, vendor_nvidia.plugin.sass_mix), the bytes of shared memory the MMA reads its
    operands from (0 where its operands come from registers), and for a barrier warps wait at the warps it
    waits for (0: the whole workgroup; None: not such a barrier). The loop is the smallest span from a
    backward branch's target to the branch that holds an MMA: one pass of a kernel's main loop. Returns its
    `loop_instructions` (every instruction of one pass), `loop_mmas` and `loop_mma_flops` (one pass's MMA
    instructions and their FLOPs), where its MMAs read shared memory `loop_mma_shared_bytes`, and where it
    holds barriers `loop_barriers` (how many) and `loop_barrier_warps` (the warps the widest waits for, 0:
    the whole workgroup); or {} when no loop holds an MMA (the cost model's MMA issue and shared-memory
    terms, kt_cli.evaluate.estimate, then leave the kernel as it is)."""
    best: tuple | None = None
    for body in backward_loops(code):
        mmas = [item for item in body if item[1]]
        if mmas and (best is None or len(body) < best[0]):
            barriers = [item[4] for item in body if len(item) > 4 and item[4] is not None]
            best = (len(body), len(mmas), sum(m[1] for m in mmas), sum(m[3] if len(m) > 3 else 0 for m in mmas),
                    barriers)
    if best is None:
        return {}
    loop = {"loop_instructions": best[0], "loop_mmas": best[1], "loop_mma_flops": float(best[2])}
    if best[3]:
        loop["loop_mma_shared_bytes"] = float(best[3])
    if best[4]:
        loop["loop_barriers"], loop["loop_barrier_warps"] = len(best[4]), 0 if 0 in best[4] else max(best[4])
    return loop
