"""The one way a candidate's evaluation ends without a value."""

from __future__ import annotations


class WorkerFailure(Exception):
    """A call that did not return a value. `kind` is a failure kind (crash, timeout, compile_error,
    wrong, invalid) or "bad_input" for a kernel module that cannot be used at all."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message
