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

Sizes of a problem can be tied to each other (heads a multiple of key/value heads), so a stand-in can
be a problem the module refuses (its make_inputs or reference fails there): that is no verdict on a
candidate. The evaluator asks the judge once per stand-in (`accepts`); a refused one is tried again
with one size that is a multiple of the changed one in the real problem carried along at that real
multiple (each such size in turn, the first the module accepts kept), and left out, with the reason in
the verification, when the module refuses them all.
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


def tuned_problem_shapes(shape: dict, verify_shapes: list[dict], params: dict,
                        accepts=lambda stand_in: True) -> tuple[list[dict], list[dict]]:
    """Shapes that stand in for `shape` in static verification (none when it equals a verify shape),
    and the stand-ins left out because the module refuses them (`accepts` False) even with ties kept."""
    if not verify_shapes or any(shape == v for v in verify_shapes):
        return [], []
    base = _base(shape, verify_shapes)
    c = tile_bound(params)
    out, refused = [], []
    for name, value in shape.items():
        if name not in base or not _is_size(value) or value == base[name]:
            continue
        tries = (_within_budget(base, shape, name, c, tied) for tied in (None, *_tied_to(base, shape, name)))
        first = _within_budget(base, shape, name, c, None)
        usable = next((t for t in tries if t in verify_shapes or accepts(t)), None)
        if usable is None:
            refused.append(first)
        elif usable not in out and usable not in verify_shapes:
            out.append(usable)
    return out, refused


def _base(shape: dict, verify_shapes: list[dict]) -> dict:
    """The smallest verification shape of the problem's kind (the same keys: a flag such as CAUSAL set in
    both or in neither), else the smallest one without the keys the problem lacks."""
    same_kind = [v for v in verify_shapes if set(v) == set(shape)]
    smallest = min(same_kind or verify_shapes, key=_size)
    return {k: v for k, v in smallest.items() if k in shape}


def _tied_to(base: dict, real: dict, name: str) -> list[str]:
    """The sizes that may have to move with `name`: equal to it, or a multiple of it, in the real problem."""
    return [o for o, v in real.items() if o != name and o in base and _is_size(v) and real[name] > 0
            and v % real[name] == 0]


def _within_budget(base: dict, real: dict, name: str, c: int, tied: str | None) -> dict:
    derived = _stand_in(base, real, name, reduced_size(real[name], c), tied)
    while c > 16 and _size(derived) > MAX_ELEMENTS:
        c //= 2
        derived = _stand_in(base, real, name, reduced_size(real[name], c), tied)
    return derived


def _stand_in(base: dict, real: dict, name: str, size: int, tied: str | None) -> dict:
    """`base` with `name` at `size`, and the size `tied` (if any) at its real multiple of `name`."""
    derived = {**base, name: size}
    if tied is not None:
        derived[tied] = real[tied] // real[name] * size
    return derived


def _is_size(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _size(shape: dict) -> int:
    size = 1
    for v in shape.values():
        if _is_size(v):
            size *= max(v, 1)
    return size
