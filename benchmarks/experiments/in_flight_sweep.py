"""What a streaming read's bytes in flight buy on a present GPU, by warps, bytes a thread and programs a unit.

    python benchmarks/experiments/in_flight_sweep.py [--target nvidia:sm_90] > sweep.jsonl

The cost model reads a program's bytes in flight from its binary (estimate.bytes_in_flight) and turns them into
a rate by Little's law over the loaded DRAM latency that `kt devices --calibrate` measures with one kernel:
4 warps, scalar loads. s43n's gemv 36864 x 4608 on an H200 ran at 82% of the datasheet's bandwidth with 35 KB in
flight a unit by that count (16 x 512 tiles on 16 warps, two programs a unit), where the calibration's kernel
reached 3.07 TB/s with 57 KB. This sweep reads bf16 rows in tiles of BLOCK elements a pass, as the gemv does
(a loop ptxas leaves rolled: its trip count is a kernel argument), at each number of warps, 16-byte loads a
thread a pass and programs a unit, and prints each point's static bytes in flight (read from its binary as any
candidate's), and the bytes a thread the loads of its innermost loop ask for (ptxas unrolls a small body and
leaves copies of it outside the loop: the static count then holds more than one pass has in flight), beside its
rate, so that the latency each implies can be compared across warps and load widths. Run on a GPU host; nothing
here is used by kt."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import triton
import triton.language as tl

sys.path[:0] = [str(Path(__file__).resolve().parents[2])]


@triton.jit
def tiled_read(x_ptr, out_ptr, n_per_program, BLOCK: tl.constexpr):
    """Each program sums its slice of `n_per_program` bf16 elements, BLOCK a pass."""
    pid = tl.program_id(0).to(tl.int64)
    base = x_ptr + pid * n_per_program
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_per_program, BLOCK):  # n_per_program a multiple of BLOCK: 16-byte loads
        offs = tl.multiple_of(start, BLOCK) + tl.arange(0, BLOCK)
        acc += tl.load(base + offs, eviction_policy="evict_first").to(tl.float32)
    tl.store(out_ptr + pid, tl.sum(acc))


def loop_load_bytes(cubin: bytes) -> int:
    """Bytes a thread the global loads of the innermost loop holding any ask for: the smallest loop
    (kt_cli.vendor.backward_loops) over the instructions sass_mix reads."""
    from kt_cli.vendor import backward_loops
    from vendor_nvidia.plugin import sass_instructions

    code = [(inst.address, inst.load_bytes, inst.target) for inst in sass_instructions(cubin)]
    loaded = [(len(body), sum(item[1] for item in body)) for body in backward_loops(code)]
    return min((size for size in loaded if size[1]), default=(0, 0))[1]


def main() -> None:
    import torch

    from kt_cli import plugins
    from kt_cli.evaluate.estimate import bytes_in_flight
    from kt_cli.evaluate.requests import _present

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="nvidia:sm_90")
    args = parser.parse_args()
    target = plugins.target(args.target)
    vendor = plugins.vendor(target.vendor)
    device, runtime = _present(vendor, target, 0)
    timer = vendor.timer(device)
    units = int(target.properties["units"])
    total = 8 * int(device.info.get("l2_bytes") or 50 * 2**20) // 2  # bf16 elements: 8x the L2, each read once
    x = torch.ones(total, dtype=torch.bfloat16, device=runtime.torch_device)
    for warps in (1, 2, 4, 8, 16):
        for loads in (1, 2, 4):  # 16-byte loads a thread a pass
            block = 32 * warps * 8 * loads
            for per_unit in (1, 2, 4, 8, 16):
                if warps * per_unit > 64:
                    continue
                programs = units * per_unit
                n_per_program = total // programs // block * block
                out = torch.empty(programs, dtype=torch.float32, device=runtime.torch_device)

                def run():
                    return tiled_read[(programs,)](x, out, n_per_program, BLOCK=block, num_warps=warps, num_stages=1)

                compiled = run()
                resources = vendor.resources(compiled, target)
                mix = vendor.instruction_mix(compiled, target)
                stats = timer.measure(run)
                moved = programs * n_per_program * 2
                print(json.dumps({"warps": warps, "loads_16b": loads, "programs_per_unit": per_unit,
                                  "resident": resources.programs_per_unit, "in_flight_per_program":
                                  bytes_in_flight(resources, mix), "global_load": mix.get("global_load"),
                                  "global_load_bytes": mix.get("global_load_bytes"), "registers": resources.registers,
                                  "loop_load_bytes": loop_load_bytes(compiled.asm["cubin"]),
                                  "seconds": stats.median, "bytes_per_s": moved / stats.median}), flush=True)


if __name__ == "__main__":
    main()
