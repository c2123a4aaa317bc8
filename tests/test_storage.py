"""The study storage as a user sees it on disk, and the turn-taking of a study's trials in one process.

SQLite runs in write-ahead-log mode (kt_cli.search.storage._write_ahead): a run that ends leaves the one
NAME.study.db file, and a run that is killed loses nothing it committed."""

import os
import signal
import subprocess
import sys
import threading
import time
import types

import optuna
import pytest

from kt_cli.search.storage import open_storage

optuna.logging.set_verbosity(optuna.logging.WARNING)

WRITER = """
import os, signal, sys
import optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
from kt_cli.search.storage import open_storage
study = optuna.create_study(study_name="s", storage=open_storage(sys.argv[1]), load_if_exists=True)
study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=int(sys.argv[2]))
if sys.argv[3] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _write(url: str, trials: int, end: str) -> int:
    return subprocess.run([sys.executable, "-c", WRITER, url, str(trials), end], capture_output=True).returncode


def test_a_finished_run_leaves_only_the_database_file(tmp_path):
    url = f"sqlite:///{tmp_path / 'recipe.study.db'}"
    assert _write(url, 3, "exit") == 0
    assert sorted(os.listdir(tmp_path)) == ["recipe.study.db"]  # the log folded in when the run ended
    study = optuna.load_study(study_name="s", storage=open_storage(url))
    assert len(study.trials) == 3


def test_a_killed_run_loses_no_committed_trial(tmp_path):
    url = f"sqlite:///{tmp_path / 'recipe.study.db'}"
    assert _write(url, 4, "kill") == -signal.SIGKILL
    assert "recipe.study.db-wal" in os.listdir(tmp_path)  # the commits are in the log the kill left behind
    assert _write(url, 2, "exit") == 0  # a resumed run replays it
    study = optuna.load_study(study_name="s", storage=open_storage(url))
    assert [t.state for t in study.trials] == [optuna.trial.TrialState.COMPLETE] * 6


def test_a_trial_waiting_for_its_turn_wakes_when_one_of_this_process_decides(monkeypatch):
    """A trial waits for an undecided one before it that drew the same point; one of this process that
    decides must wake it at once, not after the waiting one's pause (here 30 s: without the wake-up the
    test times out)."""
    from kt_cli.search import objective as objective_module

    undecided = {3: "p"}
    monkeypatch.setattr(objective_module, "TURN_POLL_S", 30.0)
    monkeypatch.setattr(objective_module, "POLL_S", 60.0)
    monkeypatch.setattr(objective_module.Ledger, "read", staticmethod(lambda study: _StubLedger(undecided)))
    problem = types.SimpleNamespace()  # no observe(): nothing of other processes to hand over
    objective = objective_module.Objective(None, None, problem, None, 0, lambda r: None, {})
    returned = threading.Event()
    waiter = threading.Thread(target=lambda: (objective._my_turn(types.SimpleNamespace(number=4), "p"), returned.set()))
    started = time.monotonic()
    waiter.start()
    time.sleep(0.2)
    assert not returned.is_set()  # trial 3, ahead of it, has not decided
    undecided.clear()
    objective.decided()
    waiter.join(timeout=10)
    assert returned.is_set() and time.monotonic() - started < 10


class _StubLedger:
    """What _my_turn reads of a ledger: the undecided trials (number -> drawn point)."""

    def __init__(self, undecided: dict):
        self.undecided, self.evaluated = dict(undecided), {}

    def without(self, number):
        return _StubLedger({n: k for n, k in self.undecided.items() if n != number})


def test_only_the_first_trial_in_line_reads_the_ledger_often_and_it_sees_another_process_decide(monkeypatch):
    """What trial 3 (another process's) does can only be read from the storage: this process's first
    waiting trial reads it every TURN_POLL_S and goes on as soon as it decided; the one behind it waits
    for this process's own decisions instead of reading the storage as often (4 workers: each hand-off
    between processes cost up to half a second when every waiting trial polled on a doubling pause)."""
    from kt_cli.search import objective as objective_module

    undecided, reads, went_on = {3}, [], {}  # went_on: a trial that got its turn decides (claims)

    def read(study):  # every trial here drew the same point: none may go ahead of another
        reads.append(time.monotonic())
        return _StubLedger({n: "p" for n in undecided | ({4, 5} - set(went_on))})

    monkeypatch.setattr(objective_module, "TURN_POLL_S", 0.02)
    monkeypatch.setattr(objective_module, "POLL_S", 60.0)
    monkeypatch.setattr(objective_module.Ledger, "read", staticmethod(read))
    objective = objective_module.Objective(None, None, types.SimpleNamespace(), None, 0, lambda r: None, {})

    def wait_turn(number):
        objective._my_turn(types.SimpleNamespace(number=number), "p")
        went_on[number] = time.monotonic()

    waiters = [threading.Thread(target=wait_turn, args=(n,)) for n in (4, 5)]
    for waiter in waiters:
        waiter.start()
    time.sleep(0.5)
    # the first in line polls (0.5 s / 0.02 s); the one behind it adds no reads of its own
    assert not went_on and 10 <= len(reads) <= 0.5 / 0.02 + 3
    decided = time.monotonic()
    undecided.clear()  # another process's trial 3 decided: nothing wakes this process but its reads
    waiters[0].join(timeout=5)
    assert went_on[4] - decided < 1.0
    objective.decided()  # trial 4 decided: 5 is woken, and it is first in line now
    waiters[1].join(timeout=5)
    assert 5 in went_on


def test_the_trials_a_decision_wakes_share_one_read_of_the_study(monkeypatch):
    """Eight trials of this process wait behind another process's undecided trial 3. A decision of this
    process wakes them all; they need a read newer than the one they waited on, and one read serves
    them all (a read each held a worker's CPU at 97% with two workers on a 2x H100 host)."""
    from kt_cli.search import objective as objective_module

    reads, undecided = [], {3: "p", **{n: "p" for n in range(4, 12)}}

    def read(study):
        reads.append(time.monotonic())
        time.sleep(0.005)  # a study's read takes milliseconds: the woken trials queue for it
        return _StubLedger(undecided)

    monkeypatch.setattr(objective_module, "TURN_POLL_S", 30.0)
    monkeypatch.setattr(objective_module, "POLL_S", 30.0)
    monkeypatch.setattr(objective_module.Ledger, "read", staticmethod(read))
    objective = objective_module.Objective(None, None, types.SimpleNamespace(), None, 0, lambda r: None, {})
    waiters = [threading.Thread(target=objective._my_turn, args=(types.SimpleNamespace(number=n), "p"), daemon=True)
               for n in range(4, 12)]
    for waiter in waiters:
        waiter.start()
        time.sleep(0.02)  # each asks after the read before it: a read of its own
    time.sleep(0.2)
    assert len(reads) == 8
    objective.decided()
    time.sleep(0.3)
    assert len(reads) == 9  # not 16
    undecided.clear()  # trial 3 decided: the waiting trials go on (no thread outlives the test)
    objective.decided()
    for waiter in waiters:
        waiter.join(timeout=5)
    assert not any(waiter.is_alive() for waiter in waiters)


def test_a_trial_never_decides_on_a_read_that_began_before_it_asked(monkeypatch):
    """Sharing reads must not hand a trial a read that began before its own write (its claim): trial B
    asks while A's read is under way, and gets a read of its own that began after it asked."""
    from kt_cli.search import objective as objective_module

    began = []

    def read(study):
        began.append(time.monotonic())
        time.sleep(0.1)
        return _StubLedger({})

    monkeypatch.setattr(objective_module.Ledger, "read", staticmethod(read))
    objective = objective_module.Objective(None, None, types.SimpleNamespace(), None, 0, lambda r: None, {})
    first = threading.Thread(target=objective.ledger, args=(1,))
    first.start()
    time.sleep(0.03)  # A's read is under way
    asked = time.monotonic()
    objective.ledger(2)
    first.join()
    assert len(began) == 2 and began[1] >= asked


def _objective_on(study, limit: int):
    from kt_cli.search.ledger import Budget
    from kt_cli.search.objective import Objective

    return Objective(study, None, types.SimpleNamespace(), Budget(limit, None), 0, lambda r: None, {})


CHOICES = {"BLOCK": [32, 64, 128], "warps": [4, 8]}


def _drawn(study, point: dict):
    """A trial of `study` asked and its point drawn, undecided (it has not claimed, skipped or answered)."""
    return _draw(study, study.ask(), point)


def _draw(study, trial, point: dict):
    """`trial` draws `point` (as suggest_categorical writes a draw to the storage)."""
    for name, value in point.items():
        choices = optuna.distributions.CategoricalDistribution(CHOICES[name])
        study._storage.set_trial_param(trial._trial_id, name, choices.to_internal_repr(value), choices)
    return trial


def _turn_once_claimed(objective, trial, key: str, before):
    """`trial`'s turn, which must wait (0.3 s without it) until the trial `before` it claims its point;
    what _my_turn returned then."""
    from kt_cli.search.ledger import CLAIM

    returned = []
    waiter = threading.Thread(target=lambda: returned.append(objective._my_turn(trial, key)))
    waiter.start()
    time.sleep(0.3)
    assert not returned
    before.set_user_attr(CLAIM, before.number)
    waiter.join(timeout=10)
    return returned[0]


def test_a_trial_goes_ahead_of_undecided_ones_only_when_neither_the_point_nor_the_last_units_are_theirs():
    """A trial number is taken before the sampler draws the point; a later trial that drew a different
    point need not wait for that draw while the budget has a unit for every trial before it too."""
    from kt_cli.search.ledger import SKIPPED, point_key

    study = optuna.create_study()
    first = _drawn(study, {"BLOCK": 64})
    second = _drawn(study, {"BLOCK": 128})
    key = point_key({"BLOCK": 128})
    ledger, ahead = _objective_on(study, limit=2)._my_turn(second, key)  # a unit each: it goes ahead at once
    assert ahead == 1 and first.number in ledger.undecided

    objective = _objective_on(study, limit=1)  # one unit left: it is the first trial's if it claims
    ledger, ahead = _turn_once_claimed(objective, second, key, first)
    assert ahead == 0 and objective.budget.taken(ledger, queued_retries=True)  # it then skips
    second.set_user_attr(SKIPPED, "the rest of the budget is taken by other trials")

    third = _drawn(study, {"BLOCK": 64, "warps": 4})
    twin = _drawn(study, {"BLOCK": 64, "warps": 4})  # the same point as the undecided trial before it
    ledger, ahead = _turn_once_claimed(_objective_on(study, limit=10), twin, point_key({"BLOCK": 64, "warps": 4}),
                                       third)
    assert ahead == 0 and point_key({"BLOCK": 64, "warps": 4}) in ledger.taken  # it then skips


def test_a_claim_made_ahead_is_withdrawn_when_a_trial_before_it_drew_the_same_point_meanwhile():
    from kt_cli.search.ledger import CLAIM, Ledger, claimed, point_key

    study = optuna.create_study()
    first = study.ask()  # still drawing when the second decided
    second = _drawn(study, {"BLOCK": 128})
    objective = _objective_on(study, limit=4)
    key = point_key({"BLOCK": 128})
    assert objective._my_turn(second, key)[1] == 1
    second.set_user_attr(CLAIM, second.number)
    _draw(study, first, {"BLOCK": 128})  # ...and drew the same point before reading the ledger
    try:
        objective._confirm_claim(second, key)
        raise AssertionError("the later claim stood beside an earlier trial's draw of its point")
    except optuna.TrialPruned as why:
        assert f"trial {first.number} drew this point too" in str(why)
    ledger = Ledger.read(study, first.number)
    assert not ledger.taken and not claimed(study.get_trials(deepcopy=False)[second.number])

    third = _drawn(study, {"BLOCK": 32})  # nothing before it drew its point: its claim stands
    third.set_user_attr(CLAIM, third.number)
    objective._confirm_claim(third, point_key({"BLOCK": 32}))


def test_a_later_claim_sees_an_earlier_claim_of_its_point_made_meanwhile_and_withdraws():
    """Two trials drew one point; the later claimed ahead while the earlier had not written its draw,
    and the earlier read the study before that claim and claimed too. Reading again, the later sees
    the earlier's claim and withdraws; the earlier's claim stands; meanwhile both hold a unit each."""
    from kt_cli.search.ledger import CLAIM, Budget, Ledger, point_key

    study = optuna.create_study()
    point, key = {"BLOCK": 64, "warps": 8}, point_key({"BLOCK": 64, "warps": 8})
    first, second = _drawn(study, point), _drawn(study, point)
    first.set_user_attr(CLAIM, first.number)
    second.set_user_attr(CLAIM, second.number)
    seen_by_second = Ledger.read(study, second.number)
    assert seen_by_second.taken[key].number == first.number
    assert Budget(2, None).taken(Ledger.read(study))  # two claims, two units, though one point
    objective = _objective_on(study, limit=4)
    try:
        objective._confirm_claim(second, key)
        raise AssertionError("the later claim stood beside an earlier claim of its point")
    except optuna.TrialPruned as why:
        assert f"trial {first.number} drew this point too" in str(why)
    objective._confirm_claim(first, key)  # the earlier one keeps it
    assert [t.number for t in Ledger.read(study).taken.values()] == [first.number]


def _random_study(rng) -> list:
    """Trials of a study in every state the ledger tells apart, several often on one point: evaluated
    (some refused as invalid, some duplicates answered), claimed, undecided (drawn or drawing), skipped,
    queued (enqueued or retries), dead before or after claiming."""
    import json

    from kt_cli.search.ledger import CLAIM, SKIPPED

    state = optuna.trial.TrialState
    points = [{"BLOCK": b} for b in (32, 64, 128)]
    trials = []
    for number in range(rng.randint(1, 12)):
        point, kind = rng.choice(points), rng.choice(["evaluated", "invalid", "duplicate", "claimed", "drawn",
                                                      "drawing", "skipped", "waiting", "retry", "dead", "dead_early"])
        params, user, system, trial_state = dict(point), {}, {}, state.RUNNING
        result = json.dumps({"failure_kind": "invalid" if kind == "invalid" else "ok"})
        if kind in ("evaluated", "invalid", "duplicate"):
            trial_state, user = state.COMPLETE, {"result": result, CLAIM: number}
            if kind == "duplicate":
                user = {"result": result, "duplicate_of": 0}
        elif kind == "claimed":
            user = {CLAIM: number}
        elif kind == "drawing":
            params = {}
        elif kind == "skipped":
            user = {SKIPPED: "taken"}
        elif kind in ("waiting", "retry"):
            trial_state, params, system = state.WAITING, {}, {"fixed_params": point}
            if kind == "retry" and number:
                system = {"failed_trial": rng.randrange(number), "fixed_params": point}
        elif kind in ("dead", "dead_early"):
            trial_state, user = state.FAIL, ({CLAIM: number} if kind == "dead" else {})
        trials.append(optuna.trial.FrozenTrial(
            number=number, state=trial_state, value=None, values=None, datetime_start=None, datetime_complete=None,
            params=params, distributions={name: optuna.distributions.CategoricalDistribution([32, 64, 128])
                                          for name in params},
            user_attrs=user, system_attrs=system, intermediate_values={}, trial_id=number + 1))
    return trials


def _seen(ledger) -> dict:
    """What a trial decides on, from a ledger: which trial holds, evaluated or queues each point, the units."""
    def numbers(trials: dict) -> dict:
        return {key: t.number for key, t in trials.items()}

    return {"evaluated": numbers(ledger.evaluated), "taken": numbers(ledger.taken), "queued": numbers(ledger.queued),
            "spent": ledger.spent, "units": ledger.units_taken, "undecided": ledger.undecided}


def test_the_ledger_a_trial_sees_is_the_study_without_that_trial():
    """One read of the study serves every trial of a process (Ledger.without): what a running trial
    decides on must be the study as it would read it with itself left out, whatever the others hold,
    several trials on one point included (where one per point was kept, a later claim hid an earlier
    claim of the same point from the later trial itself, and both evaluated it)."""
    import random

    from kt_cli.search.ledger import Ledger

    rng = random.Random(0)
    for _ in range(2000):
        trials = _random_study(rng)
        for me in (t for t in trials if t.state == optuna.trial.TrialState.RUNNING):
            others = [t for t in trials if t.number != me.number]
            if any(t.system_attrs.get("failed_trial") == me.number for t in others):
                continue  # a retry of a running trial: not a study the ledger can see
            assert _seen(Ledger.of(trials).without(me.number)) == _seen(Ledger.of(others)), (me.number, trials)


def test_a_trials_draw_and_attributes_reach_the_database_in_one_transaction(tmp_path):
    """Optuna writes each parameter and attribute in a transaction of its own; kt writes a trial's
    together when the trial is about to read what others drew (or its state changes): four workers on
    one SQLite file waited for its one writer (docs/performance.md, fifth session). The parameters go
    in one statement and the attributes in another (Optuna's ORM: three queries a parameter)."""
    import sqlalchemy

    url = f"sqlite:///{tmp_path / 'study.db'}"
    storage = open_storage(url)
    study = optuna.create_study(study_name="s", storage=storage)
    writes = []
    sqlalchemy.event.listen(storage.engine, "before_cursor_execute",
                            lambda conn, cursor, statement, *rest: writes.append(statement)
                            if statement.lstrip().upper().startswith(("INSERT", "UPDATE")) else None)
    trial = study.ask()
    written = len(writes)
    for i in range(10):
        trial.suggest_categorical(f"P{i}", [1, 2])
    trial.set_user_attr("host", "h")
    assert len(writes) == written
    other = optuna.load_study(study_name="s", storage=open_storage(url))
    assert other.get_trials(deepcopy=False)[0].params == {}  # another process sees a trial still drawing
    commits = []
    sqlalchemy.event.listen(storage.engine, "commit", lambda conn: commits.append(1))
    storage.write_deferred(trial._trial_id)
    assert len(commits) == 1 and len(writes) == written + 2  # ten parameters and an attribute: one commit
    seen = optuna.load_study(study_name="s", storage=open_storage(url)).get_trials(deepcopy=False)[0]
    assert len(seen.params) == 10 and seen.user_attrs["host"] == "h"
    trial.set_user_attr("result", "r")
    study.tell(trial, 1.0)  # what is still held back is written before the trial's state changes
    done = optuna.load_study(study_name="s", storage=open_storage(url)).trials[0]
    assert done.state == optuna.trial.TrialState.COMPLETE and done.user_attrs["result"] == "r"


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not os.environ.get("KT_TEST_POSTGRES_URL"), reason="KT_TEST_POSTGRES_URL is unset (.ci/run starts a server)"))])
def test_trials_asked_at_once_are_numbered_once_each_owned_and_finished_once(tmp_path, database):
    """kt makes an asked trial, and finishes it, with SQLAlchemy Core statements (owned_storages: the ORM's
    held the database's one write lock two to three times as long). Sixteen threads asking five trials each at
    once, half through each of two storages (as two processes would), get the numbers 0-79 once each; every trial holds its number,
    this process as its owner and a heartbeat; an attribute written again holds its last value; each finishes
    once with its value, a second finish refused."""
    import uuid

    from kt_cli.processes import this_process
    from kt_cli.search.liveness import OWNER

    url = f"sqlite:///{tmp_path}/s.db" if database == "sqlite" else os.environ["KT_TEST_POSTGRES_URL"]
    name = f"numbered_{uuid.uuid4().hex[:10]}"
    storages = [open_storage(url), open_storage(url)]
    optuna.create_study(study_name=name, storage=storages[0])
    studies = [optuna.load_study(study_name=name, storage=storage) for storage in storages]
    asked = []

    def ask(study) -> None:
        go.wait()
        for _ in range(5):
            asked.append(study.ask())

    threads = [threading.Thread(target=ask, args=(studies[i % 2],)) for i in range(16)]
    go = threading.Barrier(len(threads))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(t.number for t in asked) == list(range(80))
    stored = {t._trial_id: t for t in studies[0].get_trials()}
    assert {t._trial_id: t.number for t in asked} == {i: t.number for i, t in stored.items()}
    assert all(t.system_attrs[OWNER] == this_process() for t in stored.values())
    study_id = storages[0].get_study_id_from_name(name)
    assert set(storages[0].heartbeat_ages(study_id)) == set(stored)
    first, storage = asked[0]._trial_id, storages[0]
    for value in (1, 2):  # an attribute written again replaces what it held (an upsert on SQLite and PostgreSQL)
        storage.set_trial_user_attr(first, "claim", value)
        storage.write_deferred(first)
        storage.set_trial_system_attr(first, OWNER, {"pid": value})
    again = storages[1].get_trial(first)
    assert again.user_attrs["claim"] == 2 and again.system_attrs[OWNER] == {"pid": 2}
    for trial in asked:
        assert trial.study._storage.set_trial_state_values(trial._trial_id, optuna.trial.TrialState.COMPLETE,
                                                           [float(trial.number)])
    with pytest.raises(RuntimeError):
        storages[1].set_trial_state_values(asked[0]._trial_id, optuna.trial.TrialState.COMPLETE, [0.0])
    assert sorted(t.value for t in studies[1].get_trials()) == [float(n) for n in range(80)]


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not os.environ.get("KT_TEST_POSTGRES_URL"), reason="KT_TEST_POSTGRES_URL is unset (.ci/run starts a server)"))])
def test_trials_read_without_the_orm_are_the_trials_optuna_reads(tmp_path, database):
    """kt reads a study's trials with SQLAlchemy Core (owned_storages.CoreTrialReads; the ORM's re-read
    of the running trials was most of a worker's CPU with four workers): every kind of content a trial
    holds comes back as Optuna's own read gives it, for a whole read, a read of some states, and the
    cached storage's re-read of the unfinished trials and those after the last finished one."""
    import json
    import uuid

    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
    from optuna.storages import RDBStorage
    from optuna.trial import TrialState

    url = f"sqlite:///{tmp_path}/s.db" if database == "sqlite" else os.environ["KT_TEST_POSTGRES_URL"]
    storage = open_storage(url)
    study = optuna.create_study(study_name=f"core_reads_{uuid.uuid4().hex[:10]}", storage=storage)
    space = {"f": FloatDistribution(0, 1), "lf": FloatDistribution(1e-3, 1, log=True),
             "i": IntDistribution(1, 9, step=2), "c": CategoricalDistribution([16, "a", None, 2.5])}
    ends = [None, 0.25, TrialState.FAIL, TrialState.PRUNED, float("inf"), None]
    for n in range(18):
        trial = study.ask(space)
        trial.set_user_attr("result", json.dumps({"failure_kind": "ok", "n": n}))
        trial.set_user_attr("evaluating", trial.number)
        storage.set_trial_system_attr(trial._trial_id, "owner", {"pid": n, "host": "h"})
        if n % 3 == 0:
            trial.report(0.5 * n, step=1)
            trial.report(float("-inf"), step=2)
        end = ends[n % len(ends)]
        if isinstance(end, TrialState):
            study.tell(trial, state=end)
        elif end is not None:
            study.tell(trial, end)
        else:
            storage.write_deferred(trial._trial_id)  # running, its point claimed
    study.enqueue_trial({"f": 0.5, "c": None})
    trials = RDBStorage._get_trials(storage, study._study_id, None, set(), -1)
    running = {t._trial_id for t in trials if not t.state.is_finished()}
    last = max(t._trial_id for t in trials if t.state.is_finished())
    assert running and any(t.state == TrialState.WAITING for t in trials)
    for states, included, after in ((None, set(), -1), ([TrialState.COMPLETE, TrialState.RUNNING], set(), -1),
                                    (None, running, last), (None, set(), last)):
        ours = storage._get_trials(study._study_id, states, included, after)
        theirs = RDBStorage._get_trials(storage, study._study_id, states, included, after)
        assert ours == theirs and [t._trial_id for t in ours] == [t._trial_id for t in theirs]
        assert [t.distributions for t in ours] == [t.distributions for t in theirs]


def test_a_write_sqlite_refused_as_locked_is_run_again_and_lands_once(tmp_path, monkeypatch):
    """In write-ahead-log mode SQLite refuses at once a transaction that read and then writes after
    another connection committed (no busy wait helps): kt's storages run such a write again. Here the
    database refuses a trial's creation, its deferred parameters and its finish once each; the study
    still ends with exactly one complete trial holding its parameter and value. Any other error is not
    retried."""
    import sqlalchemy.exc
    from optuna.exceptions import StorageInternalError
    from optuna.storages import RDBStorage

    from kt_cli.search import owned_storages

    def refused_once(method):
        calls = []

        def refusing(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == 1:
                try:
                    raise sqlalchemy.exc.OperationalError("INSERT", {}, Exception("database is locked"))
                except sqlalchemy.exc.OperationalError as exc:
                    raise StorageInternalError("An exception is raised during the commit.") from exc
            return method(self, *args, **kwargs)
        return refusing, calls

    create, created = refused_once(owned_storages.KtRDBStorage._insert_asked_trial)
    finish, finished = refused_once(owned_storages.OneStepStates.set_trial_state_values)
    write, written = refused_once(owned_storages.DeferredTrialWrites._write_pending)
    monkeypatch.setattr(owned_storages.KtRDBStorage, "_insert_asked_trial", create)
    monkeypatch.setattr(owned_storages.OneStepStates, "set_trial_state_values", finish)
    monkeypatch.setattr(owned_storages.DeferredTrialWrites, "_write_pending", write)
    study = optuna.create_study(study_name="s", storage=open_storage(f"sqlite:///{tmp_path}/s.db"))
    study.optimize(lambda t: t.suggest_int("x", 0, 9) * 0.5, n_trials=1)
    assert len(created) == 2 and len(finished) >= 2 and len(written) == 2
    (trial,) = study.get_trials()
    assert trial.state == optuna.trial.TrialState.COMPLETE and trial.value == trial.params["x"] * 0.5

    def failing(self, *args, **kwargs):
        raise StorageInternalError("An exception is raised during the commit.") from ValueError("too long")

    monkeypatch.setattr(owned_storages.KtRDBStorage, "_insert_asked_trial", failing)
    with pytest.raises(StorageInternalError):
        study.ask()


def test_a_write_refused_as_locked_for_seconds_lands_while_its_patience_lasts(tmp_path, monkeypatch):
    """Eighteen threads writing one study on a loaded 2-core host saw one write refused as locked six
    times running (0.6 s of retries), and the run died. A write goes on being run again for as long as
    the busy timeout would have waited: a study's attributes refused for 1.5 s land, each written once;
    refused past its patience, the error reaches the caller."""
    import sqlalchemy.exc
    from optuna.exceptions import StorageInternalError
    from optuna.storages import RDBStorage

    from kt_cli.search import owned_storages

    refuse_until = time.monotonic() + 1.5
    tries = []

    def refusing(self, study_id, key, value):
        tries.append(key)
        if time.monotonic() < refuse_until:
            try:
                raise sqlalchemy.exc.OperationalError("INSERT", {}, Exception("database is locked"))
            except sqlalchemy.exc.OperationalError as exc:
                raise StorageInternalError("An exception is raised during the commit.") from exc
        return original(self, study_id, key, value)

    original = RDBStorage.set_study_user_attr
    monkeypatch.setattr(RDBStorage, "set_study_user_attr", refusing)
    study = optuna.create_study(study_name="s", storage=open_storage(f"sqlite:///{tmp_path}/s.db"))
    study.set_user_attr("budget", 8)
    assert len(tries) > 6 and study.user_attrs == {"budget": 8}

    refuse_until = time.monotonic() + 60
    monkeypatch.setattr(owned_storages, "LOCK_PATIENCE_S", 0.3)
    started = time.monotonic()
    with pytest.raises(StorageInternalError):
        study.set_user_attr("budget_trials", 8)
    assert time.monotonic() - started < 5 and "budget_trials" not in study.user_attrs


def test_a_read_of_more_trial_ids_than_a_query_may_bind_gets_the_chosen_trials(tmp_path):
    """A study's running trials are re-read by id (an IN list); SQLite binds at most 32766 values in one
    query. kt's read binds none (the ids are written into its SQL), so a list longer than that still reads
    exactly the trials Optuna's own read gives."""
    from optuna.storages import RDBStorage

    storage = open_storage(f"sqlite:///{tmp_path}/s.db")
    study = optuna.create_study(study_name="s", storage=storage)
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=6)
    for _ in range(3):
        storage.write_deferred(study.ask({"x": optuna.distributions.FloatDistribution(0, 1)})._trial_id)
    trials = RDBStorage._get_trials(storage, study._study_id, None, set(), -1)
    running = {t._trial_id for t in trials if not t.state.is_finished()}
    last = max(t._trial_id for t in trials if t.state.is_finished())
    included = running | {trials[0]._trial_id} | set(range(-40000, 0))
    chosen = storage._get_trials(study._study_id, None, included, last - 2)
    assert chosen == RDBStorage._get_trials(storage, study._study_id, None, included, last - 2)
    assert 0 < len(chosen) < len(trials)
    assert {t._trial_id for t in chosen} >= running | {trials[0]._trial_id}

def test_threads_looking_at_once_share_reads_and_each_sees_what_was_written_before_it_looked(tmp_path, monkeypatch):
    """Every look at a study re-read its running trials, one thread at a time; a process's threads now
    share a read (shared_reads.SharedReadsStorage), but only one that began after the look was asked
    for: a trial written by another process before a thread looks is in what that thread sees."""
    from optuna.storages._cached_storage import _CachedStorage

    from kt_cli.search.shared_reads import shared_reads

    url = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(study_name="s", storage=shared_reads(open_storage(url)))
    other = optuna.load_study(study_name="s", storage=open_storage(url))  # another process's view
    reads, slow = [], threading.Event()
    inner = _CachedStorage._read_trials_from_remote_storage

    def counted(self, study_id):
        reads.append(1)
        if slow.is_set():
            time.sleep(0.05)  # a read long enough for the other threads to arrive during it
        inner(self, study_id)

    monkeypatch.setattr(_CachedStorage, "_read_trials_from_remote_storage", counted)
    for _ in range(3):
        other.ask()
    seen, start = [], threading.Barrier(16)
    slow.set()

    def look():
        start.wait()
        seen.append(len(study.get_trials(deepcopy=False)))

    threads = [threading.Thread(target=look) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [3] * 16  # every look holds the three trials written before it
    assert len(reads) < 16 / 2  # and sixteen looks at once took a few reads, not sixteen
    slow.clear()
    other.ask()
    assert len(study.get_trials(deepcopy=False)) == 4  # a later look reads again: the fourth is there


def test_an_asks_looks_share_one_read_while_what_kt_decides_on_holds_every_earlier_write(tmp_path, monkeypatch):
    """Optuna's looks in an ask (a queued trial, TPE's space, its draw) decide nothing and now share a
    read (shared_reads.recent_reads); kt's ledger, which decides, still reads anew inside them and sees
    a trial another process wrote a moment before."""
    from optuna.storages._cached_storage import _CachedStorage

    from kt_cli.search import shared_reads as sr
    from kt_cli.search.ledger import Ledger

    url = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(study_name="s", storage=sr.shared_reads(open_storage(url)))
    other = optuna.load_study(study_name="s", storage=open_storage(url))  # another process's view
    reads = []
    inner = _CachedStorage._read_trials_from_remote_storage
    monkeypatch.setattr(_CachedStorage, "_read_trials_from_remote_storage",
                        lambda self, study_id: (reads.append(1) if self is study._storage else None,
                                                inner(self, study_id)))
    monkeypatch.setattr(sr, "RECENT_S", 0.0)  # only the ask's own earlier look counts as recent here
    other.ask()
    with sr.recent_reads():
        assert len(study.get_trials(deepcopy=False)) == 1 and len(reads) == 1
        other.ask()
        assert len(study.get_trials(deepcopy=False)) == 1 and len(reads) == 1  # the ask's read, again
        assert len(Ledger.read(study).undecided) == 2 and len(reads) == 2  # the ledger reads anew
    with sr.recent_reads():  # the next ask reads again
        other.ask()
        assert len(study.get_trials(deepcopy=False)) == 3 and len(reads) == 3
    other.ask()
    assert len(study.get_trials(deepcopy=False)) == 4  # outside them, every look reads


def test_the_trials_that_evaluated_nothing_are_counted_apart_from_those_that_did(tmp_path):
    """benchmarks/scale.py and search_scaling.py report, beside the rate, the trials that held a slot
    and evaluated nothing: a duplicate answered from an earlier result, a trial skipped."""
    from kt_cli.search.ledger import SKIPPED
    from kt_cli.search.storage import evaluated, idle

    study = optuna.create_study(study_name="s", storage=open_storage(f"sqlite:///{tmp_path / 'study.db'}"))
    for attrs in ({"result": "{}"}, {"result": "{}", "duplicate_of": 0}, {SKIPPED: "trial 0 has this point"}):
        trial = study.ask()
        for key, value in attrs.items():
            trial.set_user_attr(key, value)
        study.tell(trial, 1.0)
    assert idle(study) == {"duplicates": 1, "skipped": 1} and len(evaluated(study)) == 1
