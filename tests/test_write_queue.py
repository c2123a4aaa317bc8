"""The host's write queue of a SQLite database (kt_cli.search.write_queue): kt's writers on one host take
their turn in the kernel instead of sleeping in SQLite's busy handler."""

import os
import subprocess
import sys
import threading
import time

from kt_cli.search import write_queue
from kt_cli.search.storage import open_storage

WRITER = r"""
import os, sys, threading, time
from kt_cli.search import write_queue

database, log, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
queue = write_queue.for_database(database)
out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

def write():
    for _ in range(15):
        with queue:
            began = time.monotonic()
            with queue:  # a write inside a write of the same thread does not wait for itself
                time.sleep(0.002)
            os.write(out, f"{began} {time.monotonic()}\n".encode())
        time.sleep(0.001)

workers = [threading.Thread(target=write) for _ in range(threads)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
"""


def _spans(log) -> list:
    return sorted(tuple(map(float, line.split())) for line in open(log))


def test_the_writers_of_every_process_and_thread_on_a_host_write_one_at_a_time(tmp_path):
    """Three processes of four threads each, every write 2 ms inside the queue: no two writes overlap, and
    every write lands. (Without the queue these writes overlap at once.)"""
    database, log = tmp_path / "s.db", tmp_path / "spans"
    database.touch()
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(database), str(log), "4"]) for _ in range(3)]
    assert all(writer.wait(timeout=120) == 0 for writer in writers)
    spans = _spans(log)
    assert len(spans) == 3 * 4 * 15
    overlaps = [(a, b) for a, b in zip(spans, spans[1:]) if b[0] < a[1]]
    assert not overlaps


def test_a_process_that_dies_inside_a_write_frees_the_queue_at_once(tmp_path):
    database = tmp_path / "s.db"
    database.touch()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom kt_cli.search import write_queue\n"
        "with write_queue.for_database(sys.argv[1]):\n    print('in', flush=True)\n    time.sleep(600)\n"),
        str(database)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "in"
    waited = []

    def write() -> None:
        began = time.monotonic()
        with write_queue.for_database(str(database)):
            waited.append(time.monotonic() - began)

    writer = threading.Thread(target=write)
    writer.start()
    time.sleep(0.5)
    assert not waited  # the holder is alive inside its write
    holder.kill()
    writer.join(timeout=10)
    holder.wait()
    assert waited and 0.5 <= waited[0] < 10


def test_a_forked_child_queues_behind_the_parent_rather_than_sharing_its_turn(tmp_path):
    """A forked child inherits the parent's lock file description (flock(2) would count it as the parent)
    and the parent's thread lock (held at the fork by another thread, it would stay held): it opens its own."""
    database = tmp_path / "s.db"
    database.touch()
    queue = write_queue.for_database(str(database))
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with queue:
            held.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read)
        with queue:
            os.write(write, f"{time.monotonic()}".encode())
        os._exit(0)
    os.close(write)
    time.sleep(0.5)
    released = time.monotonic()
    release.set()
    holder.join()
    entered = float(os.read(read, 64).decode())
    assert os.waitpid(child, 0)[1] == 0
    assert entered >= released


def test_every_storage_of_one_sqlite_file_shares_its_queue_and_other_storages_queue_nothing(tmp_path):
    import contextlib

    first = open_storage(f"sqlite:///{tmp_path / 'a.db'}")
    os.symlink(tmp_path / "a.db", tmp_path / "b.db")
    assert isinstance(first.write_queue, write_queue.WriteQueue)
    assert open_storage(f"sqlite:///{tmp_path / 'b.db'}").write_queue is first.write_queue  # one file, two paths
    assert isinstance(open_storage("sqlite:///:memory:").write_queue, contextlib.nullcontext)


def test_a_storage_writes_inside_its_queue(tmp_path, monkeypatch):
    """Every write transaction of a SQLite storage goes through its queue: a study's creation, a trial asked,
    drawn and finished."""
    import optuna

    storage = open_storage(f"sqlite:///{tmp_path / 's.db'}")
    entered = []

    class Counting:
        def __enter__(self):
            entered.append(1)

        def __exit__(self, *exc):
            pass

    storage.write_queue = Counting()
    study = optuna.create_study(study_name="s", storage=storage)
    study.optimize(lambda t: t.suggest_int("x", 0, 9) * 0.5, n_trials=2)
    assert len(entered) >= 2 * 3 + 1
    assert len(study.get_trials()) == 2
