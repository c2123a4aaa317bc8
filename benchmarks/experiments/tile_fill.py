"""Experiment (issue 15): what a GEMM tile costs beyond its K loop, by kernel design. For one M x N and K
from 256 to 8192, each config's time (graph replay) is fitted as t = a + b K: `a` is what does not grow
with K (a tile's pipeline fill before its first MMA, its epilogue, the launch), `b` the main loop. Over
a unit's tiles (the busiest SM's), `a` says how long each tile waits outside its main loop: the
warp-specialized Gluon kernel's producer loads the next tile while the consumers store this one;
Triton's kernels load it after.

    python tile_fill.py [--mn 4096] [--ks 256,512,1024,2048,4096,8192] [--json OUT]
"""
import argparse
import json

import torch
import triton

from common import Bound, template

CONFIGS = {  # name: (params, launch options)
    "triton_tma_persistent_128x128x64_s4_w8": (dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, PROGRAMS_PER_UNIT=1, TMA=1,
                                                    GLUON=0), {"num_warps": 8, "num_stages": 4}),
    "triton_tma_persistent_128x128x128_s3_w8": (dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, PROGRAMS_PER_UNIT=1, TMA=1,
                                                     GLUON=0), {"num_warps": 8, "num_stages": 3}),
    "triton_pointer_128x128x64_s4_w8": (dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, PROGRAMS_PER_UNIT=0, TMA=0,
                                             GLUON=0), {"num_warps": 8, "num_stages": 4}),
    "gluon_ws_128x128x64_s4_w4": (dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, PROGRAMS_PER_UNIT=1, TMA=1, GLUON=1,
                                       num_stages=4), {"num_warps": 4}),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mn", type=int, default=4096)
    parser.add_argument("--ks", default="256,512,1024,2048,4096,8192")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    tmpl, mn = template("matmul"), args.mn
    units = torch.cuda.get_device_properties(0).multi_processor_count
    tiles = triton.cdiv(mn, 128) ** 2
    rows = []
    for k in map(int, args.ks.split(",")):
        a = torch.randn(mn, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, mn, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(mn, mn, device="cuda", dtype=torch.bfloat16)
        ref = a.float() @ b.float()
        inputs = {"a": a, "b": b, "c": c}
        for name, (params, options) in CONFIGS.items():
            params = {**params, "GROUP_M": 8, "SPLIT_K": 1, "UNITS": units}
            kmod = Bound(tmpl, options)
            c.zero_()
            tmpl.launch(kmod, inputs, params)
            torch.cuda.synchronize()
            err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
            us = 1e3 * triton.testing.do_bench_cudagraph(lambda: tmpl.launch(kmod, inputs, params), rep=100)
            rows.append({"config": name, "K": k, "us": us, "error": err})
            print(json.dumps(rows[-1]), flush=True)
    per_tile = -(-tiles // units)
    fits = {}
    for name in CONFIGS:
        pts = [(r["K"], r["us"]) for r in rows if r["config"] == name]
        n, sx, sy = len(pts), sum(p[0] for p in pts), sum(p[1] for p in pts)
        sxx, sxy = sum(p[0] ** 2 for p in pts), sum(p[0] * p[1] for p in pts)
        slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        intercept = (sy - slope * sx) / n
        fits[name] = {"intercept_us": intercept, "us_per_k": slope, "intercept_per_tile_us": intercept / per_tile}
        print(f"{name}: t = {intercept:.2f} us + {slope * 1000:.3f} us per 1000 K; {intercept / per_tile:.3f} us a tile "
              f"outside the K loop ({per_tile} tiles on the busiest SM)", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"mn": mn, "units": units, "tiles": tiles, "rows": rows, "fits": fits}, f, indent=1)


if __name__ == "__main__":
    main()
