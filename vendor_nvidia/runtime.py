"""The device runtime of torch's `torch.cuda` namespace: events, graph capture, synchronisation.

torch's ROCm builds expose HIP through the same namespace (HIP events and hipGraphs behind the same
calls), so the AMD vendor uses this class too: one implementation of the torch device runtime."""

from __future__ import annotations

from typing import Callable

# What a candidate's launch must not touch (Vendor.watched_names): timing, streams, synchronisation
# and graph capture of torch's device namespace (CUDA, or HIP in a ROCm build).
TORCH_DEVICE_CONTROL = tuple(f"torch.cuda.{name}" for name in (
    "Event", "Stream", "ExternalStream", "stream", "set_stream", "synchronize", "CUDAGraph", "graph",
    "graphs.CUDAGraph", "_sleep"))


SLEEP_PROBE_CYCLES = 2_000_000  # about 1 ms at the SM clocks of the GPUs kt knows


class TorchCudaEvent:
    def __init__(self):
        import torch

        self._event = torch.cuda.Event(enable_timing=True)

    def record(self) -> None:
        self._event.record()

    def seconds_until(self, later: "TorchCudaEvent") -> float:
        return self._event.elapsed_time(later._event) * 1e-3

    def done(self) -> bool:
        return self._event.query()


class TorchCudaRuntime:
    """kt_cli.vendor.DeviceRuntime on torch.cuda (CUDA, or HIP in a ROCm build of torch)."""

    torch_device = "cuda"
    _sleep_cycles_per_s: dict[int, float] = {}  # device index -> the rate of torch.cuda._sleep's clock

    def select(self, index: int) -> None:
        import torch

        torch.cuda.set_device(index)

    def current_index(self) -> int:
        import torch

        return torch.cuda.current_device()

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()

    def event(self) -> TorchCudaEvent:
        return TorchCudaEvent()

    def hold(self, seconds: float) -> bool:
        """torch.cuda._sleep (a one-thread kernel that spins on the SM's cycle counter) for about
        `seconds`: its rate is read once per device by timing one sleep, and moves with the clock, so
        the timer asks for a margin and checks the event."""
        import torch

        index = torch.cuda.current_device()
        if index not in self._sleep_cycles_per_s:
            torch.cuda._sleep(1000)  # the sleep kernel's first launch loads it
            start, end = TorchCudaEvent(), TorchCudaEvent()
            start.record()
            torch.cuda._sleep(SLEEP_PROBE_CYCLES)
            end.record()
            torch.cuda.synchronize()
            self._sleep_cycles_per_s[index] = SLEEP_PROBE_CYCLES / max(start.seconds_until(end), 1e-6)
        torch.cuda._sleep(max(1, int(seconds * self._sleep_cycles_per_s[index])))
        return True

    def capture(self, work: Callable[[], None]):
        """A CUDA (or HIP) graph of `work`, after one warm-up run on the capture stream so the caching
        allocator has its blocks before capture."""
        import torch

        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            work()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        # on this side stream, of the current device: torch.cuda.graph's default capture stream is made
        # once a process, on the device current then, and entering it makes that device current, so a
        # later capture for another device launched there with this device's pointers (an illegal memory
        # access on a 4x H100 host: benchmarks/results/s26/x4). Begun and ended here rather than in
        # torch.cuda.graph, which empties the caching allocator first: every block a timing had cached
        # (the baseline's outputs, the flush) was then freed and allocated again, at each capture.
        with torch.cuda.stream(stream):
            graph.capture_begin()
            try:
                work()
            finally:
                graph.capture_end()
        return graph

    def free_bytes(self) -> int:
        import torch

        return torch.cuda.mem_get_info()[0]
