"""Scale-out on Optuna's own storage: `kt tune --workers N` runs N processes, each pinned to one device,
that drive the same studies; processes on other hosts may share them through `--storage`. Optuna's
storage is the only coordination: kt adds no server and no protocol of its own."""

from __future__ import annotations

import hashlib
import json
import os
import time
import zlib
from pathlib import Path

from kt_cli import plugins
from kt_cli.errors import BadInput, EnvironmentProblem, JobFailed, KtError
from kt_cli.processes import end_with_parent
from kt_cli.recipe import limits
from kt_cli.search.storage import HOST, close_engines
from kt_cli.search.tally import Tally
from kt_cli.stamps import mark

POLL_S = 2.0
ARTIFACT_CLAIM = "kt-artifact|"  # prefix of the marker studies that record who wrote an artifact
WRITTEN = "written"  # marker user attr: the writer finished


def worker_count(text: str) -> int:
    """`--workers`: a positive number, or `auto` (one per GPU present; 1 when none)."""
    if text == "auto":
        return max(1, len(plugins.devices()))
    try:
        count = int(text)
    except ValueError:
        raise BadInput(f"--workers: must be a positive number or auto, not {limits.shown(text)}") from None
    if not 1 <= count <= limits.WORKERS_MAX:
        raise BadInput(f"--workers: must be a positive number or auto, at most {limits.WORKERS_MAX}, not {count}")
    return count


def worker_pins(count: int, found: list | None = None) -> list[tuple[dict, list]]:
    """Each worker's environment and the devices it sees in it: with GPUs present (`found`, when
    detected already), each sees only its own (the vendor plugin names the variable and says how the
    pinned process sees the device); in static mode the workers share the CPU and see no device."""
    found = plugins.devices() if found is None else found
    if not found:
        return [({}, []) for _ in range(count)]
    if count > len(found):
        raise BadInput(f"--workers: {count} workers need {count} GPUs, this host has {len(found)}; "
                       f"pass --workers {len(found)} or --workers auto")
    pins = []
    for device in found[:count]:
        vendor = plugins.vendor(device.vendor)
        env = vendor.pin_env(device)
        if not env:
            raise EnvironmentProblem(f"no plugin can pin a worker to {device.vendor} device {device.index} "
                                     f"({device.name}); run with --workers 1")
        pins.append((dict(env), [vendor.pinned_view(device)]))
    return pins


def sampler_seed(seed: int) -> int:
    """A seed of its own for each process sharing a study, so that they do not propose the same points."""
    return (seed + zlib.crc32(f"{HOST}:{os.getpid()}".encode())) % 2**31


def whoami(plan) -> dict:
    """Who evaluates a plan's candidates here: host, pid, device (and the variable pinning it, if any)."""
    record = {"host": HOST, "pid": os.getpid(), "device": "cpu (static)"}
    if plan.device is not None:
        record["device"] = f"{plan.device.name} #{plan.device.index}"
        pins = plugins.vendor(plan.device.vendor).pin_env(plan.device)
        record.update({k: os.environ[k] for k in pins if k in os.environ})
    return record


class EarlyWorkers:
    """The processes of `kt tune --workers N`, started before this one detects its devices and plans
    the targets: each boots its fork server and imports torch meanwhile, then waits for its job and the
    environment that pins it to its GPU (run_workers hands them over; cancel() ends them unused). Started
    after the detection, each worker's first trial came at 10.6-11.4 s on a 4x H100 host, against
    5.7-6.2 s for one process, whose detection and module inspection overlap
    (benchmarks/results/s15/scale2)."""

    def __init__(self, count: int):
        import multiprocessing

        from kt_cli.evaluate.pool import resident_context

        forked = resident_context()  # forked with torch imported where `kt serve` runs
        ctx = forked or multiprocessing.get_context("spawn")
        self.started: list = []  # (process, its end of a duplex pipe)
        for _ in range(count):
            parent_end, child_end = ctx.Pipe()
            own = _ParentState() if forked else None
            # not a daemon: it starts workers of its own
            proc = ctx.Process(target=_child, args=(child_end, os.getpid(), own))
            proc.start()
            child_end.close()
            if own is not None:
                own.close()
            self.started.append((proc, parent_end))
        mark("workers started")

    def cancel(self) -> None:
        """End the workers still running: a refused run's, which have done nothing but start (a fork
        server ends with the process that started it); run_workers ends its own before it returns."""
        for proc, _ in self.started:
            if proc.is_alive():
                proc.kill()
                proc.join()


class _ParentState:
    """What a spawned child inherits and one forked from the resident server does not: the environment,
    the umask and the standard output and error (as connections: multiprocessing hands their
    descriptors over)."""

    def __init__(self):
        from multiprocessing.connection import Connection

        self.env = dict(os.environ)
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        self.streams = [Connection(os.dup(fd), readable=False) for fd in (1, 2)]

    def adopt(self) -> None:
        os.environ.clear()
        os.environ.update(self.env)
        os.umask(self.umask)
        for fd, stream in zip((1, 2), self.streams):
            os.dup2(stream.fileno(), fd)
        self.close()

    def close(self) -> None:
        for stream in self.streams:
            stream.close()


def _child(conn, parent_pid: int, parent: _ParentState | None = None) -> None:
    from kt_cli.hand_offs import quick_hand_offs
    from kt_cli.resident.lease import allow

    quick_hand_offs()
    if parent is not None:
        parent.adopt()
    allow()  # a kt process, as the one that started it
    end_with_parent(parent_pid)  # a killed `kt tune --workers` leaves no worker driving its studies
    from kt_cli.evaluate.pool import start_fork_server_in_background

    start_fork_server_in_background()  # this process's own (its workers get their environment at their start)
    import torch  # noqa: F401  (what detecting its device will need; importing it initialises no device)

    from kt_cli.search.storage import import_ahead

    import_ahead()  # what its studies' storage needs, before the job comes
    mark("worker ready")

    env, run, job = conn.recv()
    mark("job received")
    os.environ.update(env)  # before anything initialises a GPU runtime
    try:
        *_, tally = run(**job)
        outcome = ("ok", tally)
    except KtError as exc:
        outcome = ("error", exc)
    conn.send(outcome)
    mark("outcome sent")
    _end_at_once()


def _end_at_once() -> None:
    """End a worker whose outcome is sent: its evaluator's processes are stopped (run_studies), its
    storage's connections closed and its fork server ended here. The interpreter's own finalisation, with
    torch imported, took 0.5 s more on this CPU machine, and the parent waits for it: on a 2x H200 host a
    run's results came 2.1-2.2 s after its last trial against 3.0 s before (results/s47/start_end)."""
    import sys

    from kt_cli.evaluate.pool import end_own_fork_server

    close_engines()
    end_own_fork_server()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_workers(count: int, run, job: dict, progress=None, each=None,
                early: EarlyWorkers | None = None, devices: list | None = None):
    """Run `run(**job)` (kt_cli.search.studies.run_studies; a module-level function, so it pickles by
    name) in `count` processes (`early`'s, when started ahead) and wait for them; worker i gets `each(i)`'s
    arguments too (what its process does as the studies end). Returns their
    tallies summed; raises the first worker's error when none finished. `devices`: those present, when
    detected already (detected here again, this process imported torch: 3.7 s on an H100 host); each
    worker's job gets its own as `devices`, seen through its pin."""
    import multiprocessing.connection

    pins = worker_pins(count, devices)
    workers = (early or EarlyWorkers(count)).started
    outcomes = {}
    try:
        for i, ((_, conn), (env, seen)) in enumerate(zip(workers, pins)):
            conn.send((env, run, {**job, **(each(i) if each else {}), "devices": seen}))
        mark("jobs sent")
        while len(outcomes) < len(workers):
            for i, (proc, conn) in enumerate(workers):
                if i in outcomes:
                    continue
                if conn.poll():
                    outcomes[i] = conn.recv()
                    proc.join()
                elif not proc.is_alive():  # it may have answered between the two checks
                    outcomes[i] = conn.recv() if conn.poll() else (
                        "died", f"worker {i} (pid {proc.pid}) exited with code {proc.exitcode}")
            if progress:
                progress()  # once more when all have ended: the last candidates' lines
            if len(outcomes) < len(workers):  # until the next progress line, or a worker's answer or exit
                multiprocessing.connection.wait([w for i, (proc, conn) in enumerate(workers) if i not in outcomes
                                                 for w in (conn, proc.sentinel)], POLL_S)
    finally:
        for proc, _ in workers:
            if proc.is_alive():
                proc.kill()
                proc.join()
    tallies = [value for status, value in outcomes.values() if status == "ok"]
    if not tallies:
        errors = [value for status, value in outcomes.values() if status == "error"]
        if errors:
            raise errors[0]
        raise JobFailed("; ".join(value for _, value in outcomes.values()) + "; re-run to resume the study")
    total = Tally()
    for tally in tallies:
        total.merge(tally)
    return total


def storage_progress(storage_url: str, studies: list, budget: int, progress):
    """A poll that shows the workers' progress, read from the storage: `studies` holds
    (plan, shape, study name); `progress` is tune's callback (tally, study key). What a study held at
    the first poll, before the workers had evaluated anything, counts as earlier runs' trials."""
    import optuna

    from kt_cli.search.storage import evaluated, open_storage, trial_result
    from kt_cli.search.tally import study_key

    storage = open_storage(storage_url)
    tally, earlier, shown = Tally(), {}, {}  # shown: study key -> candidates evaluated at its last line

    def poll() -> None:
        for plan, shape, name in studies:
            key = study_key(plan.spec.name, shape)
            try:
                study = optuna.load_study(study_name=name, storage=storage)
            except KeyError:
                study = None
            trials = evaluated(study) if study is not None else []
            # the budget a study records is this run's once the workers opened it with the same --trials
            attrs = study.user_attrs if study is not None else {}
            limit = attrs["budget"] if attrs.get("budget_trials") == budget and "budget" in attrs else budget
            before = earlier.setdefault(key, {t.number for t in trials})
            record = tally.opened(key, limit, plan.mode, [trial_result(t) for t in trials if t.number in before])
            for trial in trials:
                if trial.number not in before:
                    record.add(trial_result(trial))
        # every study that moved since the last poll (one may have finished in between), then the current one
        current = next((key for key, record in tally.studies.items() if record.left), None)
        moved = [key for key, record in tally.studies.items() if record.evaluated and shown.get(key) != record.evaluated]
        for key in moved + ([current] if current is not None and current not in moved else []):
            shown[key] = tally.studies[key].evaluated
            progress(tally, key)

    return poll


def redact(url: str) -> str:
    """The storage URL without its password: it is recorded in the artifact, which gets shipped."""
    if "://" not in url or "@" not in url:
        return url
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def load_study(name: str, storage_url: str):
    import optuna

    from kt_cli.search.storage import open_storage

    try:
        return optuna.load_study(study_name=name, storage=open_storage(storage_url))
    except KeyError:
        raise JobFailed(f"study {name!r} is not in {storage_url}: no worker started it; "
                        "see the workers' errors above") from None


def claim_artifact(storage_url: str, studies: list, path: Path) -> dict | None:
    """Decide which of the processes that finished these studies writes the artifact: the first to
    create the marker study named after the studies' evaluated trials, or the first to find that
    process dead on this machine before it wrote. Returns None when this process is the writer, else
    the writer's host, pid and path."""
    import optuna

    from kt_cli.processes import owner_alive, this_process
    from kt_cli.search.storage import open_storage

    storage = open_storage(storage_url)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    me = {"host": HOST, "pid": os.getpid(), "path": str(Path(path).resolve()), "owner": this_process()}
    try:
        marker = optuna.create_study(study_name=_marker_name(studies), storage=storage)
    except optuna.exceptions.DuplicatedStudyError:
        marker = optuna.load_study(study_name=_marker_name(studies), storage=storage)
        for _ in range(50):  # the winner records itself just after creating the marker
            writer = marker.user_attrs.get("writer")
            if writer is None:
                time.sleep(0.1)
            elif WRITTEN in marker.user_attrs or owner_alive(writer.get("owner")) is not False:
                return writer
            else:  # it was killed before it wrote the artifact
                break
        else:
            return {"host": "another host", "pid": "?", "path": str(path)}
    marker.set_user_attr("writer", me)
    return None


def artifact_written(storage_url: str, studies: list) -> None:
    """Record in the marker that the writer finished writing the artifact."""
    import optuna

    from kt_cli.search.storage import open_storage

    optuna.load_study(study_name=_marker_name(studies), storage=open_storage(storage_url)).set_user_attr(WRITTEN, True)


def _marker_name(studies: list) -> str:
    from kt_cli.search.storage import evaluated

    finished = sorted((s.study_name, sorted(t.number for t in evaluated(s))) for s in studies)
    return ARTIFACT_CLAIM + hashlib.sha256(json.dumps(finished).encode()).hexdigest()[:24]
