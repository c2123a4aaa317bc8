"""What a worker's start costs, step by step, on this host: the fork server's boot (it imports torch),
one interpreter worker forked from it (Triton, kt's launch-watch snapshot), a second worker, and, in a
fresh interpreter, each import a worker may make alone (torch._dynamo: no kt worker since
the launch watch's dispatch mode stopped importing it, kt_cli/evaluate/launch_watch._tensor_ops).

    python benchmarks/experiments/worker_start.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

CHAIN = """
import time
t = time.perf_counter()
steps = {}
import torch
steps["import torch"] = time.perf_counter() - t; t = time.perf_counter()
import triton
steps["import triton"] = time.perf_counter() - t; t = time.perf_counter()
import torch._dynamo
steps["import torch._dynamo"] = time.perf_counter() - t; t = time.perf_counter()
from kt_cli.evaluate import requests
steps["import kt_cli.evaluate.requests"] = time.perf_counter() - t; t = time.perf_counter()
requests.prepare_worker()
steps["prepare_worker (launch-watch snapshot)"] = time.perf_counter() - t; t = time.perf_counter()
from kt_cli.evaluate.interpreter_fixes import apply
apply()
steps["interpreter fixes"] = time.perf_counter() - t
for k, v in steps.items():
    print(f"  {k:42} {v:6.2f} s")
"""


def main() -> None:
    from multiprocessing import forkserver

    from kt_cli.evaluate import pool

    started = time.perf_counter()
    with pool._main_module_hidden():
        pool._sockets_under_a_short_directory()
        pool._context()  # sets the fork server's preload
        forkserver.ensure_running()
    booted = time.perf_counter()
    interpreter = pool.WorkerPool(1, {"TRITON_INTERPRET": "1"})
    interpreter.workers[0].ensure_started()
    ready = time.perf_counter()
    device_like = pool.WorkerPool(1, {"TRITON_INTERPRET": "0"})
    device_like.workers[0].ensure_started()
    second = time.perf_counter()
    print(f"fork server boot {booted - started:.2f} s; interpreter worker start {ready - booted:.2f} s; "
          f"a second (non-interpreted) worker {second - ready:.2f} s")
    interpreter.stop()
    device_like.stop()
    for interpret in ("1", "0"):
        print(f"the chain in a fresh interpreter, TRITON_INTERPRET={interpret}:")
        subprocess.run([sys.executable, "-c", CHAIN], env={**os.environ, "TRITON_INTERPRET": interpret,
                                                           "PYTHONPATH": str(ROOT)}, check=True)


if __name__ == "__main__":
    main()
