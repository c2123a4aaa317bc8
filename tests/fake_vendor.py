"""A vendor whose "devices" are this machine's CPU, registered like any third-party vendor plugin
(KT_PLUGINS=tests.fake_vendor, or the `fake_device` fixture). It lets CI drive kt's measured mode end
to end without a GPU: kernels run under Triton's interpreter in the device worker, the timer is kt's
own EventTimer over a clock, and the peaks are set so that the physical-floor and above-peak rules can
be exercised.

Environment (read in every process, so workers see it too):
- KT_FAKE_DEVICES: how many fake devices are present (default 1), for `kt tune --workers`;
- KT_FAKE_DEVICE: set by `pin_env`, the one device a pinned worker sees;
- KT_FAKE_FLOPS_SCALE: multiplies the FLOP/s peaks (a tiny value puts honest kernels "above peak");
- KT_FAKE_CLOCK_SCALE: multiplies every time the clock reads (0 gives zero times, a tiny value times
  below what writing the outputs at peak bandwidth takes);
- KT_FAKE_CLOCK_FILE: a file holding a number that multiplies every time the clock reads from then on
  (a test writes it between candidates: the device's clock slowed down or sped up, for everything
  timed on it alike);
- KT_FAKE_THROTTLED=1: the device reports that it slowed down;
- KT_FAKE_PRUNE=1: measured tuning may prune with the cost model (Vendor.model_prunes);
- KT_FAKE_DETECT_LOG: a file each process that detects the devices appends its pid to.
Its "binary" spills 4 bytes a thread for each value of a BLOCK constexpr past 64 a thread.
"""

from __future__ import annotations

import os
import time

from kt_cli.hookspecs import hookimpl
from kt_cli.types import Device, Resources, TargetSpec
from kt_cli.vendor import Vendor

NAME = "fake"
TARGET = f"{NAME}:cpu"
# An interpreter-run kernel moves well under 1 GB/s; these peaks leave honest candidates far below them.
PEAKS = {"float32": 1e12, "float16": 2e12, "bfloat16": 2e12, "dram_bytes_per_s": 1e11}
PROPERTIES = {"units": 4, "smem_bytes": 1 << 20, "warp_size": 32, "max_warps_per_unit": 64,
              "max_threads_per_unit": 2048, "saturating_occupancy": 0.25, "l2_bytes": 1 << 20}


class ClockEvent:
    """A DeviceEvent of a synchronous device: the host clock when recorded."""

    def __init__(self):
        self.at = 0.0

    def record(self) -> None:
        self.at = time.perf_counter()

    def seconds_until(self, later: "ClockEvent") -> float:
        seconds = (later.at - self.at) * float(os.environ.get("KT_FAKE_CLOCK_SCALE", "1"))
        clock = os.environ.get("KT_FAKE_CLOCK_FILE")
        return seconds * float(open(clock).read()) if clock else seconds

    def done(self) -> bool:
        return True


class CpuRuntime:
    """DeviceRuntime of the CPU: synchronous, no graphs."""

    torch_device = "cpu"

    def select(self, index: int) -> None:
        pass

    def current_index(self) -> int:
        return int(os.environ.get("KT_FAKE_DEVICE", "0"))

    def synchronize(self) -> None:
        pass

    def event(self) -> ClockEvent:
        return ClockEvent()

    def hold(self, seconds: float) -> bool:
        return False  # synchronous: the host's work is the device's

    def capture(self, work):
        return None

    def free_bytes(self) -> int:
        return 1 << 30


def _scaled(peaks: dict) -> dict:
    scale = float(os.environ.get("KT_FAKE_FLOPS_SCALE", "1"))
    return {k: v * (1 if k == "dram_bytes_per_s" else scale) for k, v in peaks.items()}


class FakeVendor(Vendor):
    name = NAME

    def targets(self) -> list[TargetSpec]:
        return [TargetSpec(NAME, "cpu", dict(PROPERTIES), _scaled(PEAKS), ("num_warps", "num_stages"))]

    def compile(self, launch, target):
        if os.environ.get("KT_FAKE_COMPILE_LOG"):  # which specialisations the compile pool built
            shapes = {n: tuple(v.shape) if hasattr(v, "shape") else v for n, v in launch.args.items()}
            with open(os.environ["KT_FAKE_COMPILE_LOG"], "a") as log:
                log.write(f"{launch.fn.__name__} {shapes} {sorted(launch.options.items())}\n")
        return {"kernel": launch.fn.__name__, "num_warps": launch.options.get("num_warps", 4),
                "block": int(launch.args.get("BLOCK", 0) or 0)}

    def resources(self, compiled, target) -> Resources:
        warps = compiled["num_warps"]
        # a thread holds its share of a BLOCK in 64 four-byte registers; the rest spills
        spills = max(0, compiled["block"] // (32 * warps) - 64) * 4
        return Resources(registers=32, shared_bytes=0, spill_bytes=spills, threads=warps * 32, programs_per_unit=4,
                         occupancy=min(1.0, 4 * warps / 64), limiter="fake")

    def model_prunes(self, target) -> bool:
        return os.environ.get("KT_FAKE_PRUNE") == "1"

    def detect_devices(self) -> list[Device]:
        if os.environ.get("KT_FAKE_DETECT_LOG"):  # which processes detected the devices
            with open(os.environ["KT_FAKE_DETECT_LOG"], "a") as log:
                log.write(f"{os.getpid()}\n")
        pinned = os.environ.get("KT_FAKE_DEVICE")
        indices = [int(pinned)] if pinned else range(int(os.environ.get("KT_FAKE_DEVICES", "1")))
        return [Device(NAME, i, "Fake CPU device", TARGET, {"cores": os.cpu_count()}) for i in indices]

    def device_peaks(self, device: Device) -> dict:
        return _scaled(PEAKS)

    def pin_env(self, device: Device) -> dict:
        return {"KT_FAKE_DEVICE": str(device.index)}

    def worker_env(self) -> dict:
        return {"TRITON_INTERPRET": "1"}  # the "device" runs kernels under Triton's interpreter

    def watched_names(self) -> tuple:
        return (f"{__name__}.ClockEvent",)

    def runtime(self) -> CpuRuntime:
        return CpuRuntime()

    def timer(self, device: Device):
        from kt_cli.evaluate.timing import EventTimer

        return EventTimer(self.runtime(), flush_bytes=1 << 20, rel_ci=0.05, max_seconds=0.3, name="fake-cpu-clock")

    def device_state(self, device: Device) -> dict:
        return {"temperature_c": 40, "throttled": os.environ.get("KT_FAKE_THROTTLED") == "1"}


@hookimpl
def kt_register_vendors(register):
    register(FakeVendor())
