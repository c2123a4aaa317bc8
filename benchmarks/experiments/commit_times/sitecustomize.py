"""Every database transaction of every `kt tune` process of a run, timed, without changing kt: put this folder
first on PYTHONPATH and set KT_COMMIT_TIMES_DIR. Each transaction's wall time from its BEGIN to its COMMIT
(SQLAlchemy's engine events; SQLite holds its write lock from a transaction's first write to its commit) is
added up per call site (the innermost kt or Optuna frames that committed it), and at exit DIR/PID.json holds
{site: [count, seconds]}. benchmarks/experiments/stack_sample/ says where the CPU goes; this says how long
the storage's transactions keep each other waiting."""

import atexit
import collections
import json
import os
import sys
import time
import traceback

DIR = os.environ.get("KT_COMMIT_TIMES_DIR")


def _site() -> str:
    frames = [f for f in traceback.extract_stack()[:-2]
              if ("/kt_cli/" in f.filename or "/optuna/" in f.filename)
              and not any(s in f.filename for s in ("owned_storages", "_rdb", "_cached_storage", "shared_reads"))]
    return " < ".join(f"{f.filename.split('/')[-1]}:{f.name}" for f in frames[-3:][::-1])


def _install(path: str) -> None:
    import sqlalchemy.engine
    import sqlalchemy.event

    times = collections.defaultdict(lambda: [0, 0.0])

    @sqlalchemy.event.listens_for(sqlalchemy.engine.Engine, "begin")
    def _begin(connection):
        connection.info["kt_begun"] = time.perf_counter()

    @sqlalchemy.event.listens_for(sqlalchemy.engine.Engine, "commit")
    def _commit(connection):
        entry = times[_site()]
        entry[0] += 1
        entry[1] += time.perf_counter() - connection.info.pop("kt_begun", time.perf_counter())

    def _write() -> None:
        with open(path, "w") as f:
            json.dump({"argv": sys.argv, "pid": os.getpid(), "sites": dict(times)}, f)

    atexit.register(_write)


if DIR and ("tune" in sys.argv or "--multiprocessing-fork" in sys.argv):
    os.makedirs(DIR, exist_ok=True)
    _install(os.path.join(DIR, f"{os.getpid()}.json"))
