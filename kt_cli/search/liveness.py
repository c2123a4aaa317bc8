"""Whether the owner of a running trial is still alive, from the moment the trial exists.

Every trial this process creates, or takes from the queue, gets a heartbeat and an owner record (this
machine, pid and process start time) at once, before Optuna's sampler runs; the heartbeat is renewed
every HEARTBEAT_S until the trial finishes. A running trial is dead when its owner on this machine is
gone (at once), when its heartbeat is GRACE_S old (an owner on another host), or when it has had
neither owner nor heartbeat for GRACE_S (its process died between creating it and recording itself).
A slow ask() in a live process is never judged dead: its owner is alive and its heartbeat is fresh.
"""

from __future__ import annotations

import threading

from kt_cli.processes import owner_alive, this_process

OWNER = "kt_owner"  # trial system attr: the process that runs the trial (never copied into a retry)
HEARTBEAT_S = 5
GRACE_S = 20


def is_dead(trial, heartbeat_age: float | None, started_age: float, has_heartbeats: bool) -> bool:
    """Whether a running trial's owner is gone. `heartbeat_age`: seconds since its last heartbeat
    (None: no heartbeat row); `started_age`: seconds since it started running; `has_heartbeats`: the
    storage keeps heartbeats (journal files do not)."""
    owner = trial.system_attrs.get(OWNER)
    alive = owner_alive(owner)
    if alive is not None:
        return not alive
    if has_heartbeats and heartbeat_age is not None:
        return heartbeat_age > GRACE_S
    if owner is None or has_heartbeats:  # died before it recorded itself
        return started_age > GRACE_S
    return False  # an owner on another host, and nothing that says whether it still runs


class TrialKeeper:
    """Mixed into kt's Optuna storages: owns every trial this process starts running (heartbeat and
    owner record at once, then a heartbeat every HEARTBEAT_S) until it finishes."""

    keeps_heartbeats = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._owned: set[int] = set()
        self._owned_lock = threading.Lock()
        self._beating = False

    def _beat(self, trial_id: int) -> None:
        self.record_heartbeat(trial_id)

    def _beat_all(self, trial_ids: list[int]) -> None:
        """A heartbeat for each of `trial_ids` (a storage may write them in one transaction)."""
        for trial_id in trial_ids:
            self._beat(trial_id)

    def _own(self, trial_id: int, recorded: bool = False) -> None:
        """Own a trial this process runs: its owner record and first heartbeat (unless the storage
        `recorded` them as it made the trial), then a heartbeat every HEARTBEAT_S."""
        if not recorded:
            self._record_owner(trial_id)
        if not self.keeps_heartbeats:
            return
        with self._owned_lock:
            self._owned.add(trial_id)
            if not self._beating:
                self._beating = True
                threading.Thread(target=self._keep_beating, daemon=True, name="kt-heartbeat").start()

    def _record_owner(self, trial_id: int) -> None:
        """The trial's first heartbeat and its owner record (a storage may write both at once)."""
        if self.keeps_heartbeats:
            self._beat(trial_id)  # first: an observer on another host judges by the heartbeat
        self.set_trial_system_attr(trial_id, OWNER, this_process())

    def _disown(self, trial_id: int) -> None:
        with self._owned_lock:
            self._owned.discard(trial_id)

    def _keep_beating(self) -> None:
        import time

        while True:
            time.sleep(HEARTBEAT_S)
            with self._owned_lock:
                owned = sorted(self._owned)
                if not owned:
                    self._beating = False
                    return
            try:
                self._beat_all(owned)
            except Exception:  # a busy or unreachable database: the next beat tries again
                pass

    def set_trial_state_values(self, trial_id: int, state, values=None) -> bool:
        try:
            changed = super().set_trial_state_values(trial_id, state, values=values)
        finally:
            if state.is_finished():
                self._disown(trial_id)
        if changed and state.name == "RUNNING":  # taken from the queue by this process
            self._own(trial_id)
        return changed
