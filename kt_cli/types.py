"""Small frozen value objects passed from stage to stage."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

# invalid: pruned (a constraint, a resource limit) and not counted against the budget; every other kind but
# ok is a failed candidate that never wins.
FAILURE_KINDS = ("invalid", "pruned", "compile_error", "slow_compile", "spills", "crash", "timeout", "rejected", "interpreter", "wrong", "ok")


@dataclass(frozen=True)
class TargetSpec:
    """A compile target (`vendor:arch`) and what the vendor plugin knows of it.

    `properties` feed recipe constraints (smem_bytes, warp_size, units, ...);
    `peaks` hold FLOP/s per dtype name and `dram_bytes_per_s`.
    """

    vendor: str
    arch: str
    properties: dict[str, float] = field(default_factory=dict)
    peaks: dict[str, float] = field(default_factory=dict)
    launch_options: tuple[str, ...] = ("num_warps", "num_stages")

    @property
    def name(self) -> str:
        return f"{self.vendor}:{self.arch}"


@dataclass(frozen=True)
class Device:
    """A GPU present now. `target` names its TargetSpec; `info` is free-form (driver, memory...)."""

    vendor: str
    index: int
    name: str
    target: str
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Resources:
    """Static resources of one compiled kernel, read from its binary."""

    registers: int | None = None  # per thread (NVIDIA) or VGPRs per lane (AMD)
    shared_bytes: int = 0  # shared memory / LDS per program
    spill_bytes: int = 0
    threads: int = 0  # threads per program
    programs_per_unit: int = 0  # resident programs per SM/CU, from the vendor's occupancy rules
    occupancy: float = 0.0  # resident warps or waves as a fraction of the unit's maximum
    limiter: str = ""  # what bounds occupancy
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Candidate:
    """One point of the space for one target and problem: what a worker evaluates."""

    kernel_file: str  # path of the kernel module's source
    params: dict[str, Any]
    target: str
    shape: dict[str, int]
    dtype: str
    mode: str  # "measured" or "estimated"
    verify_shapes: tuple = ()
    device_index: int | None = None


@dataclass(frozen=True)
class TrialResult:
    """What became of one candidate. `value` is seconds (median or estimate) and only set when ok."""

    failure_kind: str
    params: dict[str, Any]
    target: str
    shape: dict[str, int]
    mode: str
    value: float | None = None
    message: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)
    verification: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0  # wall time spent on the candidate
    worker: dict[str, Any] = field(default_factory=dict)  # host, pid and device that evaluated it
    output: str = ""  # what its worker processes printed for it, clipped to a few KB
    phase_seconds: dict[str, float] = field(default_factory=dict)  # compile, screen, verify, time (evaluate.phases)

    def __post_init__(self):
        if self.failure_kind not in FAILURE_KINDS:
            raise ValueError(f"failure_kind must be one of: {', '.join(FAILURE_KINDS)}")

    @property
    def ok(self) -> bool:
        return self.failure_kind == "ok"

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "TrialResult":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def shape_key(shape: dict[str, int]) -> str:
    """A stable text key for a problem shape: `M=4096,N=4096`."""
    return ",".join(f"{k}={v}" for k, v in shape.items())


def point_key(params: dict) -> str:
    """A stable text key for a point of a search space, whatever the order of its knobs."""
    return json.dumps(params, sort_keys=True)


def failure_counts(results) -> dict[str, int]:
    """How many of `results` ended in each failure kind ("ok" included)."""
    counts: dict[str, int] = {}
    for r in results:
        counts[r.failure_kind] = counts.get(r.failure_kind, 0) + 1
    return counts
