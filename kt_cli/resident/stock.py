"""The keeper's spares (`kt serve`): for each device worker or judge a kt process asked for (its wish: role,
target, device setup; kt_cli.resident.adoption), one process forked from the fork server that readied that
device and waits for the next kt process that asks (kt_cli.resident.spare). A spare is made only while no
kt process holds a lease, so that its device context and a second of a core never run beside a
measurement; a spare whose readying fails is not made again until a kt process asks again. Each holds a
context on its device (a few hundred MB of device memory) while it waits."""

from __future__ import annotations

import json
import multiprocessing
import selectors
import socket
from dataclasses import dataclass

from kt_cli.resident import spare as spare_process


@dataclass
class Spare:
    process: multiprocessing.process.BaseProcess
    conn: object  # the keeper's end of its multiprocessing Pipe
    ready: bool = False


class Stock:
    def __init__(self, limit: int, selector: selectors.BaseSelector):
        self.limit, self.selector = limit, selector
        self.wishes: dict = {}  # key -> the latest wish of that key, the least recently asked first
        self.spares: dict = {}  # key -> Spare

    def describe(self) -> dict:
        ready = sum(spare.ready for spare in self.spares.values())
        return {"spares": ready, "spares_readying": len(self.spares) - ready, "spares_limit": self.limit,
                "spare_pids": sorted(spare.process.pid for spare in self.spares.values())}  # (nvidia-smi lists them)

    def answer(self, client: socket.socket, wish: dict) -> None:
        """Hand the ready spare of `wish`'s key to `client` (its pid; its connection and status pipe as file
        descriptors), or say there is none; remember the wish either way."""
        key = wish.get("key")
        if not isinstance(key, str) or not self.limit:
            client.sendall(b'{"pid": null}\n')
            return
        self.wishes.pop(key, None)
        self.wishes[key] = wish
        while len(self.wishes) > self.limit:
            self._end(next(iter(self.wishes)), forget=True)
        spare = self.spares.get(key)
        if spare is None or not spare.ready or not spare.process.is_alive():
            client.sendall(b'{"pid": null}\n')
            return
        line = (json.dumps({"pid": spare.process.pid}) + "\n").encode()
        socket.send_fds(client, [line], [spare.conn.fileno(), spare.process.sentinel])
        self._let_go(key)

    def refill(self) -> None:
        """Make a spare for every wish that has none (the keeper calls it while no kt process runs)."""
        for key, wish in list(self.wishes.items()):
            if key not in self.spares:
                self._make(key, wish)

    def _make(self, key: str, wish: dict) -> None:
        keeper_end, spare_end = multiprocessing.Pipe()
        process = multiprocessing.get_context("forkserver").Process(
            target=spare_process.run, args=(spare_end, wish), daemon=True, name=f"kt-spare-{wish.get('role')}")
        try:
            process.start()
        except OSError:  # the fork server is gone: the keeper ends with it
            keeper_end.close()
            self.wishes.pop(key, None)
            return
        finally:
            spare_end.close()
        self.spares[key] = Spare(process, keeper_end)
        self.selector.register(keeper_end, selectors.EVENT_READ, data=key)

    def heard(self, key: str) -> None:
        """A spare said something or ended: ready, or failed (forgotten until a kt process asks again)."""
        spare = self.spares[key]
        try:
            said = spare.conn.recv()
        except (EOFError, OSError):
            said = ("ended", None)
        if said[0] == "spare" and not spare.ready:
            spare.ready = True
            return
        self._end(key, forget=True)

    def _let_go(self, key: str) -> None:
        """After the hand-over: the keeper keeps no copy of the spare's connection or status pipe (its end
        is reported to the kt process alone) and no longer counts it among its children."""
        spare = self.spares.pop(key)
        self.selector.unregister(spare.conn)
        spare.conn.close()
        multiprocessing.process._children.discard(spare.process)
        spare.process._popen.finalizer()  # closes this process's copies of its status and data pipes

    def _end(self, key: str, forget: bool) -> None:
        """End the spare of `key` (closing its connection ends a waiting spare) and, with `forget`, its wish."""
        if forget:
            self.wishes.pop(key, None)
        spare = self.spares.pop(key, None)
        if spare is not None:
            self.selector.unregister(spare.conn)
            spare.conn.close()
            if spare.process.is_alive() and not spare.ready:
                spare.process.kill()  # still readying: it would only notice once ready

    def close(self) -> None:
        for key in list(self.spares):
            self._end(key, forget=False)
