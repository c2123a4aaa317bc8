"""Runs candidates in a child process with a watchdog. The parent survives segfaults, hangs and
compiler aborts in the child: the call raises WorkerFailure with the failure kind, and the next call
starts a fresh child."""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any

from kt_cli.evaluate.containment import Scratch, enter_scratch, flush_output, report_output
from kt_cli.evaluate.core_wait import CoreWait
from kt_cli.evaluate.failure import WorkerFailure
from kt_cli.resident.identity import PRELOADED
from kt_cli.resident.lease import borrow, give_back
from kt_cli.stamps import log_timing

STARTUP_TIMEOUT = 300.0  # importing torch and triton on a cold, busy machine
OUTPUT_POLL_S = 0.5  # how often the output file is checked while a request runs


def fp_fusion_default() -> str:
    """TRITON_DEFAULT_FP_FUSION as every worker has it: the user's setting, else "1", Triton 3.9's own
    default, set explicitly so that Triton does not warn in every worker that it is unset (the artifact
    records it: fusing a*b+c into an fma changes results)."""
    return os.environ.get("TRITON_DEFAULT_FP_FUSION", "1")


NICE_ENV = "KT_WORKER_NICE"  # a worker's niceness increment (a pool of background work: kt's compile pool)


def enter_worker(env: dict, scratch_dir: str, output_path: str, parent_pid: int) -> None:
    """A worker's start, before anything of kt runs there: kt's environment of now (a forked worker starts
    with the fork server's), its niceness, its GIL switch interval (kt_cli.hand_offs), its scratch directory
    (kt_cli.evaluate.containment)."""
    from kt_cli.hand_offs import quick_hand_offs

    quick_hand_offs()
    os.environ.clear()
    os.environ.update(env)
    if env.get(NICE_ENV):
        with contextlib.suppress(OSError, ValueError):
            os.nice(int(env[NICE_ENV]))
    enter_scratch(scratch_dir, output_path, parent_pid)  # a candidate's prints and files stay out of kt's way


def _serve(conn, env: dict, scratch_dir: str, output_path: str, parent_pid: int) -> None:
    forked = time.time()
    enter_worker(env, scratch_dir, output_path, parent_pid)
    try:
        from kt_cli.evaluate import requests as execute

        execute.prepare_worker()
    except BaseException as exc:  # pragma: no cover - reported to the parent as a crash
        conn.send(("error", ("crash", f"worker could not start: {exc!r}")))
        return
    conn.send(("ready", None))
    log_timing("worker", "start", forked, time.time())
    serve_requests(conn)


def serve_requests(conn) -> None:
    """Answer the kt process's requests until it closes the connection."""
    from kt_cli.evaluate import requests as execute

    while True:
        try:
            op, payload = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        received, cpu = time.time(), _cpu_seconds()
        try:
            answer = ("ok", execute.dispatch(op, payload))
        except WorkerFailure as exc:
            answer = ("error", (exc.kind, exc.message))
        except BaseException as exc:
            last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
            where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
            answer = ("error", ("crash", f"{type(exc).__name__}: {exc}{where}"))
        answered = time.time()
        flush_output()  # everything printed for this request is in the file before the answer leaves
        conn.send(answer)
        log_timing("worker", op, received, answered, time.time(), _cpu_seconds() - cpu)


def _cpu_seconds() -> float:
    """CPU seconds this worker and the tools it ran (a compiler's assembler) have used so far."""
    used = os.times()
    return used.user + used.system + used.children_user + used.children_system


_MAIN_MODULE_LOCK = threading.Lock()


# multiprocessing makes its Unix sockets (the fork server's; torch's CPU tensors lent by a judge) in one
# temporary directory that every worker inherits; such a path ends at 107 bytes and multiprocessing adds
# about 45 to the directory.
SOCKET_DIR_CHARS = 60


def _sockets_under_a_short_directory() -> None:
    """A long TMPDIR (a batch job's, a test's) would make those paths too long to bind: the directory
    is then made under a short root. Called before a worker starts (it inherits the directory)."""
    import tempfile
    from multiprocessing import util

    if len(tempfile.gettempdir()) <= SOCKET_DIR_CHARS:
        return
    for root in ("/tmp", "/dev/shm", "/var/tmp"):
        if os.path.isdir(root) and os.access(root, os.W_OK | os.X_OK):
            saved, tempfile.tempdir = tempfile.tempdir, root
            try:
                util.get_temp_dir()  # made once per process, removed when it exits
            finally:
                tempfile.tempdir = saved
            return


_SPAWN_ONLY = False  # set once a fork server could not start: workers are spawned from then on


def _context():
    """Workers are forked from a server process that has imported torch once (starting one costs a
    fraction of a second instead of the seconds that import takes; a candidate of a new module, an LLM
    round, a restarted worker each start one): the resident one of `kt serve` where one of this Python
    and torch runs (kt_cli.resident), else one this process starts without its main module. Neither
    initialises a device (CUDA_VISIBLE_DEVICES still applies in each worker). Where fork servers do not
    exist, or with KT_WORKER_START=spawn, workers are spawned."""
    if _SPAWN_ONLY or "forkserver" not in multiprocessing.get_all_start_methods() \
            or os.environ.get("KT_WORKER_START") == "spawn":
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(PRELOADED))  # for this process's own, when it starts one
    borrow()
    return ctx


def resident_context():
    """The fork server context where this process's workers come from `kt serve`'s resident server, else
    None (kt_cli.search.scale forks its worker processes there instead of spawning them)."""
    ctx = _context()
    return ctx if ctx.get_start_method() == "forkserver" and borrow() is not None else None


def start_fork_server_in_background() -> None:
    """Boot the fork server now, in a thread (it imports torch: seconds on a GPU host), so that it is up
    when the first worker starts instead of on that worker's critical path."""
    if _context().get_start_method() != "forkserver" or borrow() is not None:
        return  # spawned workers, or the resident server's

    def boot() -> None:
        from multiprocessing import forkserver

        try:
            with _main_module_hidden():
                _sockets_under_a_short_directory()
                forkserver.ensure_running()
        except Exception:  # noqa: BLE001 - the first worker's start tries again and says what is wrong
            pass

    threading.Thread(target=boot, daemon=True).start()


def end_own_fork_server() -> None:
    """End the fork server this process started, at once: left to see its parent's end, it finalises an
    interpreter with torch imported, holding the standard output kt's own parent may read to its end:
    0.3 s on this CPU machine, 0.5-0.7 s after `kt tune` exited on a 2x H200 host, 0.01-0.03 s once ended
    here (results/s47/start_end). Its workers are stopped or end with their parent; the resident server of
    `kt serve` is never this process's own."""
    from multiprocessing import forkserver

    pid = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)  # None where borrowed
    if pid is not None:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)  # reaped by ensure_running, should this process start another


atexit.register(end_own_fork_server)  # whichever way this process started its own


@contextlib.contextmanager
def _main_module_hidden():
    """A spawned child imports the parent's main module (as __mp_main__) before it runs anything: an
    application's unguarded script, whose first kernel call finalizes (kt_cli.load), would run again in
    every worker. A worker runs only kt's code, so it is started without the parent's main module."""
    with _MAIN_MODULE_LOCK:  # workers start from several threads: one hides and restores at a time
        main = sys.modules.get("__main__")
        saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__} if main else {}
        if main is not None:
            main.__dict__.pop("__file__", None)
            main.__spec__ = None
        try:
            yield
        finally:
            if main is not None:
                main.__dict__.pop("__spec__", None)
                main.__dict__.update(saved)


class Worker:
    """One child process, in a scratch directory of its own (kt_cli.evaluate.containment). `env` is
    applied before the child imports anything (TRITON_INTERPRET, CUDA_VISIBLE_DEVICES...). `spare`, a
    (role, target) of a device's worker or judge: where `kt serve` keeps a spare readied for them, the
    worker's first start takes it over (kt_cli.resident.adoption) instead of forking one."""

    def __init__(self, env: dict | None = None, spare: tuple | None = None):
        self.env = {"TRITON_DEFAULT_FP_FUSION": fp_fusion_default(), **(env or {})}
        self.spare = spare
        self._proc = None
        self._conn = None
        self._scratch: Scratch | None = None
        self._starting = threading.RLock()  # a start in the background and stop() wait for each other

    def ensure_started(self) -> None:
        """Start the process unless it runs (a worker's start imports torch and Triton: seconds)."""
        with self._starting:
            if self._proc is None or not self._proc.is_alive():
                self._start()

    def _start(self) -> None:
        self._scratch = Scratch()
        start = ({**os.environ, **self.env}, self._scratch.dir, self._scratch.output_path, os.getpid())
        if self._adopt(start):
            return
        self._fork(start)
        status, value = self._answer("starting", STARTUP_TIMEOUT, report=False)  # imports' warnings: no candidate's
        if status == "error":
            self.stop()
            raise WorkerFailure(*value)

    def _adopt(self, start: tuple) -> bool:
        """Take over `kt serve`'s spare for this worker's role and target, if one is ready and still loads
        what this process would: True once it is this worker's, started as `start` says."""
        if self.spare is None or resident_context() is None:
            return False
        from kt_cli.resident.adoption import adopt

        asked = time.time()
        adopted = adopt(*self.spare, start)
        if adopted is None:
            return False
        self._proc, self._conn = adopted
        log_timing("caller", "adopt", asked, time.time())
        return True

    def _fork(self, start: tuple) -> None:
        global _SPAWN_ONLY
        self._conn, child = multiprocessing.Pipe()
        args = (child, *start)
        with _main_module_hidden():
            _sockets_under_a_short_directory()
            while True:
                try:
                    self._proc = _context().Process(target=_serve, args=args, daemon=True)
                    self._proc.start()
                    break
                except OSError:
                    if give_back():
                        continue  # the resident server ended meanwhile: this process's own from now
                    if _SPAWN_ONLY:
                        raise
                    _SPAWN_ONLY = True
        child.close()

    def _answer(self, doing: str, timeout: float, report: bool = True, limit: float | None = None):
        """The worker's answer, or WorkerFailure (a crash or a hang: the worker is then stopped).
        What it printed meanwhile goes to report_output. `limit`: see call()."""
        try:
            return self._receive(timeout, doing, limit)
        finally:
            printed = self._scratch.take()
            if report:
                report_output(doing, printed)
            if self._proc is None:
                self.stop()

    def _answered(self, timeout: float, limit: float | None = None) -> bool:
        """Wait for the answer up to `timeout` s, emptying the output file as it grows; with `limit`, the
        time the worker and its children waited for a core is added to `timeout`, up to `limit` s."""
        started = time.monotonic()
        deadline = started + timeout
        waits = CoreWait(self._proc.pid) if limit is not None else None
        while not self._conn.poll(min(OUTPUT_POLL_S, max(0.0, deadline - time.monotonic()))):
            self._scratch.spill()
            now = time.monotonic()
            if now >= deadline and waits is not None:
                deadline = min(started + limit, started + timeout + waits.seconds())
            if now >= deadline:
                return False
        return True

    def _receive(self, timeout: float, doing: str, limit: float | None = None):
        if not self._answered(timeout, limit):
            self._kill()
            waited = " (not counting the time it waited for a core)" if limit is not None else ""
            raise WorkerFailure("timeout", f"no answer after {timeout:g} s{waited} while {doing}; worker killed")
        try:
            return self._conn.recv()
        except (EOFError, ConnectionResetError, OSError):
            self._proc.join(5)
            code = self._proc.exitcode
            self._kill()
            how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
            said = self._scratch.last_words()
            raise WorkerFailure("crash", f"worker died while {doing} ({how})" + (f": {said}" if said else "")) from None

    def call(self, op: str, payload: Any, timeout: float, limit: float | None = None) -> Any:
        """`op`'s answer within `timeout` s, else WorkerFailure("timeout") with the worker killed. With
        `limit` (a pool of background work that yields its cores, kt's compile pool), `timeout` leaves out
        the time the worker and the processes it started waited for a core (kt_cli.evaluate.core_wait),
        and `limit` s of wall time end the request in any case."""
        if limit is not None and limit <= timeout:
            limit = None  # nothing to stretch: `timeout` is the wall time
        self.ensure_started()
        sending = time.time()
        self._conn.send((op, payload))
        sent = time.time()
        status, value = self._answer(op, timeout, limit=limit)
        log_timing("caller", op, sending, sent, time.time())
        if status == "error":
            raise WorkerFailure(*value)
        return value

    def _kill(self) -> None:
        """End the process; its scratch directory stays until stop() (its output may still be read)."""
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join(10)
        self._proc = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def stop(self) -> None:
        with self._starting:
            self._kill()
            if self._scratch is not None:
                self._scratch.remove()
                self._scratch = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class WorkerPool:
    """`size` interchangeable workers for threads that call at once; counts the seconds spent busy."""

    def __init__(self, size: int, env: dict | None = None, spare: tuple | None = None):
        import queue
        import threading

        self.workers = [Worker(env, spare) for _ in range(max(1, size))]
        self._idle: "queue.Queue[Worker]" = queue.Queue()
        for w in self.workers:
            self._idle.put(w)
        self._lock = threading.Lock()
        self.busy_seconds = 0.0

    def call(self, op: str, payload: Any, timeout: float, restart_on: tuple = (), busy=None,
             limit: float | None = None) -> Any:
        """Call `op` on an idle worker (Worker.call: `timeout`, `limit`); after a failure whose kind is in
        `restart_on`, restart that worker. `busy(seconds)`, if given, learns how long the worker took (the
        wait for an idle one left out)."""
        import time

        worker = self._idle.get()
        started = time.perf_counter()
        try:
            return worker.call(op, payload, timeout, limit)
        except WorkerFailure as exc:
            if exc.kind in restart_on:
                worker.stop()
            raise
        finally:
            took = time.perf_counter() - started
            with self._lock:
                self.busy_seconds += took
            self._idle.put(worker)
            if busy is not None:
                busy(took)

    def start_in_background(self) -> None:
        """Start every worker now, in threads, so that the first requests do not wait for their start
        one after another (a start that fails is retried, and reported, by the first call)."""
        def start(worker: Worker) -> None:
            try:
                worker.ensure_started()
            except Exception:  # noqa: BLE001 - the call that needs the worker says what is wrong
                pass

        for worker in self.workers:
            threading.Thread(target=start, args=(worker,), daemon=True).start()

    def stop(self) -> None:
        for w in self.workers:
            w.stop()
