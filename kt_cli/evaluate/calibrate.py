"""Microbenchmarks that give the cost model its constants on a present GPU (`kt devices --calibrate`).

Each constant is measured in the model's own terms, so the model reads back what was measured:

- DRAM and L2 latency (as Little's law sees it under load): a streaming read whose programs each hold
  a known number of bytes in flight (`bytes_in_flight` of the compiled binary, read like any
  candidate's), run with 1, 2, 4... programs a unit. Where the rate is still below 60% of the highest
  one, latency = units x resident programs x bytes in flight / rate; the median of those points.
  DRAM: a buffer of 8x the L2, each byte read once a call; L2: every program re-reads a region of a
  quarter of the L2.
- DRAM and L2 bandwidth: the highest rate of the same sweeps (`dram_attainable` as a fraction of the
  datasheet's DRAM bandwidth; `l2_bytes_per_s` as measured).
- math_attainable: torch.matmul's bf16 rate at 8192^3 as a fraction of the datasheet's bf16 peak.
- dram_knee: how sharply the DRAM sweep's rate turns from its latency-bound line to its bandwidth
  (kt_cli.evaluate.estimate.memory_time), fitted to the sweep's own points (fit_knee).
Timed with the vendor's timer, like any candidate. Nothing here is fitted to tuning results.
"""

from __future__ import annotations

import math
import statistics

import triton
import triton.language as tl

from kt_cli.evaluate.estimate import memory_time

BLOCK = 1024  # float32 elements a program loads per iteration: 4 KiB in flight with num_stages=1
WARPS = 4
PROGRAMS_PER_UNIT = (1, 2, 4, 8, 16)
LATENCY_BOUND = 0.6  # points below this fraction of the best rate are limited by bytes in flight


@triton.jit
def stream_read(x_ptr, out_ptr, n_per_program, region, BLOCK: tl.constexpr):
    """Each program sums `n_per_program` floats of its slice of a region of `region` floats."""
    pid = tl.program_id(0).to(tl.int64)
    base = (pid * n_per_program) % region
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_per_program, BLOCK):
        acc += tl.load(x_ptr + base + start + tl.arange(0, BLOCK))
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


def sweep(timer, torch_device: str, units: int, region_bytes: int, read_bytes: int):
    """Rates of the streaming read at each number of programs a unit, reading `read_bytes` in all from
    a region of `region_bytes` (8x the L2: DRAM; a quarter of it: L2), and the compiled kernel."""
    import torch

    region = region_bytes // 4
    x = torch.ones(region, dtype=torch.float32, device=torch_device)
    points, compiled = [], None
    for per_unit in PROGRAMS_PER_UNIT:
        programs = units * per_unit
        n_per_program = max(BLOCK, read_bytes // 4 // programs // BLOCK * BLOCK)
        n_per_program = min(n_per_program, region // 2 // BLOCK * BLOCK)
        out = torch.empty(programs * BLOCK, dtype=torch.float32, device=torch_device)

        def run():
            return stream_read[(programs,)](x, out, n_per_program, region - n_per_program, BLOCK=BLOCK,
                                            num_warps=WARPS, num_stages=1)

        compiled = run()
        stats = timer.measure(run)
        moved = programs * n_per_program * 4
        points.append({"programs_per_unit": per_unit, "bytes": moved, "seconds": stats.median,
                       "bytes_per_s": moved / stats.median})
    return points, compiled


def latency(points: list[dict], units: int, in_flight: float) -> float:
    """Loaded latency implied by the latency-bound points of a sweep (see the module docstring)."""
    best = max(p["bytes_per_s"] for p in points)
    bound = [p for p in points if p["bytes_per_s"] < LATENCY_BOUND * best] or points[:1]
    return statistics.median(units * p["programs_per_unit"] * in_flight / p["bytes_per_s"] for p in bound)


def fit_knee(points: list[dict], units: int, in_flight: float, latency_s: float, bytes_per_s: float) -> float:
    """The knee (kt_cli.evaluate.estimate.memory_time) that best gives a sweep's rates from its latency-bound
    rate (Little's law) and its bandwidth: the least squared log error over 1.0-40.0 in steps of 0.1."""

    def error(knee: float) -> float:
        return sum(math.log(memory_time(latency_s / (units * p["programs_per_unit"] * in_flight), 1.0 / bytes_per_s,
                                        knee) * p["bytes_per_s"]) ** 2 for p in points)

    return min((k / 10 for k in range(10, 401)), key=error)


def knees(calibration: dict, units: int) -> dict:
    """The DRAM knee a calibration's sweep gives, with its own latency and bandwidth. (Its L2 sweep fits
    a knee too, 8-9 on the H200s, but the model leaves L2's corner sharp: docs/costmodel.md, twenty-sixth
    session.)"""
    constants, in_flight = calibration["constants"], calibration["in_flight_per_program"]
    dram_best = max(p["bytes_per_s"] for p in calibration["dram_sweep"])
    return {"dram_knee": fit_knee(calibration["dram_sweep"], units, in_flight, constants["dram_latency_s"], dram_best)}


def calibrate(vendor, target, device, runtime, peaks: dict, ceiling: dict) -> dict:
    """The cost model's constants measured on this device, and the sweeps behind them; `ceiling` is
    what `kt devices --measure` measures (requests.ceilings: copy bandwidth, the bf16 GEMM rate)."""
    from kt_cli.evaluate.estimate import bytes_in_flight

    timer = vendor.timer(device)
    units = int(target.properties["units"])
    l2 = int(device.info.get("l2_bytes") or target.properties.get("l2_bytes") or 32 * 2**20)
    # DRAM: each byte of the region read once a call (more, and programs resident at the same time
    # read the same lines: L2 hits that showed a DRAM rate above the datasheet's on an H100)
    dram, compiled = sweep(timer, runtime.torch_device, units, 8 * l2, 8 * l2)
    l2_points, _ = sweep(timer, runtime.torch_device, units, l2 // 4, 2 * 2**30)
    in_flight = bytes_in_flight(vendor.resources(compiled, target), vendor.instruction_mix(compiled, target))
    dram_best = max(p["bytes_per_s"] for p in dram)
    constants = {
        "dram_latency_s": latency(dram, units, in_flight),
        "l2_latency_s": latency(l2_points, units, in_flight),
        "l2_bytes_per_s": max(p["bytes_per_s"] for p in l2_points),
        "dram_attainable": min(1.0, dram_best / peaks["dram_bytes_per_s"]),
        "math_attainable": min(1.0, ceiling["bf16_gemm_flops_per_s"] / peaks["bfloat16"]),
    }
    measured = {"device": device.name, "target": target.name, "constants": constants,
                "in_flight_per_program": in_flight, "dram_sweep": dram, "l2_sweep": l2_points,
                "ceilings": ceiling, "timer": timer.name}
    constants.update(knees(measured, units))
    return measured
