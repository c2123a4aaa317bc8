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

Looks that decide nothing need not be that fresh. Inside `recent_reads()` a look is answered by any read
that began at most RECENT_S before it: Optuna's look for a queued trial in each ask, TPE's two looks (its
search space, then its draw), the look for dead owners. A point they miss by so little is caught where
kt decides (kt's ledger looks with `fresh_reads()`, whatever encloses it): the queued trial is popped by
a later ask, the point a draw proposes again is answered as a duplicate or skipped, the dead owner is
settled at the next look. On a 4x H200 host a kt process's CPU bounded its trials' rate, with one worker
and with four, and reading the study was the largest share of it: 5.3 reads a trial with one worker,
8.6 with four, each of every running trial of every process (docs/performance.md, twenty-first session).
"""

from __future__ import annotations

import contextlib
import threading
import time

from optuna.storages import RDBStorage
from optuna.storages._cached_storage import _CachedStorage


RECENT_S = 0.05  # how old a read a look inside recent_reads() takes

_looks = threading.local()  # .recent: this thread's looks take a read begun up to RECENT_S before them


@contextlib.contextmanager
def _looking(recent: bool):
    before = getattr(_looks, "recent", False), getattr(_looks, "looked", None)
    _looks.recent, _looks.looked = recent, set()
    try:
        yield
    finally:
        _looks.recent, _looks.looked = before


def recent_reads():
    """Within it, this thread's looks at a study take a read begun up to RECENT_S before them, or the
    one its first look inside took (an ask's looks at the study, one after another, share a read)."""
    return _looking(True)


def fresh_reads():
    """Within it (even inside recent_reads()), this thread's looks take only a read begun after them."""
    return _looking(False)


def _recent_enough(study_id: int, began_at: float) -> bool:
    """Whether this thread's look may take the study's latest read, begun at `began_at`."""
    if not getattr(_looks, "recent", False):
        return False
    looked = study_id in _looks.looked
    _looks.looked.add(study_id)
    return looked or time.monotonic() - began_at <= RECENT_S


class _Reads:
    """A study's read count: begun, completed, and whether one is under way."""

    def __init__(self) -> None:
        self.begun = 0
        self.completed = 0  # every read numbered up to this one completed
        self.under_way = False
        self.began_at = -float("inf")  # when the latest completed read began (time.monotonic)


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
            if _recent_enough(study_id, reads.began_at):
                return
            needed = reads.begun + 1  # the first read to begin after this call
            while reads.completed < needed:
                if not reads.under_way:
                    reads.under_way, reads.begun = True, reads.begun + 1
                    break
                self._reads_changed.wait()
            else:
                return
        completed, began_at = False, time.monotonic()
        try:
            super()._read_trials_from_remote_storage(study_id)
            completed = True
        finally:
            with self._reads_changed:
                reads.under_way = False
                if completed:
                    reads.completed, reads.began_at = reads.begun, began_at
                self._reads_changed.notify_all()


def shared_reads(storage):
    """`storage` for optuna.create_study/load_study: an RDB storage gets its reads shared between the
    process's threads (SharedReadsStorage); a journal storage is passed as it is."""
    return SharedReadsStorage(storage) if isinstance(storage, RDBStorage) else storage
