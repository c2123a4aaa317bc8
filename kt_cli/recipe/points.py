"""A points file for `kt estimate`: JSON Lines, one point a line, each an object of knob values, with
an optional "problem" (or "shape") table naming one of the recipe's problems. Every error names the
file, the line and the fix."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kt_cli.errors import BadInput
from kt_cli.recipe.limits import shown

SHAPE_KEYS = ("problem", "shape")
POINTS_MAX = 1024


@dataclass(frozen=True)
class Point:
    params: dict
    shape: dict | None  # None: every problem of the recipe
    where: str  # `FILE:LINE`, or where a default point came from


def read_points(path: str | Path, shapes: tuple) -> list[Point]:
    """The points of the file at `path`; each named problem one of `shapes` (the recipe's problems).
    Knob names and values are checked against a space by check_point, once the space is known."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInput(f"--points: {path}: cannot be read ({getattr(exc, 'strerror', None) or exc}); give a JSON "
                       "Lines file, one object of knob values a line") from None
    points = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise BadInput(f"{where}: not JSON ({exc}); write one object a line, e.g. "
                           '{"BLOCK": 1024, "num_warps": 4}') from None
        if not isinstance(data, dict):
            raise BadInput(f"{where}: must be a JSON object of knob values, not {shown(data)}")
        shape = _shape(data, shapes, where)
        points.append(Point({k: v for k, v in data.items() if k not in SHAPE_KEYS}, shape, where))
    if not points:
        raise BadInput(f"--points: {path}: holds no point; write one object of knob values a line")
    if len(points) > POINTS_MAX:
        raise BadInput(f"--points: {path}: {len(points)} points; at most {POINTS_MAX}: split the file")
    return points


def _shape(data: dict, shapes: tuple, where: str) -> dict | None:
    given = [k for k in SHAPE_KEYS if k in data]
    if not given:
        return None
    shape = data[given[0]]
    if len(given) > 1 or shape not in list(shapes):
        have = "; ".join(json.dumps(s) for s in shapes)
        raise BadInput(f"{where}: {given[-1]}: {shown(shape)} is not a problem of the recipe; give one of {have} "
                       "(or leave the key out to estimate at every problem)")
    return dict(shape)


def check_point(point: Point, space, env_of) -> None:
    """`point` is a point of `space` that meets its constraints: every knob set, each to one of its values."""
    knobs = {p.name: p for p in space.params}
    names = ", ".join(knobs)
    for name, value in point.params.items():
        if name not in knobs:
            raise BadInput(f"{point.where}: {shown(name)} is not a knob of the space; its knobs are: {names}")
        if not knobs[name].contains(value):
            values = knobs[name].all_values()
            have = shown(list(values) if not isinstance(values, range) else values, 120)
            raise BadInput(f"{point.where}: {name}={shown(value)} is outside the space; {name} takes {have}")
    missing = [n for n in knobs if n not in point.params]
    if missing:
        raise BadInput(f"{point.where}: sets no {', '.join(missing)}; give every knob of the space ({names})")
    broken = space.violated(env_of(point.params))
    if broken is not None:
        raise BadInput(f"{point.where}: breaks the constraint {shown(broken.text)}; give a point that meets it")
