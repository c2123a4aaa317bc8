"""Which part of kt's timing protocol moves between fresh processes? Times softmax's best configs and
torch's softmax in fresh processes, each with kt's EventTimer (events around one call, L2 flushed by
writing a buffer of twice its size before each call) and with variants of it: no flush, a flush by
reading the buffer (clean lines left in L2), and a plain loop of back-to-back calls between two events.

    python benchmarks/experiments/protocol.py --processes 10 --json /tmp/protocol.json
"""
import argparse
import json
import statistics
import sys

import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import ROOT, Bound, template  # noqa: E402
from placement import CONFIGS, in_fresh_processes, time_ms  # noqa: E402

sys.path.insert(0, str(ROOT))


class NoFlush:
    def fill_(self, value):
        return None


class ReadFlush:
    """Evicts L2 by reading the buffer: the lines left behind are clean, nothing is written back later."""

    def __init__(self, buffer):
        self.buffer, self.sink = buffer, torch.empty((), dtype=buffer.dtype, device=buffer.device)

    def fill_(self, value):
        torch.sum(self.buffer, dim=0, out=self.sink)


def one_process() -> dict:
    from kt_cli import plugins
    from kt_cli.evaluate.timing import EventTimer

    runtime = plugins.vendor("nvidia").runtime()
    module = template("softmax")
    rows = []
    for (m, n), options in CONFIGS.items():
        kernel_params = {k: v for k, v in options.items() if k not in ("num_warps", "num_stages")}
        launch_options = {k: options[k] for k in ("num_warps", "num_stages")}
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16) * 3
        inputs = {"x": x, "y": torch.empty_like(x)}

        def kernel():
            module.launch(Bound(module, launch_options), inputs, kernel_params)

        def anchor():
            torch.softmax(x, dim=-1)

        row = {"shape": f"{m}x{n}"}
        row["loop"] = [time_ms(kernel) * 1e-3, time_ms(anchor) * 1e-3]
        for name, flush in (("kt", None), ("no-flush", NoFlush()), ("read-flush", "read")):
            timer = EventTimer(runtime, flush_bytes=100 << 20, max_seconds=1.0)
            if flush == "read":
                flush = ReadFlush(timer._flush_buffer().view(torch.float32))
            if flush is not None:
                timer._flush = flush
            stats = timer.measure_interleaved([kernel, anchor], "events")
            row[name] = [s.median for s in stats]
            row[name + "-ci"] = [s.rel_ci for s in stats]
        rows.append(row)
    return {"rows": rows}


def summary(results: list) -> None:
    for shape in [r["shape"] for r in results[0]["rows"]]:
        rows = [[r for r in res["rows"] if r["shape"] == shape][0] for res in results]
        print(f"== {shape}: {len(rows)} fresh processes; kernel us (min-max, spread), x eager (min-max, spread)")
        for method in ("loop", "kt", "no-flush", "read-flush"):
            k = [r[method][0] * 1e6 for r in rows]
            ratio = [r[method][1] / r[method][0] for r in rows]
            print(f"{method:11} kernel {min(k):7.1f}-{max(k):7.1f} ({max(k) / min(k) - 1:5.1%})  x eager "
                  f"{min(ratio):.3f}-{max(ratio):.3f} ({max(ratio) / min(ratio) - 1:5.1%})  median kernel "
                  f"{statistics.median(k):.1f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=0)
    parser.add_argument("--json")
    args = parser.parse_args()
    if not args.processes:
        print(json.dumps(one_process()))
        return
    in_fresh_processes([[__file__]] * args.processes, args.json, summary)


if __name__ == "__main__":
    main()
