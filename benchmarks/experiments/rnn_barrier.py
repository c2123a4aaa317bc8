"""Issue 19 item 3, exploration: the grid barrier of lstm_seq / gru_seq (GRID = 1), one variant at a time.
Each variant is the library's kernel module with its `_grid_wait` (and, for `flags`, `_grid_arrive` and
the sync buffer) replaced, written to a temporary module so that Triton compiles it as kt would; every
point is launched directly, its outputs compared with torch (cuDNN), and timed with CUDA events (median
of 5 after 2 warm-ups). One JSON line per (kernel, problem, point, variant).

    python benchmarks/experiments/rnn_barrier.py > barrier.jsonl

Variants:
- `rmw`: the library's (today): every poll is an atomic add of 0 with acquire semantics, so the 32-128
  programs' polls queue at the counter's L2 atomic unit beside the arrivals they wait for;
- `load`: polls are volatile (relaxed) loads, then one acquire add of 0 once the count is reached (it
  reads the last arrival's value in the counter's release sequence: the same synchronisation);
- `flags`: a counter per program (each arrival an atomic add on its own address, no queue), the wait
  polls every program's counter with one vector of volatile loads and ends with a fence.acq_rel.gpu
  (NVIDIA inline PTX: not a candidate for the library as it stands, a bound for what the arrivals cost).
"""

import argparse
import importlib.util
import inspect
import json
import sys
import tempfile
from pathlib import Path

import torch
from common import Bound, template, time_ms

from kt_cli.kernel import Tensors

RMW_WAIT = '''    arrived = tl.atomic_add(sync_ptr, 0, sem="acquire")
    while arrived < target:
        arrived = tl.atomic_add(sync_ptr, 0, sem="acquire")
'''
LOAD_WAIT = '''    arrived = tl.load(sync_ptr, volatile=True)
    while arrived < target:
        arrived = tl.load(sync_ptr, volatile=True)
    tl.atomic_add(sync_ptr, 0, sem="acquire")
'''
FLAGS_WAIT = '''    programs = tl.num_programs(0) * tl.num_programs(1)
    steps = target // programs
    ids = tl.arange(0, 256)
    seen = tl.min(tl.load(sync_ptr + ids, mask=ids < programs, other=steps, volatile=True), axis=0)
    while seen < steps:
        seen = tl.min(tl.load(sync_ptr + ids, mask=ids < programs, other=steps, volatile=True), axis=0)
    tl.inline_asm_elementwise("fence.acq_rel.gpu; mov.u32 $0, 0;", "=r", [], dtype=tl.int32, is_pure=False,
                              pack=1)
'''
RMW_ARRIVE = '    tl.atomic_add(sync_ptr, 1, sem="release")\n'
FLAGS_ARRIVE = ('    tl.atomic_add(sync_ptr + tl.program_id(1) * tl.num_programs(0) + tl.program_id(0), 1, '
                'sem="release")\n')
SYNC_ALLOC = "sync = torch.zeros(1, dtype=torch.int32, device=x.device)"
FLAGS_ALLOC = "sync = torch.zeros(256, dtype=torch.int32, device=x.device)"


def variant(name: str, kind: str, tmp: Path):
    """The kernel module `name` with the barrier variant `kind`, imported from a file of its own."""
    source = inspect.getsource(template(name))
    for old in (RMW_WAIT, RMW_ARRIVE, SYNC_ALLOC):
        if old not in source:
            raise SystemExit(f"{name}: the barrier code changed; update rnn_barrier.py ({old.strip()!r})")
    if kind == "load":
        source = source.replace(RMW_WAIT, LOAD_WAIT)
    elif kind == "flags":
        source = source.replace(RMW_WAIT, FLAGS_WAIT).replace(RMW_ARRIVE, FLAGS_ARRIVE).replace(SYNC_ALLOC, FLAGS_ALLOC)
    path = tmp / f"{name}_{kind}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"{name}_{kind}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", default="lstm_seq,gru_seq")
    parser.add_argument("--variants", default="rmw,load,flags")
    parser.add_argument("--problems", default="16x1024,1x1024,16x256,1x256", help="BxH, comma-separated")
    parser.add_argument("--points", default="8,128,4;8,64,4;8,64,8;16,64,4;16,128,8;32,64,8",
                        help="BLOCK_H,BLOCK_K,num_warps separated by ';'")
    args = parser.parse_args()
    dtype = torch.bfloat16
    tmp = Path(tempfile.mkdtemp(prefix="kt-barrier-"))
    points = [tuple(map(int, p.split(","))) for p in args.points.split(";")]
    for name in args.kernels.split(","):
        modules = {kind: variant(name, kind, tmp) for kind in args.variants.split(",")}
        for problem in args.problems.split(","):
            b, h = map(int, problem.split("x"))
            shape = {"T": 1024, "B": b, "H": h, "I": h}
            inputs = modules["rmw" if "rmw" in modules else next(iter(modules))].make_inputs(shape, dtype,
                                                                                          Tensors("cuda", 0))
            want = template(name).baseline(inputs)
            for bh, bk, nw in points:
                if bk > h or -(-h // bh) > torch.cuda.get_device_properties(0).multi_processor_count:
                    continue
                for kind, module in modules.items():
                    params = {"GRID": 1, "BLOCK_B": 16, "BLOCK_H": bh, "BLOCK_K": bk}
                    k = Bound(module, {"num_warps": nw, "num_stages": 3})
                    row = {"kernel": name, "shape": shape, "variant": kind, "params": {**params, "num_warps": nw}}
                    try:
                        module.launch(k, inputs, params)
                        torch.cuda.synchronize()
                        row["max_abs_vs_cudnn"] = max((inputs[n].float() - w.float()).abs().max().item()
                                                      for n, w in zip(module.OUTPUTS, want))
                        ms = time_ms(lambda: module.launch(k, inputs, params), warmups=2)
                        row.update(ms=ms, us_per_step=1000 * ms / shape["T"])
                    except Exception as e:  # noqa: BLE001 (a point that fails is a row, not the end)
                        row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
