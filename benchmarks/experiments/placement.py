"""Why does one config's time move between fresh processes? Times softmax's best configs and torch's
softmax (the anchor) with inputs and outputs placed at controlled offsets in one large allocation.

If the kernel's time moves with the offsets inside one process as much as it moves between processes,
placement in device memory is the cause, and one process's measurement must sample several placements.
Run from the repository root on a GPU; `--processes N` runs N fresh processes and prints the summary:

    python benchmarks/experiments/placement.py --processes 4 --json /tmp/placement.json
"""
import argparse
import json
import random
import statistics
import subprocess
import sys

import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import Bound, template  # noqa: E402

CONFIGS = {  # the BENCHMARKS.md winners
    (32768, 4096): {"BLOCK_N": 8192, "ROWS": 2, "ROW_STAGES": 2, "num_stages": 2, "num_warps": 4},
    (4096, 32768): {"BLOCK_N": 32768, "ROWS": 1, "ROW_STAGES": 1, "num_stages": 1, "num_warps": 16},
}
MiB = 1 << 20


def time_ms(fn, calls: int = 10, batches: int = 15) -> float:
    """Median over batches of the mean time of `calls` back-to-back calls (events around each batch)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(batches):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


def one_process(placements: int, seed: int) -> dict:
    module = template("softmax")
    rng = random.Random(seed)
    arena = torch.empty(6 << 30, dtype=torch.uint8, device="cuda")
    rows = []
    for (m, n), options in CONFIGS.items():
        kernel_params = {k: v for k, v in options.items() if k not in ("num_warps", "num_stages")}
        launch_options = {k: options[k] for k in ("num_warps", "num_stages")}
        size = m * n * 2
        for p in range(placements + 1):
            if p == 0:  # where the caching allocator puts them, as kt does
                x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16) * 3
                y = torch.empty_like(x)
                where = "allocator"
            else:
                ox = rng.randrange(0, (3 << 30) - size, 2 * MiB) + rng.choice([0, 4096, 65536, MiB])
                oy = rng.randrange(3 << 30, (6 << 30) - size, 2 * MiB) + rng.choice([0, 4096, 65536, MiB])
                x = arena[ox:ox + size].view(torch.bfloat16).view(m, n)
                x.copy_(torch.randn(m, n, device="cuda", dtype=torch.bfloat16) * 3)
                y = arena[oy:oy + size].view(torch.bfloat16).view(m, n)
                where = f"x+{ox // MiB}MiB y+{oy // MiB}MiB"
            inputs = {"x": x, "y": y}
            kernel = time_ms(lambda: module.launch(Bound(module, launch_options), inputs, kernel_params))
            anchor = time_ms(lambda: torch.softmax(x, dim=-1))
            copy = time_ms(lambda: y.copy_(x))
            rows.append({"shape": f"{m}x{n}", "where": where, "kernel_ms": kernel, "anchor_ms": anchor,
                         "copy_ms": copy})
            del x, y, inputs
    return {"seed": seed, "rows": rows, "clock_mhz": _clock()}


def _clock():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,temperature.gpu", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        return out
    except Exception as exc:  # noqa: BLE001
        return repr(exc)


def summary(results: list) -> None:
    for shape in sorted({r["shape"] for res in results for r in res["rows"]}):
        print(f"== {shape}")
        for res in results:
            rows = [r for r in res["rows"] if r["shape"] == shape]
            first, placed = rows[0], rows[1:]
            ks = [r["kernel_ms"] for r in placed]
            ratios = [r["anchor_ms"] / r["kernel_ms"] for r in placed]
            copies = [r["copy_ms"] for r in placed]
            print(f"process {res['seed']}: allocator: kernel {first['kernel_ms'] * 1e3:.1f} us, x eager "
                  f"{first['anchor_ms'] / first['kernel_ms']:.3f}, copy {first['copy_ms'] * 1e3:.1f} us | "
                  f"{len(placed)} placements: kernel {min(ks) * 1e3:.1f}-{max(ks) * 1e3:.1f} us "
                  f"(spread {max(ks) / min(ks) - 1:.1%}), x eager {min(ratios):.3f}-{max(ratios):.3f}, "
                  f"copy {min(copies) * 1e3:.1f}-{max(copies) * 1e3:.1f} us  [{res['clock_mhz']}]")
        firsts = [[r for r in res["rows"] if r["shape"] == shape][0]["kernel_ms"] for res in results]
        print(f"across processes (allocator placement): kernel spread {max(firsts) / min(firsts) - 1:.1%}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=0)
    parser.add_argument("--placements", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json")
    args = parser.parse_args()
    if not args.processes:
        print(json.dumps(one_process(args.placements, args.seed)))
        return
    in_fresh_processes([[__file__, "--placements", str(args.placements), "--seed", str(seed)]
                        for seed in range(args.processes)], args.json, summary)


def in_fresh_processes(commands: list, json_path: str | None, summarize) -> None:
    """Run each command (a script and its arguments) in a fresh Python; each prints one JSON line last.
    A failed process is reported and left out; the results go to `json_path` and to `summarize`."""
    results = []
    for command in commands:
        done = subprocess.run([sys.executable, *command], capture_output=True, text=True)
        if done.returncode:
            print(f"a process failed (exit {done.returncode}):\n{done.stderr[-3000:]}", flush=True)
            continue
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    if json_path:
        with open(json_path, "w") as f:
            json.dump(results, f, indent=1)
    summarize(results)


if __name__ == "__main__":
    main()
