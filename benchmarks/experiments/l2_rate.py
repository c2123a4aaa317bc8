"""Issue 15, exploration: the L2 read rate an NVIDIA GPU gives different kinds of load, beside the one
`kt devices --calibrate` measures (calibrate.stream_read: plain fp32 loads, BLOCK 1024, 4 warps, one
stage). The cost model's L2 term uses that one rate for every kernel; GEMMs on an H100 measure above it
(benchmarks/results/s28: 2048^3 moves 201 MB of tile reads in 25 us, 7.9 TB/s against 7.4 calibrated).

Every kernel here re-reads an L2-resident region (a quarter of the L2) many times; per variant the sweep
over programs a unit gives the highest rate. Variants: plain loads with more bytes in flight (wider
blocks, more warps, pipelined stages), tiles read through TMA descriptors (host-built), as the library's
TMA GEMMs read their operands, and both with SHARE programs of neighbouring ids reading the same data at
the same time, as the programs of a GEMM's row or column of C tiles read the same A or B tiles. Timed
with CUDA events (common.time_ms: the median of 5 after a warm-up). Measured on an H100 (2026-11-27,
results/s28/call4, call5): 6.3-7.5 TB/s for every variant, sharing or not.

    python benchmarks/experiments/l2_rate.py --json OUT.json
    TRITON_INTERPRET=1 python benchmarks/experiments/l2_rate.py --dry-run   # a CPU check of the kernels
"""

import argparse
import json

import torch
import triton
import triton.language as tl
from common import time_ms

try:
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # an older Triton: the TMA variants are left out
    TensorDescriptor = None


@triton.jit
def plain_read(x_ptr, out_ptr, n_per_program, region, BLOCK: tl.constexpr, SHARE: tl.constexpr):
    """Each program sums `n_per_program` floats of a slice of the region; SHARE programs in a row of
    program ids (resident at the same time) read the same slice, as a GEMM's programs share tiles."""
    pid = tl.program_id(0).to(tl.int64)
    base = ((pid // SHARE) * n_per_program) % region
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_per_program, BLOCK):
        acc += tl.load(x_ptr + base + start + tl.arange(0, BLOCK))
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


@triton.jit
def tma_read(desc, out_ptr, tiles_per_program, tile_rows, ROWS: tl.constexpr, COLS: tl.constexpr,
             SHARE: tl.constexpr):
    """Each program reads `tiles_per_program` [ROWS, COLS] bf16 tiles of a [tile_rows * ROWS, COLS]
    region through a TMA descriptor, summing them (so that no load is dead); SHARE programs in a row of
    program ids read the same tiles in the same order."""
    pid = tl.program_id(0) // SHARE
    acc = tl.zeros([ROWS, COLS], tl.float32)
    for i in range(tiles_per_program):
        row = ((pid * 7 + i) % tile_rows) * ROWS
        acc += desc.load([row, 0]).to(tl.float32)
    tl.store(out_ptr + pid * COLS + tl.arange(0, COLS), tl.sum(acc, 0))


def timed(fn) -> float:
    """common.time_ms on a GPU; on a CPU (--dry-run under the interpreter) one call and NaN."""
    if torch.cuda.is_available():
        return time_ms(fn)
    fn()
    return float("nan")


def plain_points(device, units, region_bytes, read_bytes, block, warps, stages, per_units, share=1):
    region = region_bytes // 4
    x = torch.ones(region, dtype=torch.float32, device=device)
    for per_unit in per_units:
        programs = units * per_unit
        n = max(block, read_bytes // 4 // programs // block * block)
        n = min(n, region // 2 // block * block)
        out = torch.empty(programs * block, dtype=torch.float32, device=device)
        ms = timed(lambda: plain_read[(programs,)](x, out, n, region - n, BLOCK=block, SHARE=share,
                                                      num_warps=warps, num_stages=stages))
        yield {"kind": "plain", "SHARE": share, "BLOCK": block, "num_warps": warps, "num_stages": stages,
               "programs_per_unit": per_unit, "bytes": programs * n * 4, "ms": ms,
               "bytes_per_s": programs * n * 4 / (ms * 1e-3)}


def tma_points(device, units, region_bytes, read_bytes, rows, cols, warps, stages, per_units, share=1):
    tile_bytes = rows * cols * 2
    tile_rows = region_bytes // tile_bytes
    x = torch.ones(tile_rows * rows, cols, dtype=torch.bfloat16, device=device)
    desc = TensorDescriptor.from_tensor(x, [rows, cols])
    for per_unit in per_units:
        programs = units * per_unit
        tiles = max(1, read_bytes // tile_bytes // programs)
        out = torch.empty(programs * cols, dtype=torch.float32, device=device)
        ms = timed(lambda: tma_read[(programs,)](desc, out, tiles, tile_rows, ROWS=rows, COLS=cols,
                                                    SHARE=share, num_warps=warps, num_stages=stages))
        yield {"kind": "tma", "SHARE": share, "ROWS": rows, "COLS": cols, "num_warps": warps, "num_stages": stages,
               "programs_per_unit": per_unit, "bytes": programs * tiles * tile_bytes, "ms": ms,
               "bytes_per_s": programs * tiles * tile_bytes / (ms * 1e-3)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--dry-run", action="store_true", help="tiny sizes (TRITON_INTERPRET=1 on a CPU)")
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.dry_run:
        units, l2, read, per_units = 2, 1 << 20, 1 << 20, (1,)
    else:
        props = torch.cuda.get_device_properties(0)
        units, l2, read, per_units = props.multi_processor_count, props.L2_cache_size, 2 << 30, (1, 2, 4, 8, 16)
    region = l2 // 4
    rows = []
    plain = [(1024, 4, 1), (1024, 4, 3), (4096, 4, 1), (4096, 8, 1), (4096, 8, 3), (8192, 8, 1)]
    tma = [(64, 128, 4, 3), (128, 64, 4, 3), (128, 128, 4, 4), (64, 64, 4, 4)]
    for block, warps, stages in plain[:1] if args.dry_run else plain:
        rows += list(plain_points(device, units, region, read, block, warps, stages, per_units))
    for share in (2, 4, 8, 16):  # programs reading the same slice at the same time
        rows += list(plain_points(device, units, region, read, 4096, 4, 1, per_units, share))
    if TensorDescriptor is not None and device == "cuda":
        for (r, c, warps, stages), share in [(v, 1) for v in tma] + [(tma[2], s) for s in (2, 4, 8, 16)]:
            try:
                rows += list(tma_points(device, units, region, read, r, c, warps, stages, per_units, share))
            except Exception as exc:  # an experiment: a variant this Triton cannot compile is reported
                rows.append({"kind": "tma", "ROWS": r, "COLS": c, "error": f"{type(exc).__name__}: {exc}"[:300]})
    for row in rows:
        print(json.dumps(row), flush=True)
    best = {}
    for row in rows:
        if "bytes_per_s" in row:
            name = json.dumps({k: v for k, v in row.items() if k in ("kind", "SHARE", "BLOCK", "ROWS", "COLS",
                                                                     "num_warps", "num_stages")})
            best[name] = max(best.get(name, 0), row["bytes_per_s"])
    for name, rate in best.items():
        print(f"{name}: best {rate / 1e12:.2f} TB/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu", "l2_bytes": l2,
                       "region_bytes": region, "rows": rows, "best": best}, f, indent=1)


if __name__ == "__main__":
    main()
