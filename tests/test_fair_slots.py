"""The in-flight slots of the studies one process drives side by side: a freed slot goes to the study
furthest behind in its budget, so no study waits for the others' whole rounds (kt_cli.search.fair_slots)."""

import threading
import time

from kt_cli.search.fair_slots import FairSlots


def _run(slots: FairSlots, studies: dict, threads_each: int, gate: threading.Event, order: list, lock) -> list:
    """`threads_each` threads per study (started study by study, in the dict's order), each taking one
    slot, noting the study in `order` and holding the slot until `gate` is set."""
    queued = []

    def trial(study: str, limit: int) -> None:
        with lock:
            queued.append(study)
        with slots.hold(study, limit):
            with lock:
                order.append(study)
            gate.wait(10)
            time.sleep(0.002)

    workers = [threading.Thread(target=trial, args=(s, limit)) for s, limit in studies.items()
               for _ in range(threads_each)]
    for w in workers:
        w.start()
    return workers, queued


def test_a_study_whose_threads_queued_last_is_not_served_last():
    # 4 slots, three studies of 8 threads each, queued A first: a first-come queue would hand the first
    # 12 slots to A (8) and B (4), and C would wait for two whole rounds
    slots, order, lock, gate = FairSlots(4), [], threading.Lock(), threading.Event()
    workers, queued = _run(slots, {"A": 32, "B": 32, "C": 32}, 8, gate, order, lock)
    deadline = time.monotonic() + 10
    while len(queued) < 24 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # every thread is past its note and waiting for a slot
    gate.set()
    for w in workers:
        w.join(10)
    assert len(order) == 24
    first = order[:12]
    assert first.count("C") >= 3 and first.count("B") >= 3, first
    assert order[:4] == ["A"] * 4  # the slots were free: A took them before B and C queued


def test_the_share_of_the_budget_decides_not_the_count():
    # B has started 2 of 20 (10%), A 1 of 2 (50%): B gets the freed slot though it started more trials
    slots = FairSlots(1)
    for study, limit in (("A", 2), ("B", 20), ("B", 20)):
        with slots.hold(study, limit):
            pass
    order, lock, gate = [], threading.Lock(), threading.Event()
    holder = threading.Event()

    def hold_first():
        with slots.hold("C", 100):
            holder.set()
            gate.wait(10)

    first = threading.Thread(target=hold_first)
    first.start()
    holder.wait(10)
    later = threading.Event()
    workers, queued = _run(slots, {"A": 2, "B": 20}, 1, later, order, lock)
    while len(queued) < 2:
        time.sleep(0.01)
    time.sleep(0.2)
    gate.set()
    first.join(10)
    # the two waiters hold their slot until their own gate: only the first can have taken it
    time.sleep(0.2)
    assert order == ["B"]
    later.set()
    for w in workers:
        w.join(10)
    assert order == ["B", "A"]


def test_a_study_ahead_still_takes_a_free_slot_when_no_other_waits():
    slots = FairSlots(2)
    with slots.hold("A", 4):
        with slots.hold("A", 4):
            pass
    with slots.hold("A", 4):
        pass
    assert slots.started("A") == 3 and slots.started("B") == 0


def test_never_more_trials_in_flight_than_slots_and_every_one_runs():
    slots, lock = FairSlots(3), threading.Lock()
    running, most, done = [0], [0], []

    def trial(study):
        with slots.hold(study, 10):
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.001)
            with lock:
                running[0] -= 1
                done.append(study)

    workers = [threading.Thread(target=trial, args=(s,)) for s in "ABCD" for _ in range(10)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(10)
    assert len(done) == 40 and most[0] <= 3
