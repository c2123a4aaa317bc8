"""Clocks, temperature and throttle reasons through NVML (libnvidia-ml, shipped with the driver), read
with ctypes so that kt needs no extra package. Every reading is best effort: {} when NVML is absent."""

from __future__ import annotations

import ctypes
import functools

NVML_CLOCK_SM = 1
NVML_TEMPERATURE_GPU = 0
# nvmlClocksEventReasons bits that mean the device slowed itself down (power cap, thermal, brake);
# idle and application-clock settings are not throttling.
SLOWDOWN_REASONS = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


@functools.lru_cache(maxsize=1)
def _library():
    try:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None
    return lib if lib.nvmlInit_v2() == 0 else None


@functools.lru_cache(maxsize=None)
def _handle(pci_bus_id: str):
    lib = _library()
    if lib is None:
        return None
    handle = ctypes.c_void_p()
    if lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(handle)) != 0:
        return None
    return handle


def pci_bus_id(torch_index: int) -> str:
    """The PCI address NVML knows a torch device by (indices differ under CUDA_VISIBLE_DEVICES)."""
    import torch

    p = torch.cuda.get_device_properties(torch_index)
    return f"{getattr(p, 'pci_domain_id', 0):08x}:{p.pci_bus_id:02x}:{p.pci_device_id:02x}.0"


def device_state(torch_index: int) -> dict:
    """{"sm_clock_mhz", "temperature_c", "throttled"} of a torch CUDA device, or {} when unreadable."""
    try:
        handle = _handle(pci_bus_id(torch_index))
    except Exception:  # an older torch without PCI ids in its device properties
        return {}
    if handle is None:
        return {}
    lib = _library()
    clock, temp, reasons = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_ulonglong()
    state = {}
    if lib.nvmlDeviceGetClockInfo(handle, NVML_CLOCK_SM, ctypes.byref(clock)) == 0:
        state["sm_clock_mhz"] = clock.value
    if lib.nvmlDeviceGetTemperature(handle, NVML_TEMPERATURE_GPU, ctypes.byref(temp)) == 0:
        state["temperature_c"] = temp.value
    if lib.nvmlDeviceGetCurrentClocksThrottleReasons(handle, ctypes.byref(reasons)) == 0:
        state["throttled"] = bool(reasons.value & SLOWDOWN_REASONS)
    return state
