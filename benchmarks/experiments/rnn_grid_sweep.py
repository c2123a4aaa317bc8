"""Issue 19 item 3, exploration: every GRID = 1 point of lstm_seq / gru_seq at the benchmark's problems,
launched directly (no kt search), timed with CUDA events (median of 5 after 2 warm-ups), each output
compared with torch.nn.LSTM / nn.GRU (cuDNN) on the same tensors. Prints one JSON line per point.

    python benchmarks/experiments/rnn_grid_sweep.py --kernels lstm_seq,gru_seq > sweep.jsonl
"""

import argparse
import itertools
import json

import torch
from common import Bound, template, time_ms

from kt_cli.kernel import Tensors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", default="lstm_seq,gru_seq")
    parser.add_argument("--hidden", default="256,1024")
    parser.add_argument("--batch", default="1,16")
    parser.add_argument("--only", default=None,
                        help="points BLOCK_H,BLOCK_K,num_warps separated by ';' (e.g. one under ncu)")
    args = parser.parse_args()
    dtype = torch.bfloat16
    for name in args.kernels.split(","):
        module = template(name)
        for h, b in itertools.product(map(int, args.hidden.split(",")), map(int, args.batch.split(","))):
            shape = {"T": 1024, "B": b, "H": h, "I": h}
            inputs = module.make_inputs(shape, dtype, Tensors("cuda", 0))
            want = module.baseline(inputs)
            base_ms = time_ms(lambda: module.baseline(inputs), warmups=2)
            print(json.dumps({"kernel": name, "shape": shape, "anchor": "cudnn", "ms": base_ms}), flush=True)
            points = [tuple(map(int, p.split(","))) for p in args.only.split(";")] if args.only else \
                itertools.product((8, 16, 32), (32, 64, 128, 256), (4, 8))
            for bh, bk, nw in points:
                params = {"GRID": 1, "BLOCK_B": 16, "BLOCK_H": bh, "BLOCK_K": bk}
                if bk > h or (4 * bh + 16) * h * 2 > 232448 or -(-h // bh) > 132:
                    continue
                k = Bound(module, {"num_warps": nw, "num_stages": 3})
                try:
                    module.launch(k, inputs, params)
                    torch.cuda.synchronize()
                    diff = max((inputs[n].float() - w.float()).abs().max().item()
                               for n, w in zip(module.OUTPUTS, want))
                    ms = time_ms(lambda: module.launch(k, inputs, params), warmups=2)
                    row = {"params": {**params, "num_warps": nw}, "ms": ms, "us_per_step": 1000 * ms / 1024,
                           "x_cudnn": base_ms / ms, "max_abs_vs_cudnn": diff}
                except Exception as e:  # noqa: BLE001
                    row = {"params": {**params, "num_warps": nw}, "error": str(e)[:300]}
                print(json.dumps({"kernel": name, "shape": shape, **row}), flush=True)


if __name__ == "__main__":
    main()
