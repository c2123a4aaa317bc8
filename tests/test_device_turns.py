"""The device's turns (kt_cli/evaluate/device_turns.py): of the compiled candidates waiting for the device,
the one the cost model finds most promising against its problem's best so far is timed first."""

import threading
import time

from kt_cli.evaluate.device_turns import DeviceTurns


def _queue(turns: DeviceTurns, priorities: list, served: list, waiting: int = 0) -> list:
    """Start a waiter per priority (in this order, each waiting before the next starts) while the device is
    held and `waiting` others wait; each notes its name when it gets the device and hands it on."""
    threads = []
    for name, priority in priorities:
        def wait(name=name, priority=priority):
            turns.take(priority)
            served.append(name)
            turns.release()
        thread = threading.Thread(target=wait, daemon=True)
        thread.start()
        deadline = time.monotonic() + 5
        while len(turns._waiting) < waiting + len(threads) + 1 and time.monotonic() < deadline:
            time.sleep(0.001)
        threads.append(thread)
    return threads


def test_the_most_promising_waiting_candidate_gets_the_device_first_and_ties_keep_arrival_order():
    turns, served = DeviceTurns(), []
    turns.take()
    threads = _queue(turns, [("slow", lambda: 3.0), ("best", lambda: 0.9), ("tied a", lambda: 1.2),
                             ("tied b", lambda: 1.2), ("first candidate of a problem", lambda: 0.0)], served)
    turns.release()
    for thread in threads:
        thread.join(5)
    assert served == ["first candidate of a problem", "best", "tied a", "tied b", "slow"]


def test_a_waiters_priority_is_read_when_the_device_is_handed_on_not_when_it_began_to_wait():
    # the problem's fastest estimate moves while candidates wait: a candidate that looked promising when it
    # arrived may be estimated far slower than the best found meanwhile
    turns, served, fastest = DeviceTurns(), [], {"estimate": 10.0}
    turns.take()
    threads = _queue(turns, [("was promising", lambda: 12.0 / fastest["estimate"]), ("steady", lambda: 1.1)], served)
    fastest["estimate"] = 4.0  # a better candidate was timed meanwhile: 12 / 4 = 3x its estimate now
    turns.release()
    for thread in threads:
        thread.join(5)
    assert served == ["steady", "was promising"]


def test_a_priority_that_cannot_be_read_waits_last_and_stalls_no_one():
    turns, served = DeviceTurns(), []
    turns.take()
    threads = _queue(turns, [("broken", lambda: 1 / 0), ("fine", lambda: 2.0)], served)
    turns.release()
    for thread in threads:
        thread.join(5)
    assert served == ["fine", "broken"]


def test_readying_and_a_candidate_taking_the_device_back_go_before_any_waiting_candidate():
    turns, served = DeviceTurns(), []
    turns.take()
    threads = _queue(turns, [("candidate", lambda: 0.0)], served)

    def ready():
        with turns:
            served.append("ready")
    readier = threading.Thread(target=ready, daemon=True)
    readier.start()
    while len(turns._waiting) < 2:
        time.sleep(0.001)
    turns.release()
    for thread in [*threads, readier]:
        thread.join(5)
    assert served == ["ready", "candidate"]


def test_the_device_is_free_again_once_every_waiter_is_served():
    turns = DeviceTurns()
    with turns:
        pass
    turns.take(lambda: 5.0)  # nobody else waiting: taken at once whatever the priority
    turns.release()
    assert not turns._held and turns._next is None and not turns._waiting


def test_many_candidates_taking_and_handing_on_the_device_never_hold_it_together_and_all_get_it():
    import random

    turns, inside, most, done = DeviceTurns(), [0], [0], []
    guard = threading.Lock()

    def candidate(seed: int):
        rng = random.Random(seed)
        for _ in range(40):
            if rng.random() < 0.2:
                turns.__enter__()  # readying, or a screened candidate taking the device back
            else:
                turns.take(lambda value=rng.random() * 3: value)
            with guard:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(rng.random() * 1e-4)
            with guard:
                inside[0] -= 1
            turns.release()
        done.append(seed)

    threads = [threading.Thread(target=candidate, args=(seed,), daemon=True) for seed in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(done) == list(range(16)) and most[0] == 1
    assert not turns.locked() and not turns._waiting and turns._next is None


def test_a_finished_studys_pairing_takes_the_device_only_once_no_candidate_waits_for_it():
    # kt tune pairs a finished study's winner with its reference (0.6-0.9 s of the device on an H200) while
    # the other studies run: taken first, it held their last candidates 1.2-2.6 s (results/s44/start)
    turns, served = DeviceTurns(), []
    turns.take()

    def pair():
        with turns.last():
            served.append("pairing")

    pairing = threading.Thread(target=pair, daemon=True)
    pairing.start()
    deadline = time.monotonic() + 5
    while not turns._waiting and time.monotonic() < deadline:
        time.sleep(0.001)
    threads = _queue(turns, [("candidate", lambda: 0.0), ("first candidate of a problem", lambda: float("-inf")),
                             ("far slower candidate", lambda: 40.0)], served, waiting=1)
    turns.release()
    for thread in (pairing, *threads):
        thread.join(5)
    assert served == ["first candidate of a problem", "candidate", "far slower candidate", "pairing"]
    with turns.last():  # and with none waiting it goes at once
        assert turns.locked()
    assert not turns.locked()
