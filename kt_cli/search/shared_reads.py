"""A study's reads shared between the threads of a process.

Optuna wraps an RDB storage in its `_CachedStorage`: finished trials are kept, and every look at the
study (Optuna's ask for a queued trial, TPE's search space and its draw, kt's ledger, the look for
dead owners) reads every unfinished trial again, one thread at a time under the cache's lock. A
`kt tune` process keeps about 16 trials in flight, each looking about five times: on a 1x H100 host
the threads of one process were busy 14.7 s of a 44 s matmul run in those reads (docs/performance.md,
nineteenth session; on the GPU hosts the sharing moved the trials' rate by less than the hosts' spread).

`SharedReadsStorage` keeps Optuna's guarantee and drops the repeats: a look is answered by a read that
began after the look was asked for, so it holds every write committed before (what kt's turn-taking
needs: of two trials that write and then look, at least one sees the other's write). A thread that
finds a read under way waits for it to end; if that read began before it asked, the next read (one,
made by the first such thread) answers all who waited meanwhile.
"""

from __future__ import annotations

import threading

from optuna.storages import RDBStorage
from optuna.storages._cached_storage import _CachedStorage


class _Reads:
    """A study's read count: begun, completed, and whether one is under way."""

    def __init__(self) -> None:
        self.begun = 0
        self.completed = 0  # every read numbered up to this one completed
        self.under_way = False


class SharedReadsStorage(_CachedStorage):
    def __init__(self, backend: RDBStorage) -> None:
        super().__init__(backend)
        self._reads: dict[int, _Reads] = {}
        self._reads_changed = threading.Condition()

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        del state["_reads_changed"]
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._reads_changed = threading.Condition()

    def _read_trials_from_remote_storage(self, study_id: int) -> None:
        with self._reads_changed:
            reads = self._reads.setdefault(study_id, _Reads())
            needed = reads.begun + 1  # the first read to begin after this call
            while reads.completed < needed:
                if not reads.under_way:
                    reads.under_way, reads.begun = True, reads.begun + 1
                    break
                self._reads_changed.wait()
            else:
                return
        completed = False
        try:
            super()._read_trials_from_remote_storage(study_id)
            completed = True
        finally:
            with self._reads_changed:
                reads.under_way = False
                if completed:
                    reads.completed = reads.begun
                self._reads_changed.notify_all()


def shared_reads(storage):
    """`storage` for optuna.create_study/load_study: an RDB storage gets its reads shared between the
    process's threads (SharedReadsStorage); a journal storage is passed as it is."""
    return SharedReadsStorage(storage) if isinstance(storage, RDBStorage) else storage
