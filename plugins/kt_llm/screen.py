"""Screening a model's reply in a child process with limits. Pulling the code out of a reply, dropping
the model's own problem definitions and running the honesty gates all parse model-written text, and
parsing hostile text (10**5 unary minus signs, a sum of thousands of terms) can recurse past Python's
limits, exhaust memory or take long. In a child with a size, time and memory limit such a reply is a
failed round; `kt tune` goes on. Nothing of the reply is imported or run here or there."""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass

REPLY_CHARS_MAX = 400_000  # far past a kernel module and max_output_tokens' worth of text
TIME_LIMIT_S = 20.0
MEMORY_BYTES_MAX = 2 << 30


@dataclass(frozen=True)
class Screened:
    """The module's code, less the model's own problem definitions (None when it could not be had), and
    the failed round's kind and message ("" when it passed)."""

    code: str | None
    failure_kind: str = ""  # "malformed", "compile_error" or "invalid"
    message: str = ""


def screen(reply: str) -> Screened:
    """The reply, screened in a fresh child process (spawned: it shares nothing with this one)."""
    if len(reply) > REPLY_CHARS_MAX:
        return Screened(None, "malformed", f"the reply is {len(reply)} characters long; at most {REPLY_CHARS_MAX}")
    ctx = multiprocessing.get_context("spawn")
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_serve, args=(sender, reply), daemon=True)
    child.start()
    sender.close()
    try:
        if receiver.poll(TIME_LIMIT_S):
            return receiver.recv()
        return Screened(None, "compile_error", f"parsing the reply took more than {TIME_LIMIT_S:.0f} s")
    except (EOFError, OSError):
        child.join(5)
        return Screened(None, "compile_error", f"the reply could not be parsed: the parser process ended with "
                                               f"code {child.exitcode} (out of memory or recursion)")
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()


def _serve(sender, reply: str) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES_MAX, MEMORY_BYTES_MAX))
    except (ImportError, ValueError, OSError):  # pragma: no cover - not Linux, or a lower hard limit
        pass
    try:
        outcome = screen_here(reply)
    except BaseException as exc:  # RecursionError, MemoryError: the round fails, the parent goes on
        outcome = Screened(None, "compile_error", f"the reply could not be parsed ({type(exc).__name__}: "
                                                  "nested too deeply or too large)")
    sender.send(outcome)


def screen_here(reply: str) -> Screened:
    """What screen() does, in this process (the child calls it)."""
    from kt_llm import gates
    from kt_llm.task import extract_code, strip_problem

    code = extract_code(reply)
    if code is None:
        return Screened(None, "malformed", f"the reply holds no ```python block: {reply[:200]!r}")
    try:
        code = strip_problem(code)
    except SyntaxError as exc:
        return Screened(None, "compile_error", f"SyntaxError line {exc.lineno}: {exc.msg}")
    reason = gates.check(code)
    if reason:
        return Screened(code, "invalid", f"rejected by the honesty gates: {reason}")
    return Screened(code)
