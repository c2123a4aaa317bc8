"""Scale-out: several `kt tune` processes share one study in a real PostgreSQL server, a worker killed
mid-trial has its trial retried by another, and `--workers` pins each worker to its own GPU."""

import json
import os
import signal
import subprocess
import time
import uuid

import pytest

from tests.helpers import KT_COMMAND, process_env

POSTGRES_URL = os.environ.get("KT_TEST_POSTGRES_URL")
needs_postgres = pytest.mark.skipif(
    not POSTGRES_URL, reason="KT_TEST_POSTGRES_URL is unset: no PostgreSQL server (.ci/run starts one)")
TRIALS = 6
RECIPE = """
[kernel]
generator = "templates"
name = "softmax"

[problem]
dtype = "bfloat16"
shapes = [{{M = 4096, N = 4096}}]

[search]
trials = 12
sampler = "tpe"
seed = 0
timeout = 120

[search.space]
BLOCK_N = [512, 1024, 2048, 4096, 8192]
num_warps = [2, 4, 8, 16]
num_stages = [1, 2, 3]

[output]
name = "{name}"
"""


def _recipe(tmp_path):
    """A one-shape softmax recipe with a name of its own, so each test starts a fresh study."""
    name = f"scale_{uuid.uuid4().hex[:10]}"
    path = tmp_path / f"{name}.toml"
    path.write_text(RECIPE.format(name=name))
    return name, path


def _start_tune(recipe, out_dir, *extra):
    env = process_env(PYTHONWARNINGS="ignore")
    cmd = [*KT_COMMAND, "tune", str(recipe),
           "--target", "nvidia:sm_90", "--trials", str(TRIALS), "--storage", POSTGRES_URL, "--out", str(out_dir),
           *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _study(name):
    import optuna

    from kt_cli.search.storage import open_storage

    storage = open_storage(POSTGRES_URL)
    names = [s.study_name for s in optuna.get_all_study_summaries(storage, include_best_trial=False)
             if s.study_name.startswith(name + "|")]
    return optuna.load_study(study_name=names[0], storage=storage) if names else None


def _evaluated(study):
    from kt_cli.search.storage import evaluated

    return evaluated(study)


def _finish(procs, timeout=400):
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        outs.append((proc.returncode, out, err))
    return outs


def _check_budget_spent_once(name, tmp_path, survivors):
    """Exactly TRIALS distinct points evaluated; one artifact, written by one process; the others say so."""
    study = _study(name)
    done = _evaluated(study)
    assert len(done) == TRIALS
    assert len({json.dumps(t.params, sort_keys=True) for t in done}) == TRIALS
    for code, out, err in survivors:
        assert code == 0, err[-2000:]
    written = sorted(tmp_path.glob("out*/*.kt"))
    assert len(written) == 1
    assert sum("written by another process" in out for _, out, _ in survivors) == len(survivors) - 1
    manifest = json.loads((written[0] / "manifest.json").read_text())
    kinds = manifest["results"][0]["failures"]
    assert sum(n for kind, n in kinds.items() if kind != "invalid") == TRIALS
    assert "kt:kt@" not in manifest["storage"]  # the password stays out of the shipped artifact
    return study, done


def _history(trials) -> str:
    """Every trial's state, point and bookkeeping, for a failure message."""
    return "\n".join(f"#{t.number} {t.state.name} {t.params or t.system_attrs.get('fixed_params')} "
                     f"user={ {k: v for k, v in t.user_attrs.items() if k != 'result'} } "
                     f"system={ {k: v for k, v in t.system_attrs.items() if k != 'kt_owner'} }" for t in trials)


@needs_postgres
def test_three_processes_share_one_study_without_losing_or_repeating_a_trial(tmp_path):
    name, recipe = _recipe(tmp_path)
    procs = [_start_tune(recipe, tmp_path / f"out{i}") for i in range(3)]
    try:
        outs = _finish(procs)
    finally:
        for proc in procs:
            proc.kill()
    study, done = _check_budget_spent_once(name, tmp_path, outs)
    assert len({t.user_attrs["pid"] for t in done}) >= 2  # the work was shared
    results = [json.loads(t.user_attrs["result"]) for t in done]
    assert {r["worker"]["pid"] for r in results} == {t.user_attrs["pid"] for t in done}


@needs_postgres
def test_worker_killed_mid_trial_has_its_trial_retried_by_another(tmp_path):
    import optuna

    from kt_cli.search.ledger import CLAIM

    name, recipe = _recipe(tmp_path)
    procs = {}
    for i in range(3):
        proc = _start_tune(recipe, tmp_path / f"out{i}")
        procs[proc.pid] = proc
    try:
        victim, killed = None, None
        deadline = time.monotonic() + 300
        while victim is None and time.monotonic() < deadline:
            study = _study(name)
            running = [] if study is None else study.get_trials(deepcopy=False,
                                                                states=(optuna.trial.TrialState.RUNNING,))
            for t in running:
                # a first attempt: a retry (of a trial whose heartbeat went stale on a loaded machine) is
                # not retried again, by design
                first = "failed_trial" not in t.system_attrs
                if t.user_attrs.get(CLAIM) == t.number and t.user_attrs.get("pid") in procs and first:
                    victim, killed = procs.pop(t.user_attrs["pid"]), t.number
                    victim.send_signal(signal.SIGKILL)
                    break
            time.sleep(0.2)
        assert victim is not None, "no process started evaluating a candidate within 300 s"
        victim.wait()
        outs = _finish(procs.values())
    finally:
        for proc in procs.values():
            proc.kill()
    study, done = _check_budget_spent_once(name, tmp_path, outs)
    trials = study.get_trials(deepcopy=False)
    dead = trials[killed]
    assert dead.state == optuna.trial.TrialState.FAIL and "result" not in dead.user_attrs
    retries = [t for t in done if t.system_attrs.get("failed_trial") == killed]
    assert len(retries) == 1 and retries[0].params == dead.params, _history(trials)
    assert retries[0].user_attrs["pid"] in procs

    from click.testing import CliRunner

    from kt_cli.cli import cli
    from kt_cli.plugins import load_plugins

    load_plugins().hook.kt_register_commands(cli=cli)
    artifact = next(tmp_path.glob("out*/*.kt"))
    shown = CliRunner().invoke(cli, ["status", str(artifact), "--storage", POSTGRES_URL])
    assert shown.exit_code == 0, shown.output
    assert f"evaluated {TRIALS} of {TRIALS}" in shown.output
    victim_row = next(line.split() for line in shown.output.splitlines() if f" {victim.pid} " in f" {line} ")
    # its trials in flight (one per compile worker, plus one) failed; nothing is left running
    assert int(victim_row[-2]) >= 1 and victim_row[-1] == "0"
    assert "best: ~" in shown.output and "(est)" in shown.output
    unknown = CliRunner().invoke(cli, ["status", str(artifact)])  # the artifact keeps no password
    assert unknown.exit_code == 2 and "pass --storage URL" in unknown.output


def _problem(space, evaluate, mode: str = "estimated", **more):
    """What the driver asks of a study's problem (kt_cli.search.studies.ProblemPlan): its space, the
    constraint environment of a point, evaluate(params) and invalid_result(params, why)."""
    import types

    from kt_cli.types import TrialResult

    return types.SimpleNamespace(space=space, env=lambda p: p, evaluate=evaluate, **more,
                                 invalid_result=lambda p, why: TrialResult("invalid", p, "nvidia:sm_90", {"M": 1}, mode))


def _blocks_and_warps():
    """A 24-point space and an evaluate(params) factory whose candidates take `seconds` each."""
    from kt_cli.recipe.space import SearchSpace, parse_param
    from kt_cli.types import TrialResult

    space = SearchSpace((parse_param("BLOCK", [16, 32, 64, 128, 256, 512], "t"),
                         parse_param("warps", [1, 2, 4, 8], "t")), ())

    def taking(seconds: float):
        def evaluate(params):
            time.sleep(seconds)
            return TrialResult("ok", params, "nvidia:sm_90", {"M": 1}, "estimated", value=params["BLOCK"] * 1e-6)
        return evaluate
    return space, taking


def _drive_together(url: str, problem, budget: int, seeds: list, in_flight: int = 1) -> list:
    """Drive study "s" of `url` from one thread per seed, each with its own storage as a process would
    have; the study's evaluated trials once all are done (an error in any thread is raised here)."""
    import threading

    import optuna

    from kt_cli.search.driver import StudyRun
    from kt_cli.search.storage import evaluated, open_storage

    errors = []

    def drive(seed):
        try:
            StudyRun("s", open_storage(url), problem, budget=budget, sampler="random", seed=seed).run(None, in_flight)
        except BaseException as exc:  # reported below: a thread's exception would be lost
            errors.append(exc)

    threads = [threading.Thread(target=drive, args=(seed,)) for seed in seeds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    import traceback

    assert not errors, "".join(line for exc in errors for line in traceback.format_exception(exc))
    return evaluated(optuna.load_study(study_name="s", storage=open_storage(url)))


def test_concurrent_drivers_take_exactly_the_budget_of_distinct_points(tmp_path):
    """Four drivers of one study, slow candidates, a budget that does not divide among them: nobody
    overshoots the budget or evaluates a point another one has."""
    space, taking = _blocks_and_warps()
    url = f"sqlite:///{tmp_path / 'study.db'}"
    done = _drive_together(url, _problem(space, taking(0.3)), budget=5, seeds=list(range(4)))
    assert len(done) == 5
    assert len({json.dumps(t.params, sort_keys=True) for t in done}) == 5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_drivers_deciding_ahead_of_each_other_take_exactly_the_budget_of_distinct_points(tmp_path, monkeypatch, seed):
    """Six drivers of three trials in flight each on a 12-point space, each draw slow as TPE's under
    load: trials decide ahead of earlier undecided ones all the time, and near the end of the budget
    they must not; random draws repeat points often. Nobody overshoots the budget or evaluates a point
    twice."""
    import random

    from kt_cli.recipe.space import Param, SearchSpace, parse_param
    from kt_cli.search.ledger import Ledger
    from kt_cli.search.objective import Objective
    from kt_cli.types import TrialResult

    space = SearchSpace((parse_param("BLOCK", [16, 32, 64, 128, 256, 512], "t"),
                         parse_param("warps", [4, 8], "t")), ())
    BUDGET = 8
    pause = random.Random(seed)
    went_ahead = []
    confirm = Objective._confirm_claim
    monkeypatch.setattr(Objective, "_confirm_claim", lambda self, trial, key: (went_ahead.append(trial.number),
                                                                               confirm(self, trial, key)))
    suggest, read = Param.suggest, Ledger.read
    monkeypatch.setattr(Param, "suggest", lambda self, trial: (time.sleep(pause.uniform(0, 0.03)),
                                                               suggest(self, trial))[1])
    # what a trial read is old news by the time it writes (a shared server's latency, a loaded host)
    monkeypatch.setattr(Ledger, "read", staticmethod(lambda study, me=None: (read(study, me),
                                                                             time.sleep(pause.uniform(0, 0.02)))[0]))

    def evaluate(params):
        time.sleep(pause.uniform(0.1, 0.4))
        return TrialResult("ok", params, "nvidia:sm_90", {"M": 1}, "estimated", value=params["BLOCK"] * 1e-6)

    # a fresh study a round, until one exercised deciding ahead (the timing of a loaded host may not)
    for round_ in range(4):
        url = f"sqlite:///{tmp_path / f'study{round_}.db'}"
        done = _drive_together(url, _problem(space, evaluate), budget=BUDGET,
                               seeds=[seed * 10 + round_ * 100 + driver for driver in range(6)], in_flight=3)
        assert len(done) == BUDGET
        assert len({json.dumps(t.params, sort_keys=True) for t in done}) == BUDGET
        if went_ahead:
            break
    assert went_ahead  # the test exercised deciding ahead


def test_near_a_budget_end_no_trial_starts_that_the_budget_cannot_take(tmp_path):
    """Two processes each driving three studies side by side, four slots and four trials in flight a
    study: a trial that starts once its study's last units are taken, or are being decided, evaluates
    nothing (skipped: an ask and a turn in a slot for nothing)."""
    import threading

    import optuna

    from kt_cli.search.driver import StudyRun
    from kt_cli.search.fair_slots import FairSlots
    from kt_cli.search.storage import evaluated, idle, open_storage
    from kt_cli.search.studies import _run_at_once

    space, taking = _blocks_and_warps()
    url = f"sqlite:///{tmp_path / 'study.db'}"

    def process(seed):
        store, slots = open_storage(url), FairSlots(4)
        runs = [StudyRun(f"s{i}", store, _problem(space, taking(0.1)), budget=6, sampler="random", seed=seed + i,
                         slots=slots) for i in range(3)]
        _run_at_once(runs, [None] * 3, 4)

    threads = [threading.Thread(target=process, args=(seed,)) for seed in (0, 10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    studies = [optuna.load_study(study_name=f"s{i}", storage=open_storage(url)) for i in range(3)]
    assert [len(evaluated(study)) for study in studies] == [6, 6, 6]
    # counting the units only (the budget read before the slot, deciding trials not counted): 12-13
    assert sum(idle(study)["skipped"] for study in studies) <= 4


def test_a_driver_hands_its_problem_what_other_processes_evaluated(tmp_path):
    """What another process sharing the study measured reaches this process's evaluator (its best races
    this process's candidates); this process's own results are not handed back."""
    import optuna

    from kt_cli.recipe.space import SearchSpace, parse_param
    from kt_cli.search.driver import StudyRun
    from kt_cli.search.ledger import CLAIM
    from kt_cli.search.storage import open_storage
    from kt_cli.types import TrialResult

    space = SearchSpace((parse_param("BLOCK", [16, 32, 64, 128], "t"),), ())
    url = f"sqlite:///{tmp_path / 'study.db'}"
    theirs = TrialResult("ok", {"BLOCK": 16}, "nvidia:sm_90", {"M": 1}, "measured", value=2e-6)
    study = optuna.create_study(study_name="s", storage=open_storage(url), direction="minimize")
    trial = study.ask()
    trial.suggest_categorical("BLOCK", [16, 32, 64, 128])
    for key, value in {"host": "another-host", "pid": 1, CLAIM: trial.number,
                       "result": json.dumps(theirs.to_json())}.items():
        trial.set_user_attr(key, value)
    study.tell(trial, 2e-6)
    seen = []
    problem = _problem(space, lambda p: TrialResult("ok", p, "nvidia:sm_90", {"M": 1}, "measured",
                                                     value=p["BLOCK"] * 1e-6), "measured", observe=seen.append)
    StudyRun("s", open_storage(url), problem, budget=3, sampler="random", seed=0).run(None)
    assert [r.params for r in seen] == [{"BLOCK": 16}]


def test_workers_share_the_default_study_and_the_parent_writes_the_artifact(tmp_path):
    """Static mode (no GPU): `--workers 2` runs two evaluators on the CPU against one study."""
    import optuna

    from kt_cli.search.storage import evaluated, open_storage

    name, recipe = _recipe(tmp_path)
    env = process_env(PYTHONWARNINGS="ignore")
    done = subprocess.run([*KT_COMMAND, "tune", str(recipe),
                           "--target", "nvidia:sm_90", "--trials", str(TRIALS), "--workers", "2",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"wrote {tmp_path / 'out' / name}.kt" in done.stdout
    storage = open_storage(f"sqlite:///{tmp_path / 'out' / name}.study.db")
    (study_name,) = [s.study_name for s in optuna.get_all_study_summaries(storage, include_best_trial=False)]
    trials = evaluated(optuna.load_study(study_name=study_name, storage=storage))
    assert len(trials) == TRIALS
    assert len({json.dumps(t.params, sort_keys=True) for t in trials}) == TRIALS
    assert len({t.user_attrs["pid"] for t in trials}) == 2


class FakeGpus:
    """A vendor plugin with two devices present, pinned through a variable of its own."""

    from kt_cli.hookspecs import hookimpl

    @hookimpl
    def kt_register_vendors(self, register):
        from kt_cli.types import Device
        from kt_cli.vendor import Vendor

        class TwoGpus(Vendor):
            name = "fakevendor"

            def detect_devices(self):
                return [Device("fakevendor", i, "Fake GPU", "fakevendor:x1") for i in range(2)]

            def pin_env(self, device):
                return {"FAKE_VISIBLE_DEVICES": str(device.index)}

        register(TwoGpus())


def test_workers_are_pinned_one_per_gpu_through_the_vendor_plugin(plugin):
    from kt_cli.errors import BadInput
    from kt_cli.search.scale import worker_count, worker_pins

    assert worker_count("auto") == 1  # no GPU on this host
    plugin(FakeGpus(), "fake-gpus")
    assert worker_count("auto") == 2
    assert [env for env, _ in worker_pins(2)] == [{"FAKE_VISIBLE_DEVICES": "0"}, {"FAKE_VISIBLE_DEVICES": "1"}]
    assert [[d.index for d in seen] for _, seen in worker_pins(2)] == [[0], [1]]  # the base Vendor's view
    with pytest.raises(BadInput, match="3 workers need 3 GPUs"):
        worker_pins(3)
    with pytest.raises(BadInput, match="--workers: must be a positive number or auto"):
        worker_count("0")


def test_nvidia_and_amd_pin_with_their_own_variables():
    from kt_cli.plugins import vendor
    from kt_cli.types import Device

    assert vendor("nvidia").pin_env(Device("nvidia", 1, "H100", "nvidia:sm_90")) == {"CUDA_VISIBLE_DEVICES": "1"}
    assert vendor("amd").pin_env(Device("amd", 3, "MI300X", "amd:gfx942")) == {"HIP_VISIBLE_DEVICES": "3"}
    # a process so pinned sees its one device as the first, as the runtime would number it
    assert vendor("nvidia").pinned_view(Device("nvidia", 1, "H100", "nvidia:sm_90")).index == 0
    mi300x = Device("amd", 3, "MI300X", "amd:gfx942")
    assert vendor("amd").pinned_view(mi300x) == Device("amd", 0, "MI300X", "amd:gfx942")


def test_journal_study_retries_a_trial_left_running_by_a_dead_process(tmp_path):
    """Journal files have no heartbeats: a trial whose owner on this machine is gone is failed and retried."""
    import optuna

    from kt_cli.recipe.parse import load_recipe
    from kt_cli.processes import MACHINE
    from kt_cli.search.ledger import CLAIM
    from kt_cli.search.liveness import OWNER
    from kt_cli.search.storage import evaluated
    from kt_cli.tune import tune

    _, recipe_path = _recipe(tmp_path)
    recipe = load_recipe(recipe_path)
    journal = str(tmp_path / "study.log")
    tune(recipe, ("nvidia:sm_90",), trials=2, out_dir=tmp_path / "out", storage=journal)
    storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(journal))
    (name,) = [s.study_name for s in optuna.get_all_study_summaries(storage, include_best_trial=False)
               if not s.study_name.startswith("kt-artifact|")]
    study = optuna.load_study(study_name=name, storage=storage)
    tried = [t.params for t in evaluated(study)]
    point = next(p for p in ({"BLOCK_N": 4096, "num_warps": 4, "num_stages": 2},
                             {"BLOCK_N": 2048, "num_warps": 4, "num_stages": 1},
                             {"BLOCK_N": 8192, "num_warps": 8, "num_stages": 3}) if p not in tried)
    study.enqueue_trial(point)
    lost = study.ask()
    space = {"BLOCK_N": [512, 1024, 2048, 4096, 8192], "num_warps": [2, 4, 8, 16], "num_stages": [1, 2, 3]}
    for name, choices in space.items():
        lost.suggest_categorical(name, choices)
    gone = subprocess.Popen(["true"])
    gone.wait()
    lost.set_user_attr(CLAIM, lost.number)
    storage.set_trial_system_attr(lost._trial_id, OWNER, {"machine": MACHINE, "pid": gone.pid, "started": None})

    path, _, tally = tune(recipe, ("nvidia:sm_90",), trials=3, out_dir=tmp_path / "out", storage=journal)

    assert tally.written_by is None and (path / "manifest.json").is_file()
    trials = study.get_trials(deepcopy=False)
    assert trials[lost.number].state == optuna.trial.TrialState.FAIL
    done = evaluated(study)
    assert len(done) == 3
    assert [t.params for t in done if t.system_attrs.get("failed_trial") == lost.number] == [point]


def test_the_compile_pool_takes_the_hosts_cores_shared_by_its_kt_processes_within_memory(monkeypatch):
    from kt_cli.evaluate import evaluator

    monkeypatch.setattr(evaluator.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    monkeypatch.setattr(evaluator, "_available_memory_bytes", lambda: 64 << 30)
    assert evaluator.compile_pool_size() == 14  # 16 cores less the CLI's search and the device's workers
    assert evaluator.compile_pool_size(processes_on_host=2) == 7  # `kt tune --workers 2` share them
    monkeypatch.setattr(evaluator, "_available_memory_bytes", lambda: 5 << 30)
    assert evaluator.compile_pool_size() == 5  # a worker's gigabyte each
    monkeypatch.setattr(evaluator.os, "sched_getaffinity", lambda pid: set(range(2)), raising=False)
    assert evaluator.compile_pool_size() == 2  # never fewer than two: one slow compile stops no one
    monkeypatch.setattr(evaluator.os, "sched_getaffinity", lambda pid: set(range(128)), raising=False)
    monkeypatch.setattr(evaluator, "_available_memory_bytes", lambda: 0)  # not readable: cores alone
    assert evaluator.compile_pool_size() == evaluator.COMPILE_WORKERS_MAX


def test_the_compile_pool_yields_the_cpu_to_the_workers_on_the_device_path(write, tmp_path):
    """The compile pool fills the host's cores; the device's worker (whose host thread launches what is
    timed) and the judge must not wait behind it for a core: the compile workers run niced."""
    from kt_cli.evaluate.evaluator import COMPILE_NICENESS, Evaluator
    from kt_cli.kernel import KernelSource
    from kt_cli.recipe.parse import load_recipe
    from tests.helpers import dsl_recipe

    recipe = load_recipe(dsl_recipe(write))
    evaluator = Evaluator(KernelSource(str(tmp_path / "kernel.py"), "dsl", "kernel"), recipe, [], 60,
                          compile_workers=2)
    try:
        compiler, interpreter = evaluator.compile_pool.workers[0], evaluator.interpreter.workers[0]
        for worker in (compiler, interpreter):
            worker.ensure_started()
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, compiler._proc.pid) == min(19, mine + COMPILE_NICENESS)
        assert os.getpriority(os.PRIO_PROCESS, interpreter._proc.pid) == mine
    finally:
        evaluator.close()


def test_a_run_refused_after_its_workers_started_leaves_no_process_and_no_file(tmp_path):
    """`kt tune --workers N` starts its workers while it detects the devices (scale.EarlyWorkers); a
    refusal found then (here an unknown vendor) still ends in one line and exit 2, and the workers,
    which had no job yet, are gone with their fork servers."""
    from tests.helpers import SCALED_ADD, dsl_recipe_text, kt_process, wait_until_gone

    (tmp_path / "kernel.py").write_text(SCALED_ADD)
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(dsl_recipe_text())
    (tmp_path / "tmp").mkdir()
    result = kt_process("tune", recipe, "--workers", "2", "--target", "nosuch:arch", "--out", tmp_path / "out",
                        env={"TMPDIR": str(tmp_path / "tmp")}, timeout=120)
    assert result.returncode == 2 and "unknown vendor" in result.stderr, result.stderr
    assert not wait_until_gone(tmp_path / "tmp", 10)
    assert not (tmp_path / "out").exists()


def _report_switch_interval(scratch: str, report: str) -> None:
    import sys

    from kt_cli.evaluate.pool import enter_worker

    enter_worker(dict(os.environ), scratch, os.path.join(scratch, "output.txt"), os.getppid())
    with open(report, "w") as sink:
        sink.write(repr(sys.getswitchinterval()))


def test_kts_processes_and_their_workers_hand_work_between_threads_within_a_millisecond(tmp_path):
    """A thread woken by another waits for the GIL up to the switch interval: 5 ms by default, which held the
    device idle between two candidates' requests (kt_cli.hand_offs). kt's command-line processes and every
    worker they start run at 1 ms; the test's own process keeps its own."""
    import multiprocessing
    import sys

    from kt_cli.hand_offs import SWITCH_INTERVAL_S

    script = ("import atexit, sys; atexit.register(lambda: sys.stderr.write(f'interval {sys.getswitchinterval()!r}'));"
              " from kt_cli.cli import main; sys.argv = ['kt', '--help']; main()")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=process_env(), timeout=120)
    assert done.returncode == 0 and f"interval {SWITCH_INTERVAL_S!r}" in done.stderr
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "output.txt").touch()
    child = multiprocessing.get_context("spawn").Process(
        target=_report_switch_interval, args=(str(tmp_path / "scratch"), str(tmp_path / "interval")))
    child.start()
    child.join(120)
    assert float((tmp_path / "interval").read_text()) == SWITCH_INTERVAL_S != sys.getswitchinterval()
