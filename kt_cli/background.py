"""A function running in a thread while the caller does something else."""

from __future__ import annotations

import threading


class InBackground:
    """`fn(*args)` running in a thread from now; result() waits for it and returns what it returned or
    raises what it raised."""

    def __init__(self, fn, *args):
        self._outcome: dict = {}
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)
        self._thread.start()

    def _run(self, fn, args) -> None:
        try:
            self._outcome["value"] = fn(*args)
        except BaseException as exc:  # raised where the caller asks for the result
            self._outcome["error"] = exc

    def result(self):
        self._thread.join()
        if "error" in self._outcome:
            raise self._outcome["error"]
        return self._outcome["value"]
