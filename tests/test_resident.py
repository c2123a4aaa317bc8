"""`kt serve`: a resident fork server that later kt processes fork their workers from, and that never
changes what they find or leaves them stranded when it ends."""

import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest

from tests.helpers import dsl_recipe, kt_process, process_env, resident_keepers
from tests.test_isolation import MISBEHAVING

FAKE = ["--target", "fake:cpu"]
WORKER_PARENT = """
import os
from kt_cli.evaluate.pool import Worker
from kt_cli.resident.lease import allow, borrow
if os.environ.get("KT_TEST_AS") != "application":
    allow()  # as kt's command line does
with Worker() as worker:
    worker.ensure_started()
    pid = worker._proc.pid
    parent = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    print(parent, (borrow() or {}).get("server"))
"""


@pytest.fixture
def resident(monkeypatch):
    """A directory of its own for the keeper's sockets (short: a socket's path ends at 107 bytes); every
    keeper started there is stopped afterwards."""
    folder = tempfile.mkdtemp(prefix="kt-res-", dir="/tmp")
    monkeypatch.setenv("KT_RESIDENT_DIR", folder)
    yield folder
    kt_process("serve", "--stop", env={"KT_RESIDENT_DIR": folder})
    for pid in resident_keepers(folder):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)


def _serve(*args: str, env: dict | None = None) -> dict:
    result = kt_process("--json", "serve", *args, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _gone(folder: str, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not resident_keepers(folder) and not [f for f in os.listdir(folder) if f.endswith((".keep", ".fork"))]:
            return True
        time.sleep(0.2)
    return False


def _worker_parent(env: dict | None = None, script: str = WORKER_PARENT) -> tuple[int, int | None]:
    """(the parent of a worker a fresh process starts, the resident server it borrowed or None)."""
    import subprocess
    import sys

    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=process_env(**(env or {})), timeout=300)
    assert ran.returncode == 0, ran.stderr
    parent, server = ran.stdout.split()
    return int(parent), None if server == "None" else int(server)


def test_a_tune_forks_every_worker_from_the_resident_server_and_judges_as_alone(resident, write, tmp_path):
    started = _serve("--idle", "60")
    assert started["started_now"] and started["leases"] == 0
    assert _serve()["started_now"] is False  # one a key: the second says it runs
    assert _worker_parent() == (started["server"], started["server"])
    recipe = dsl_recipe(write, kernel_text=MISBEHAVING, space="BLOCK = [256, 512, 1024, 2048, 4096]",
                        extra='sampler = "grid"', trials=5)
    recipe.write_text(recipe.read_text().replace("timeout = 60", "timeout = 10"))
    result = kt_process("tune", recipe, "--out", tmp_path / "art", timeout=600)
    assert result.returncode == 0, result.stderr
    assert f"forked from the resident fork server of `kt serve` (keeper pid {started['keeper']})" in result.stderr
    trials = [json.loads(line) for line in (tmp_path / "art" / "recipe.kt" / "trials.jsonl").read_text().splitlines()]
    # a segfault's signal reaches kt through the server (it reaps the worker and reports its status)
    assert {t["params"]["BLOCK"]: t["failure_kind"] for t in trials} == \
        {256: "ok", 512: "crash", 1024: "timeout", 2048: "wrong", 4096: "ok"}
    assert "SIGSEGV" in next(t["message"] for t in trials if t["failure_kind"] == "crash")
    deadline = time.monotonic() + 10  # the tune and its workers gave their lease back (a worker ends within 1 s)
    while _serve("--status")["leases"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _serve("--status")["leases"] == 0


def _status_when(ready: int, timeout: float = 120.0) -> dict:
    """`kt serve --status` once `ready` spares wait (made while no kt process runs: after a tune's end)."""
    deadline = time.monotonic() + timeout
    while True:
        info = _serve("--status")
        if info["spares"] == ready and not info["spares_readying"] or time.monotonic() > deadline:
            return info
        time.sleep(0.3)


def _log(folder) -> str:
    """The keepers' logs of `folder` (what a spare that failed to ready said)."""
    return "\n".join(p.read_text()[-3000:] for p in Path(folder).glob("*.log"))


def _kinds(folder) -> dict:
    trials = [json.loads(line) for line in (folder / "recipe.kt" / "trials.jsonl").read_text().splitlines()]
    return {t["params"]["BLOCK"]: (t["failure_kind"], "SIGSEGV" in (t["message"] or "")) for t in trials}


def test_the_next_measured_tune_takes_over_readied_spares_and_judges_as_alone(resident, write, tmp_path):
    _serve("--idle", "60")
    recipe = dsl_recipe(write, kernel_text=MISBEHAVING, space="BLOCK = [256, 512, 1024, 2048, 4096]",
                        extra='sampler = "grid"', trials=5)
    recipe.write_text(recipe.read_text().replace("timeout = 60", "timeout = 10"))
    env = {"KT_PLUGINS": "tests.fake_vendor"}
    first = kt_process("tune", recipe, *FAKE, "--out", tmp_path / "a", env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    assert _status_when(2)["spares"] == 2, _log(resident)  # the device's worker and judge, readied for the next
    profile = tmp_path / "profile"
    second = kt_process("tune", recipe, *FAKE, "--out", tmp_path / "b", env={**env, "KT_PROFILE_DIR": str(profile)},
                        timeout=600)
    assert second.returncode == 0, second.stderr
    adopted = [line for log in profile.glob("pipe-caller-*.log") for line in log.read_text().splitlines()
               if line.startswith("adopt ")]
    assert len(adopted) == 2
    # a crash in a spare taken over still reaches kt with its signal; every verdict as in the first run
    expected = {256: ("ok", False), 512: ("crash", True), 1024: ("timeout", False), 2048: ("wrong", False),
                4096: ("ok", False)}
    assert _kinds(tmp_path / "a") == _kinds(tmp_path / "b") == expected


SPARE_WORKER = """
import os, sys, time
from kt_cli import plugins
from kt_cli.evaluate.pool import Worker
from kt_cli.resident.lease import allow
allow()
with Worker({}, spare=("device", plugins.target("fake:cpu"))) as worker:
    worker.ensure_started()
    fake = next(d for d in worker.call("detect_devices", {}, 60) if d.vendor == "fake")  # (a GPU host has others)
    print(type(worker._proc).__name__, worker._proc.pid, fake.name, flush=True)
    if len(sys.argv) > 1:
        time.sleep(600)
"""


@pytest.fixture
def fake_plugin(tmp_path):
    """The fake vendor's plugin as a module of tmp_path (kt_fake_copy.py: a file a test may change), which
    SPARE_WORKER's processes load."""
    plugin = tmp_path / "kt_fake_copy.py"
    plugin.write_text((Path(__file__).parent / "fake_vendor.py").read_text())
    return plugin


def _spare_worker(plugin_dir, *args: str, **env: str):
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-c", SPARE_WORKER, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=process_env(str(plugin_dir), KT_PLUGINS="kt_fake_copy", **env))


def _started(plugin_dir, **env: str) -> tuple[str, int]:
    ran = _spare_worker(plugin_dir, **env)
    out, err = ran.communicate(timeout=300)
    assert ran.returncode == 0, err
    how, pid, device = out.split(maxsplit=2)
    assert device.startswith("Fake CPU device")
    return how, int(pid)


def test_a_spare_serves_only_a_process_that_would_import_what_it_did(resident, fake_plugin, tmp_path):
    _serve("--idle", "60")
    assert _started(tmp_path)[0] == "ForkServerProcess"  # nothing readied yet: the wish is remembered
    assert _status_when(1)["spares"] == 1, _log(resident)
    assert _started(tmp_path, KT_FAKE_DEVICES="2")[0] == "ForkServerProcess"  # another device setup
    assert _status_when(2)["spares"] == 2
    stale = os.stat(fake_plugin)
    os.utime(fake_plugin, ns=(stale.st_atime_ns, stale.st_mtime_ns + 10**9))  # edited since the spare imported it
    how, _ = _started(tmp_path)
    assert how == "ForkServerProcess" and _serve("--status")["spares"] == 1  # the stale one ended
    assert _status_when(2)["spares"] == 2
    how, adopted = _started(tmp_path)
    assert how == "AdoptedProcess" and not os.path.exists(f"/proc/{adopted}")  # taken, and ended with its kt


def test_a_spare_killed_while_it_waits_is_forgotten_and_made_again_after_the_next_command(resident, fake_plugin,
                                                                                         tmp_path):
    # (the GPU's memory a spare held was wanted back: the OOM killer)
    _serve("--idle", "60")
    _started(tmp_path)
    (pid,) = _status_when(1)["spare_pids"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _serve("--status")["spare_pids"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _serve("--status")["spares"] == 0
    assert _started(tmp_path)[0] == "ForkServerProcess"  # nothing to take: forked, as without a keeper
    info = _status_when(1)
    assert info["spares"] == 1 and info["spare_pids"] != [pid]


def test_a_spare_taken_over_ends_with_the_process_that_took_it(resident, fake_plugin, tmp_path):
    _serve("--idle", "60")
    _started(tmp_path)
    _status_when(1)
    holder = _spare_worker(tmp_path, "hold")
    how, pid, _ = holder.stdout.readline().split(maxsplit=2)
    assert how == "AdoptedProcess"
    holder.kill()
    holder.wait()
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid}")


def test_processes_of_several_workers_come_from_it_too(resident, write, tmp_path):
    _serve("--idle", "60")
    env = {"KT_PLUGINS": "tests.fake_vendor", "KT_FAKE_DEVICES": "2"}
    result = kt_process("tune", dsl_recipe(write, trials=4), *FAKE, "--out", tmp_path / "out", "--workers", "2",
                        env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "forked from the resident fork server" in result.stderr
    trials = [json.loads(line) for line in (tmp_path / "out" / "recipe.kt" / "trials.jsonl").read_text().splitlines()]
    # every trial ran in a worker process that found the fake vendor: a child forked from the server has the
    # server's environment until it takes its parent's (KT_PLUGINS here); which of the two took a trial is a race
    valid = [t for t in trials if t["failure_kind"] != "invalid"]
    assert len(valid) == 4 and all(t["worker"]["device"].startswith("Fake CPU device #") for t in valid)


def test_a_process_of_another_python_setup_or_told_not_to_or_an_application_starts_its_own(resident):
    # an application that loads an artifact keeps multiprocessing's fork server its own
    server = _serve("--idle", "60")["server"]
    for env in ({"KT_RESIDENT": "0"}, {"LD_LIBRARY_PATH": "/nonexistent-kt-test"}, {"KT_TEST_AS": "application"}):
        parent, borrowed = _worker_parent(env)
        assert borrowed is None and parent != server


def test_stop_waits_for_the_processes_using_it_and_lends_no_more(resident):
    from kt_cli.resident.lease import ask

    _serve("--idle", "0")
    held, _ = ask("lease")
    try:
        stopping = _serve("--stop")
        assert stopping["leases"] == 1
        assert ask("lease") is None  # refused while it waits
        assert _serve("--status")["stopping"] is True
    finally:
        held.close()
    assert _gone(resident)
    result = kt_process("serve", "--status")
    assert result.returncode == 0 and "no resident fork server runs" in result.stdout


def test_an_idle_server_ends_by_itself(resident):
    _serve("--idle", "1")
    assert _gone(resident, timeout=15)


def test_a_killed_keeper_leaves_every_kt_process_working(resident):
    first = _serve("--idle", "60")
    os.kill(first["keeper"], signal.SIGKILL)  # its fork server ends with it (the alive pipe closes)
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{first['server']}") and time.monotonic() < deadline:
        time.sleep(0.1)
    parent, borrowed = _worker_parent()  # the stale sockets are refused: the process starts its own
    assert borrowed is None and parent != first["server"]
    second = _serve("--idle", "60")  # a new keeper clears the stale files
    assert second["started_now"] and second["server"] != first["server"]
    assert _worker_parent() == (second["server"], second["server"])


def test_a_server_that_ends_after_the_lease_is_replaced_at_the_next_start(resident):
    # the lease taken, then the keeper killed before the first worker: the start falls back to its own
    _serve("--idle", "60")
    script = WORKER_PARENT.replace("with Worker() as worker:", """info = borrow()
os.kill(info["keeper"], 9)
import time
while os.path.exists(f"/proc/{info['server']}"):
    time.sleep(0.05)
with Worker() as worker:""")
    parent, borrowed = _worker_parent(script=script)
    assert borrowed is None and parent > 0


@pytest.mark.parametrize("args, says", [
    (["--idle", "-1"], "--idle: -1 is not a number of seconds >= 0"),
    (["--stop", "--status"], "--stop and --status: give one of them"),
    (["--spares", "-1"], "--spares: -1 is below 0"),
])
def test_bad_flags_get_one_line(resident, args, says):
    result = kt_process("serve", *args)
    assert result.returncode == 2 and says in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_directory_others_can_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    result = kt_process("serve", env={"KT_RESIDENT_DIR": str(shared)})
    assert result.returncode == 2
    assert "KT_RESIDENT_DIR" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not [f for f in os.listdir(shared)]  # nothing written there


def test_a_keeper_of_another_kt_version_is_not_used(resident):
    # a keeper answering in a protocol this kt does not know (a newer or older kt left it running)
    import socket
    import threading

    from kt_cli.resident.identity import key, paths

    listener = socket.socket(socket.AF_UNIX)
    listener.bind(paths(resident, key())["keeper"])
    listener.listen()

    def answer() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(64)
                conn.sendall(b'{"protocol": 999, "fork": "/nonexistent/fork"}\n')

    threading.Thread(target=answer, daemon=True).start()
    try:
        parent, borrowed = _worker_parent()
    finally:
        listener.close()
    assert borrowed is None and parent > 0


def test_two_kt_serve_at_once_start_one_server(resident):
    import subprocess

    from tests.helpers import KT_COMMAND

    both = [subprocess.Popen([*KT_COMMAND, "--json", "serve", "--idle", "60"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=process_env()) for _ in range(2)]
    answers = [json.loads(p.communicate(timeout=300)[0]) for p in both]
    assert all(p.returncode == 0 for p in both)
    assert sorted(a["started_now"] for a in answers) == [False, True]
    assert answers[0]["server"] == answers[1]["server"] and len(resident_keepers(resident)) == 1


SERVER_AT_EXIT = """
import atexit, os, signal
server = []
# runs after kt's own exit handler (registered later, run first): how this process's fork server ended
atexit.register(lambda: print("killed" if os.waitid(os.P_PID, server[0], os.WEXITED).si_status == signal.SIGKILL
                              else "ended", flush=True))
from kt_cli.evaluate import pool  # noqa: F401
from multiprocessing import forkserver
forkserver.ensure_running()
server.append(forkserver._forkserver._forkserver_pid)
"""


def test_a_process_own_fork_server_ends_with_it_at_once():
    # left to notice its parent's end, the server finalised an interpreter with torch imported while it held
    # the standard output the process's reader waited on: `kt tune`'s output ended 0.5-0.7 s after kt did on a
    # 2x H200 host (results/s47/start_end). Without kt's exit handler the check above waits for the server
    # forever (it ends only once this process's end closes its pipe): the run's timeout fails the test.
    import subprocess
    import sys

    env = {**process_env(), "KT_RESIDENT": "0"}
    done = subprocess.run([sys.executable, "-c", SERVER_AT_EXIT], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["killed"]
