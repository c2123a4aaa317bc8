"""Issue 15, exploration: why row kernels the cost model ties (same estimate, DRAM-bound) measure 5-25% apart.

The configs (row_ties_configs.json, picked from the held-out runs' DRAM-bound points of six problems whose
pairs the model ties) are launched one after another. Without --profile each is timed (triton's do_bench,
L2 flushed); with --profile each is launched once between cudaProfilerStart and Stop, so that

    ncu --csv --page raw --profile-from-start off --section SpeedOfLight --section Occupancy \
        --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats \
        python benchmarks/experiments/row_ties.py --profile > NCU.csv

reads, per launch: DRAM bytes and throughput, achieved occupancy, the warps' stall reasons.

    python benchmarks/experiments/row_ties.py --json ROWS.json     # compile and time
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
CONFIGS = Path(__file__).with_name("row_ties_configs.json")


def launcher(case):
    import torch

    from common import Bound, template
    from kt_cli.kernel import Tensors

    tmpl = template(case["kernel"])
    inputs = tmpl.make_inputs(case["shape"], torch.bfloat16, Tensors("cuda", 0))
    params = case["params"]
    bound = Bound(tmpl, {"num_warps": params["num_warps"], "num_stages": params["num_stages"]})
    return lambda: tmpl.launch(bound, inputs, params)


def run(profile: bool, json_path: str | None):
    import torch

    from common import bench, profiled_once

    rows = []
    for index, case in enumerate(json.loads(CONFIGS.read_text())):
        row = {"index": index, **case}
        try:
            fn = launcher(case)
            if profile:
                profiled_once(fn)
            else:
                row["ms"] = bench(fn, rep=200)
        except Exception as exc:  # an experiment: a config this Triton refuses is reported, not fatal
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        rows.append(row)
        print(json.dumps(row), flush=True)
        torch.cuda.empty_cache()
    if json_path:
        Path(json_path).write_text(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                                               "rows": rows}, indent=1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    run(args.profile, args.json)


if __name__ == "__main__":
    main()
