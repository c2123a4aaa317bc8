"""The one way a candidate's evaluation ends without a value."""

from __future__ import annotations

# After these a worker starts afresh: a device fault poisons its context, a rejected candidate may
# have patched torch or kt in it.
RESTART_ON = ("crash", "timeout", "rejected")


class WorkerFailure(Exception):
    """A call that did not return a value. `kind` is a failure kind (kt_cli.types.FAILURE_KINDS: crash,
    timeout, compile_error, slow_compile, spills, wrong, rejected, invalid) or "bad_input" for a kernel
    module that cannot be used at all."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message
