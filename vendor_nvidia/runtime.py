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


class TorchCudaEvent:
    def __init__(self):
        import torch

        self._event = torch.cuda.Event(enable_timing=True)

    def record(self) -> None:
        self._event.record()

    def seconds_until(self, later: "TorchCudaEvent") -> float:
        return self._event.elapsed_time(later._event) * 1e-3


class TorchCudaRuntime:
    """kt_cli.vendor.DeviceRuntime on torch.cuda (CUDA, or HIP in a ROCm build of torch)."""

    torch_device = "cuda"

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
        with torch.cuda.graph(graph):
            work()
        return graph

    def free_bytes(self) -> int:
        import torch

        return torch.cuda.mem_get_info()[0]
