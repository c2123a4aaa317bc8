"""Issue 15, exploration: what a GEMM's tile reads cost the L2, counted by Nsight Compute.

The cost model charges a GEMM's requested bytes (every A tile re-read by each column of C tiles, B by each
row) at the L2 rate `kt devices --calibrate` measures (calibrate.stream_read), and GEMMs measure faster
than that allows (docs/costmodel.md, "A held-out run"). This launches the library's matmul over a grid of
tiles and shapes, the calibration's own read and cuBLAS, one launch each between cudaProfilerStart and
Stop, so that `ncu --profile-from-start off` reads, per launch: the L2 sectors the SMs read and how many
hit, DRAM bytes, the L2's share of its peak and its clock. Without ncu it times each launch (CUDA events)
and prints the rows.

    python benchmarks/experiments/l2_sectors.py --json ROWS.json                 # compile and time
    ncu --csv --profile-from-start off --metrics $(python l2_sectors.py --metrics) \
        python benchmarks/experiments/l2_sectors.py --profile > NCU.csv            # the counters
    python benchmarks/experiments/l2_sectors.py --join ROWS.json NCU.csv          # one row a launch
"""

import argparse
import csv
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

METRICS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
           "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
           "lts__t_requests_srcunit_tex_op_read.sum", "lts__t_sectors.sum",
           "lts__t_sectors.avg.pct_of_peak_sustained_elapsed", "lts__t_sectors.sum.peak_sustained",
           "lts__cycles_elapsed.avg.per_second", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
           "l1tex__m_xbar2l1tex_read_bytes.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"]
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (1000, 1000, 1000), (768, 8192, 8192), (8192, 2048, 4096)]
# BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, GROUP_M, TMA (with one program a unit) or plain
TILES = [(128, 256, 64, 8, 3, 8, 0), (128, 128, 64, 4, 4, 8, 0), (128, 128, 64, 8, 4, 8, 0),
         (128, 128, 32, 4, 4, 8, 0), (64, 128, 64, 4, 4, 8, 0), (128, 64, 64, 4, 4, 8, 0),
         (64, 64, 64, 4, 3, 8, 0), (64, 256, 32, 4, 4, 8, 0), (256, 128, 64, 8, 3, 8, 0),
         (128, 128, 64, 4, 4, 1, 0), (128, 64, 64, 4, 4, 1, 0), (128, 256, 64, 8, 3, 8, 1),
         (128, 128, 64, 8, 4, 8, 1), (64, 128, 64, 4, 4, 8, 1)]
STREAM_PER_UNIT = (1, 2, 4, 8, 16)
# attention (the library's Triton kernel): shapes of recipes/attention.toml and a full D64 one
ATTENTION_SHAPES = [dict(B=4, H=32, H_KV=32, S=4096, D=128, CAUSAL=1), dict(B=4, H=32, H_KV=32, S=4096, D=128),
                    dict(B=4, H=32, H_KV=32, S=4096, D=64, CAUSAL=1), dict(B=8, H=16, H_KV=4, S=4096, D=64)]
# BLOCK_M, BLOCK_N, num_warps, num_stages, TMA
ATTENTION_TILES = [(128, 64, 4, 2, 0), (128, 64, 8, 3, 0), (128, 128, 8, 2, 0), (64, 64, 4, 3, 0), (64, 32, 4, 2, 0),
                   (128, 64, 4, 2, 1), (128, 128, 8, 3, 1), (256, 64, 8, 2, 1)]


def cases(kernel="matmul"):
    """(name, params or None, shape) in launch order."""
    if kernel == "attention":
        for shape in ATTENTION_SHAPES:
            yield "sdpa", None, shape
            for bm, bn, warps, stages, tma in ATTENTION_TILES:
                yield "attention", dict(BLOCK_M=bm, BLOCK_N=bn, TMA=tma, GLUON=0, num_warps=warps,
                                        num_stages=stages), shape
        return
    for shape in SHAPES:
        yield "cublas", None, shape
        for bm, bn, bk, warps, stages, group, tma in TILES:
            yield "matmul", dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, SPLIT_K=1, TMA=tma, GLUON=0,
                                 PROGRAMS_PER_UNIT=tma, num_warps=warps, num_stages=stages), shape
    for per_unit in STREAM_PER_UNIT:
        yield "stream_read", dict(programs_per_unit=per_unit), None


def launcher(name, params, shape, units, l2_bytes):
    import torch

    from common import Bound, template

    if name == "stream_read":
        from kt_cli.evaluate.calibrate import BLOCK, WARPS, stream_read

        region = l2_bytes // 4 // 4
        x = torch.ones(region, dtype=torch.float32, device="cuda")
        programs = units * params["programs_per_unit"]
        n = min(max(BLOCK, (2 << 30) // 4 // programs // BLOCK * BLOCK), region // 2 // BLOCK * BLOCK)
        out = torch.empty(programs * BLOCK, dtype=torch.float32, device="cuda")
        return (lambda: stream_read[(programs,)](x, out, n, region - n, BLOCK=BLOCK, num_warps=WARPS, num_stages=1),
                programs * n * 4)
    if name in ("sdpa", "attention"):
        from kt_cli.kernel import Tensors

        tmpl = template("attention")
        inputs = tmpl.make_inputs(shape, torch.bfloat16, Tensors("cuda", 0))
        if name == "sdpa":
            return (lambda: tmpl.baseline(inputs)), 0
        bound = Bound(tmpl, {"num_warps": params["num_warps"]})
        return (lambda: tmpl.launch(bound, inputs, params)), 0
    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    if name == "cublas":
        return (lambda: torch.matmul(a, b, out=c)), 0
    tmpl = template("matmul")
    bound = Bound(tmpl, {"num_warps": params["num_warps"]})
    launch_params = {**params, "UNITS": units}
    return (lambda: tmpl.launch(bound, {"a": a, "b": b, "c": c}, launch_params)), 0


def run(profile: bool, json_path: str | None, kernel: str = "matmul"):
    import torch

    from common import profiled_once, time_ms

    props = torch.cuda.get_device_properties(0)
    units, l2 = props.multi_processor_count, props.L2_cache_size
    rows = []
    for index, (name, params, shape) in enumerate(cases(kernel)):
        row = {"index": index, "name": name, "params": params, "shape": shape}
        try:
            fn, moved = launcher(name, params, shape, units, l2)
            if profile:
                profiled_once(fn)
            else:
                row["ms"] = time_ms(fn, reps=20, warmups=3)
                row["bytes"] = moved
        except Exception as exc:  # an experiment: a config this Triton refuses is reported, not fatal
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        rows.append(row)
        print(json.dumps(row), flush=True)
    if json_path:
        Path(json_path).write_text(json.dumps({"device": props.name, "units": units, "l2_bytes": l2,
                                               "torch": torch.__version__, "rows": rows}, indent=1))


def join(rows_path: str, ncu_path: str):
    """Each launch's counters beside its row: profiled launches pair with the rows in order, the rows
    that failed left out."""
    data = json.loads(Path(rows_path).read_text())
    text = Path(ncu_path).read_text()
    table = list(csv.DictReader(io.StringIO(text[text.find('"ID"'):])))
    launches: dict = {}
    for entry in table:
        launch = launches.setdefault(int(entry["ID"]), {"kernel": entry["Kernel Name"]})
        try:
            launch[entry["Metric Name"]] = float(entry["Metric Value"].replace(",", ""))
        except ValueError:
            launch[entry["Metric Name"]] = entry["Metric Value"]
    ok = [row for row in data["rows"] if "error" not in row]
    ordered = [launches[i] for i in sorted(launches)]
    if len(ordered) != len(ok):
        print(f"warning: {len(ordered)} launches profiled, {len(ok)} rows", file=sys.stderr)
    for row, launch in zip(ok, ordered):
        row["ncu"] = launch
    return data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--profile", action="store_true", help="one launch of each case between profiler start/stop")
    parser.add_argument("--metrics", action="store_true", help="print the metrics for ncu --metrics")
    parser.add_argument("--kernel", default="matmul", choices=("matmul", "attention"))
    parser.add_argument("--join", nargs=2, metavar=("ROWS_JSON", "NCU_CSV"))
    args = parser.parse_args()
    if args.metrics:
        print(",".join(METRICS))
    elif args.join:
        print(json.dumps(join(*args.join), indent=1))
    else:
        run(args.profile, args.json, args.kernel)


if __name__ == "__main__":
    main()
