"""A sampling profiler for every `kt tune` process of a run, without changing kt: put this folder first
on PYTHONPATH and set KT_STACK_SAMPLE_DIR. Every 5 ms a thread of each such process reads the stacks of
the others (sys._current_frames) and counts them; every 2 s it writes the counts and each thread's CPU
seconds (/proc/self/task/TID/stat) to DIR/PID.json. A stack sampled often on a thread with little CPU
time is waiting (a lock, the GIL, a pipe, SQLite's busy handler); with much CPU time it is working.
Each round also reads every thread's CPU ticks and charges the ticks it used since the round before
to the stack it is in now ("cpu": where the process's CPU goes, GIL waits excluded).
benchmarks/experiments/stack_report.py compares runs. Processes forked
(the compile pool, the device's workers: kt's fork server) are not sampled."""

import json
import os
import sys
import threading
import time
from collections import Counter, defaultdict

DIR = os.environ.get("KT_STACK_SAMPLE_DIR")
PERIOD_S, WRITE_S, DEPTH = float(os.environ.get("KT_STACK_SAMPLE_PERIOD_S", 0.01)), 2.0, 40  # a long period: CPU only


def _stack(frame) -> str:
    parts = []
    while frame is not None and len(parts) < DEPTH:
        code = frame.f_code
        parts.append(f"{code.co_filename}:{code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return " < ".join(parts)


def _ticks(tid: int) -> int:
    try:
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def _group(name: str) -> str:
    return name.split("(")[0].rstrip("-0123456789 ")


def _sample(path: str) -> None:
    me = threading.get_ident()
    counts: dict = defaultdict(Counter)
    cpu_counts: dict = defaultdict(Counter)  # ticks charged to stacks
    ticks: dict = {}  # native thread id -> CPU ticks at the last round
    started, last, rounds = time.time(), time.time(), 0
    while True:
        time.sleep(PERIOD_S)
        rounds += 1
        threads = {t.ident: t for t in threading.enumerate()}
        for ident, frame in sys._current_frames().items():
            if ident == me or ident not in threads:
                continue
            thread, stack = threads[ident], _stack(frame)
            counts[_group(thread.name)][stack] += 1
            now = _ticks(thread.native_id)
            used = now - ticks.get(thread.native_id, now)
            ticks[thread.native_id] = now
            if used > 0:
                cpu_counts[_group(thread.name)][stack] += used
        if time.time() - last > WRITE_S or _EXITING.is_set():
            last = time.time()
            record = {"argv": sys.argv, "pid": os.getpid(), "ppid": os.getppid(), "span_s": last - started, "rounds": rounds,
                      "process_cpu_s": sum(os.times()[:2]), "tick_s": 1 / os.sysconf("SC_CLK_TCK"),
                      "samples": {k: dict(v.most_common(1000)) for k, v in counts.items()},
                      "cpu_ticks": {k: dict(v.most_common(3000)) for k, v in cpu_counts.items()}}
            tmp = f"{path}.tmp"
            with open(tmp, "w") as f:
                json.dump(record, f)
            os.replace(tmp, path)
            if _EXITING.is_set():
                _WRITTEN.set()
                return


_EXITING, _WRITTEN = threading.Event(), threading.Event()


def _last_record() -> None:
    """At exit, one more record (the process's whole CPU time), written by the sampler."""
    _EXITING.set()
    _WRITTEN.wait(5 * PERIOD_S + 1)


if DIR and ("tune" in sys.argv or "--multiprocessing-fork" in sys.argv):  # kt tune, its --workers
    os.makedirs(DIR, exist_ok=True)
    threading.Thread(target=_sample, args=(os.path.join(DIR, f"{os.getpid()}.json"),), daemon=True,
                     name="stack-sampler").start()
    import atexit

    atexit.register(_last_record)
