"""A sampling profiler for every `kt tune` process of a run, without changing kt: put this folder first
on PYTHONPATH and set KT_STACK_SAMPLE_DIR. Every 5 ms a thread of each such process reads the stacks of
the others (sys._current_frames) and counts them; every 2 s it writes the counts and each thread's CPU
seconds (/proc/self/task/TID/stat) to DIR/PID.json. A stack sampled often on a thread with little CPU
time is waiting (a lock, the GIL, a pipe, SQLite's busy handler); with much CPU time it is working.
benchmarks/experiments/stack_report.py compares runs. Forked workers (the compile pool) are not sampled."""

import json
import os
import sys
import threading
import time
from collections import Counter, defaultdict

DIR = os.environ.get("KT_STACK_SAMPLE_DIR")
PERIOD_S, WRITE_S, DEPTH = 0.005, 2.0, 8


def _stack(frame) -> str:
    parts = []
    while frame is not None and len(parts) < DEPTH:
        code = frame.f_code
        parts.append(f"{os.path.basename(code.co_filename)}:{code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return " < ".join(parts)


def _cpu_seconds(tid: int) -> float:
    try:
        fields = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _sample(path: str) -> None:
    me = threading.get_ident()
    counts: dict = defaultdict(Counter)
    started, last, rounds = time.time(), time.time(), 0
    while True:
        time.sleep(PERIOD_S)
        rounds += 1
        names = {t.ident: t.name for t in threading.enumerate()}
        for ident, frame in sys._current_frames().items():
            if ident != me:
                counts[names.get(ident, str(ident)).split("(")[0].rstrip("-0123456789 ")][_stack(frame)] += 1
        if time.time() - last > WRITE_S:
            last = time.time()
            cpu = defaultdict(float)
            for t in threading.enumerate():
                if t.native_id:
                    cpu[t.name.split("(")[0].rstrip("-0123456789 ")] += _cpu_seconds(t.native_id)
            record = {"argv": sys.argv, "pid": os.getpid(), "span_s": last - started, "rounds": rounds,
                      "process_cpu_s": sum(os.times()[:2]), "thread_cpu_s": cpu,
                      "samples": {k: dict(v.most_common(400)) for k, v in counts.items()}}
            tmp = f"{path}.tmp"
            with open(tmp, "w") as f:
                json.dump(record, f)
            os.replace(tmp, path)


if DIR and "tune" in sys.argv:
    os.makedirs(DIR, exist_ok=True)
    threading.Thread(target=_sample, args=(os.path.join(DIR, f"{os.getpid()}.json"),), daemon=True,
                     name="stack-sampler").start()
