"""The in-flight slots of the studies one process drives side by side (kt_cli.search.fair_slots): no
study takes every slot because it was set up first, a freed slot goes to the study furthest behind in
its budget, and no slot stays free while some study could use it."""

import threading
import time

from kt_cli.search.fair_slots import FairSlots


class _Trials:
    """Threads that each take one slot for a study, note the study in `order` and hold the slot until
    `gate` is set."""

    def __init__(self, slots: FairSlots):
        self.slots, self.order, self.queued = slots, [], []
        self.lock, self.gate, self.threads = threading.Lock(), threading.Event(), []

    def start(self, study: str, count: int) -> None:
        for _ in range(count):
            thread = threading.Thread(target=self._trial, args=(study,))
            thread.start()
            self.threads.append(thread)

    def _trial(self, study: str) -> None:
        with self.lock:
            self.queued.append(study)
        with self.slots.hold(study):
            with self.lock:
                self.order.append(study)
            self.gate.wait(10)
            time.sleep(0.002)

    def until(self, condition) -> None:
        deadline = time.monotonic() + 10
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # and whatever else was going to happen has happened

    def finish(self) -> None:
        self.gate.set()
        for thread in self.threads:
            thread.join(10)


def _studies(slots: FairSlots, **limits) -> None:
    for study, limit in limits.items():
        slots.join(study, limit)


def test_the_study_set_up_first_takes_only_its_part_while_the_others_set_up():
    # 4 slots, three studies: A drives first while B and C are still being set up. A first-come
    # semaphore gave A every slot and left B and C behind A's whole rounds.
    slots = FairSlots(4)
    _studies(slots, A=32, B=32, C=32)
    trials = _Trials(slots)
    slots.driving("A")
    trials.start("A", 8)
    trials.until(lambda: len(trials.queued) == 8)
    assert trials.order == ["A", "A"]  # its part: 4 slots over 3 studies, rounded up
    slots.driving("B")
    trials.start("B", 8)
    trials.until(lambda: len(trials.order) == 4)
    assert trials.order == ["A", "A", "B", "B"]
    slots.driving("C")
    trials.start("C", 8)
    trials.until(lambda: len(trials.queued) == 24)
    trials.finish()
    assert len(trials.order) == 24
    first = trials.order[:12]
    assert first.count("C") >= 3, first


def test_a_freed_slot_goes_to_the_study_with_the_smallest_share_of_its_budget():
    # B has started 2 of 20 (10%), A 1 of 2 (50%): B gets the freed slot though it started more trials
    slots = FairSlots(1)
    _studies(slots, A=2, B=20, C=100)
    for study in ("A", "B", "C"):
        slots.driving(study)
    for study in ("A", "B", "B"):
        with slots.hold(study):
            pass
    holder, release = threading.Event(), threading.Event()

    def hold_the_slot():
        with slots.hold("C"):
            holder.set()
            release.wait(10)

    first = threading.Thread(target=hold_the_slot)
    first.start()
    holder.wait(10)
    trials = _Trials(slots)
    trials.start("A", 1)
    trials.start("B", 1)
    trials.until(lambda: len(trials.queued) == 2)
    release.set()
    first.join(10)
    trials.until(lambda: trials.order)
    assert trials.order == ["B"]
    trials.finish()
    assert trials.order == ["B", "A"]


def test_a_study_holds_more_than_its_part_only_when_no_other_study_waits_or_sets_up():
    slots = FairSlots(2)
    _studies(slots, A=4, B=4)
    slots.driving("A")
    trials = _Trials(slots)
    trials.start("A", 2)
    trials.until(lambda: len(trials.queued) == 2)
    assert trials.order == ["A"]  # B is owed its part while it sets up
    slots.driving("B")  # B drives, with nothing to run: A may use the free slot
    trials.until(lambda: len(trials.order) == 2)
    assert trials.order == ["A", "A"]
    trials.finish()
    slots.leave("B")
    with slots.hold("A"):
        with slots.hold("A"):  # alone: every slot is A's part
            pass
    assert slots.started("A") == 4 and slots.started("B") == 0


def test_never_more_trials_in_flight_than_slots_and_every_one_runs():
    slots, lock = FairSlots(3), threading.Lock()
    running, most, done = [0], [0], []
    _studies(slots, A=10, B=10, C=10, D=10)

    def trial(study):
        with slots.hold(study):
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.001)
            with lock:
                running[0] -= 1
                done.append(study)

    workers = [threading.Thread(target=trial, args=(s,)) for s in "ABCD" for _ in range(10)]
    for study in "ABCD":
        slots.driving(study)
    for w in workers:
        w.start()
    for w in workers:
        w.join(10)
    assert len(done) == 40 and most[0] <= 3
