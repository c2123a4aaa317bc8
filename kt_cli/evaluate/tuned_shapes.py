"""Static mode's stand-ins for the tuned problem: shapes small enough for the CPU interpreter that keep
what makes a candidate right or wrong at the real size.

A tiled kernel's correctness at size d depends on how d relates to its tile sizes: whether d spans
more than one tile, and the ragged remainder d mod T. Every tile size a candidate can have is one of
its integer parameters, so with C the smallest power of two at least as large as every one of them,
d' = 2C + (d mod C) keeps both for any power-of-two tile T <= C: d' spans at least two tiles of any
size (a kernel that covers a row with one tile is caught), and d' ≡ d (mod T) (the ragged last tile
is the real one). A dimension already below 3C is kept as it is.

Reducing every dimension at once can still leave a problem too large to interpret (a 32768-wide row
by 8192 rows), so the stand-ins take one dimension at a time to its reduced real size and the others
from the smallest verification shape: a row kernel is checked with its real row length and few rows,
and again with its real (reduced) row count and a short row. Bugs that need two large dimensions at
once (an int32 offset overflow) are left to measured mode, which verifies at the problem itself.

A stand-in stays within MAX_ELEMENTS (the product of its sizes): where 2C + (d mod C) would exceed it,
C is halved until it fits, so the interpreter's cost is bounded whatever the recipe (a 32768-row
softmax with 32768-wide blocks is checked on 2*512 + 0 rows of the short verification row, not
32768); tiles between the lowered C and the real one are then covered by the other stand-in only.
"""

from __future__ import annotations

MAX_TILE = 1 << 16  # parameters above this are not tile sizes (a seed, a byte count): they do not set C
MAX_ELEMENTS = 1 << 20  # a stand-in's product of sizes: what the CPU interpreter checks in seconds


def reduced_size(d: int, c: int) -> int:
    """The stand-in for size `d` when no tile is larger than `c` (a power of two)."""
    return d if d <= 3 * c else 2 * c + d % c


def tile_bound(params: dict) -> int:
    """The smallest power of two at least as large as every integer parameter (16 at least)."""
    sizes = [v for v in params.values() if isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_TILE]
    return 1 << max(4, (max(sizes, default=1) - 1).bit_length())


def tuned_problem_shapes(shape: dict, verify_shapes: list[dict], params: dict) -> list[dict]:
    """Shapes that stand in for `shape` in static verification (none when it equals a verify shape)."""
    if not verify_shapes or any(shape == v for v in verify_shapes):
        return []
    base = min(verify_shapes, key=lambda v: _size(v))
    c = tile_bound(params)
    out = []
    for name, value in shape.items():
        if name not in base or not isinstance(value, int) or isinstance(value, bool) or value == base[name]:
            continue
        derived = _within_budget(base, name, value, c)
        if derived not in out and derived not in verify_shapes:
            out.append(derived)
    return out


def _within_budget(base: dict, name: str, value: int, c: int) -> dict:
    derived = {**base, name: reduced_size(value, c)}
    while c > 16 and _size(derived) > MAX_ELEMENTS:
        c //= 2
        derived = {**base, name: reduced_size(value, c)}
    return derived


def _size(shape: dict) -> int:
    size = 1
    for v in shape.values():
        if isinstance(v, int) and not isinstance(v, bool):
            size *= max(v, 1)
    return size
