"""The bounds every number a user hands kt must lie within, in one place: a recipe key and the flag that
overrides it refuse the same values with the same message. Each check returns the value or raises a
BadInput naming `where` (the file and key, or the flag), the bound and a fix."""

from __future__ import annotations

import math

from kt_cli.errors import BadInput

SEED_MAX = 2**32 - 1  # the samplers' random states (numpy's) take seeds below 2**32
TIMEOUT_MAX_S = 86_400.0  # one candidate for a day is a hang, not a kernel
TRIALS_MAX = 100_000  # per target and problem
SHAPES_MAX = 256  # problem shapes in one recipe (each is a study per target)
VERIFY_SHAPES_MAX = 64
STUDIES_MAX = 1024  # targets x shapes in one run
SIZE_MAX = 2**40  # a problem size or a knob's value
RECIPE_BYTES_MAX = 1 << 20  # a recipe is a page of TOML; 1 MiB is far past any real one
NAME_CHARS_MAX = 128  # output.name and knob names: they become file and study names
STRING_CHARS_MAX = 256  # a string knob value
WORKERS_MAX = 64  # --workers: processes on one host
SHORTLIST_MAX = 256  # configs a static artifact keeps per result for `kt finalize` to time
SPILL_BYTES_MAX = 1 << 20  # per thread: far past any register file (a GPU thread has at most a few KB)


def integer(value, where: str, low: int, high: int, fix: str) -> int:
    """`value` as an int in low..high (booleans are not integers)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(f"{where}: must be an integer, not {type(value).__name__} ({shown(value)}); {fix}")
    if value < low:
        raise BadInput(f"{where}: must be at least {low}, not {value}; {fix}")
    if value > high:
        raise BadInput(f"{where}: must be at most {high}, not {shown(value)}; {fix}")
    return value


def seed(value, where: str) -> int:
    return integer(value, where, 0, SEED_MAX, f"give a seed from 0 to {SEED_MAX} (2**32-1), e.g. 0")


def trials(value, where: str) -> int:
    return integer(value, where, 1, TRIALS_MAX, f"give the candidates to evaluate per target and problem, "
                                                f"1 to {TRIALS_MAX}, e.g. 24")


def seconds(value, where: str, what: str = "seconds one candidate may take") -> float:
    """A positive, finite duration up to a day (nan, inf and 1e300 are refused)."""
    fix = f"give the {what}, more than 0 and at most {TIMEOUT_MAX_S:.0f} (a day), e.g. 120"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadInput(f"{where}: must be a number of seconds, not {type(value).__name__} ({shown(value)}); {fix}")
    if not (math.isfinite(value) and 0 < value <= TIMEOUT_MAX_S):
        raise BadInput(f"{where}: must be a positive, finite number of seconds, not {shown(value)}; {fix}")
    return float(value)


def spill_bytes(value, where: str) -> int:
    """A cap on the bytes a candidate may spill per thread (0: no spill at all)."""
    return integer(value, where, 0, SPILL_BYTES_MAX, "give the bytes a thread may spill before a candidate is "
                                                     "refused as `spills`, e.g. 256 (0: no spill at all)")


def shortlist(value, where: str) -> int:
    """How many of the best configs by estimate a static artifact keeps per result."""
    return integer(value, where, 1, SHORTLIST_MAX, f"give how many of the best estimated configs to keep for "
                                                   f"kt finalize, 1 to {SHORTLIST_MAX}, e.g. 8")


def count(items, where: str, most: int, what: str, fix: str) -> None:
    """At most `most` items in a list the user wrote."""
    if len(items) > most:
        raise BadInput(f"{where}: {len(items)} {what}; at most {most} are allowed: {fix}")


def size(value, where: str) -> int:
    """A problem size: a positive integer up to SIZE_MAX."""
    return integer(value, where, 1, SIZE_MAX, "sizes are positive integers, e.g. {M = 4096, N = 4096}")


def no_control_characters(value: str, where: str, what: str) -> str:
    """A string kt uses as a name or a path: no NUL or other control character in it."""
    bad = next((c for c in value if ord(c) < 32 or c == "\x7f"), None)
    if bad is not None:
        raise BadInput(f"{where}: {what} {shown(value)} contains the control character {bad!r}; remove it")
    return value


def shown(value, most: int = 60) -> str:
    """`repr(value)` cut to `most` characters, so that a message stays one readable line."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    text = repr(value)
    return text if len(text) <= most else text[:most] + "..."
