"""Search parameters (knobs), the space they span, and its enumeration. A space is never listed past
ENUMERATION_LIMIT points: larger ones are sampled point by point, each decoded from its index."""

from __future__ import annotations

import dataclasses
import itertools
import keyword
import math
import random
from dataclasses import dataclass
from typing import Any, Sequence

from kt_cli.errors import BadInput
from kt_cli.recipe import limits
from kt_cli.recipe.constraints import NUMBER, STRING, Constraint, compile_constraint  # noqa: F401 (re-exported)
from kt_cli.recipe.limits import shown

ENUMERATION_LIMIT = 200_000  # spaces larger than this are sampled, never listed
SAMPLED_POINTS = 20_000  # points of a larger space checked against the constraints before any work
_KINDS = {bool: "boolean", int: "integer", float: "float", str: "string"}


@dataclass(frozen=True)
class Param:
    """A categorical list of values, or an integer range low..high by step (log: sampled in log space)."""

    name: str
    values: tuple = ()
    low: int | None = None
    high: int | None = None
    step: int = 1
    log: bool = False

    def all_values(self) -> Sequence:
        """The values, as a sequence that is never longer in memory than it must be (a range stays a range)."""
        if self.values:
            return self.values
        if self.log:  # powers of two from low: at most log2(SIZE_MAX) of them
            return tuple(self.low * 2**k for k in range((self.high // self.low).bit_length()))
        return range(self.low, self.high + 1, self.step)

    @property
    def kind(self) -> str:
        """What a constraint sees of this knob: a number or a string."""
        return STRING if self.values and isinstance(self.values[0], str) else NUMBER

    def contains(self, value) -> bool:
        values = self.all_values()
        if isinstance(values, range):  # `in` on a range is O(1) only for an int
            return type(value) is int and value in values
        return any(type(v) is type(value) and v == value for v in values)

    def distribution(self):
        """The Optuna distribution `suggest` draws from."""
        import optuna

        if self.values or self.log:
            return optuna.distributions.CategoricalDistribution(list(self.all_values()))
        return optuna.distributions.IntDistribution(self.low, self.high, step=self.step)

    def suggest(self, trial) -> Any:
        if self.values:
            return trial.suggest_categorical(self.name, list(self.values))
        if self.log:  # powers of two between low and high: categorical keeps them exact
            return trial.suggest_categorical(self.name, list(self.all_values()))
        return trial.suggest_int(self.name, self.low, self.high, step=self.step)


def check_knob_name(name: str, where: str) -> str:
    """A knob is passed to the kernel by name and used in constraints: a Python identifier."""
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__") \
            or len(name) > limits.NAME_CHARS_MAX:
        raise BadInput(f"{where}: {shown(name)} is not a knob name; a knob is a Python identifier (letters, "
                       f"digits and _, at most {limits.NAME_CHARS_MAX} characters), e.g. BLOCK_N")
    return name


def parse_param(name: str, spec: Any, where: str) -> Param:
    check_knob_name(name, where)
    if isinstance(spec, list):
        return Param(name, values=_values(spec, where))
    if isinstance(spec, dict):
        return _range(name, spec, where)
    raise BadInput(f"{where}: must be a list of values or a range table {{low, high, step, log}}, "
                   f"not {type(spec).__name__}")


def _values(spec: list, where: str) -> tuple:
    """A knob's list: values of one type (booleans are not integers), finite, within bounds, each once."""
    if not spec:
        raise BadInput(f"{where}: empty list of values; give at least one value")
    odd = next((v for v in spec if type(v) not in _KINDS), None)
    if odd is not None:
        raise BadInput(f"{where}: values must be numbers, strings or booleans, not {type(odd).__name__}")
    kinds = sorted({_KINDS[type(v)] for v in spec})
    if len(kinds) > 1:
        raise BadInput(f"{where}: mixes {', '.join(kinds[:-1])} and {kinds[-1]} values ({shown(spec)}); a knob's values have one "
                       "type, e.g. [256, 512, 1024] (true is not 1, and 1024.0 is not 1024)")
    for i, value in enumerate(spec):
        _check_value(value, f"{where}[{i}]")
        if value in spec[:i]:
            raise BadInput(f"{where}: {shown(value)} is listed twice; list each value once")
    return tuple(spec)


def _check_value(value, where: str) -> None:
    if type(value) is int:
        limits.integer(value, where, -limits.SIZE_MAX, limits.SIZE_MAX,
                       f"a knob's integers lie within +-{limits.SIZE_MAX} (2**40)")
    elif type(value) is float and not math.isfinite(value):
        raise BadInput(f"{where}: {value!r} is not a finite number; give finite values")
    elif type(value) is str:
        if not value or len(value) > limits.STRING_CHARS_MAX:
            raise BadInput(f"{where}: a string value has 1 to {limits.STRING_CHARS_MAX} characters, "
                           f"not {len(value)}")
        limits.no_control_characters(value, where, "the value")


def _range(name: str, spec: dict, where: str) -> Param:
    unknown = set(spec) - {"low", "high", "step", "log"}
    if unknown:
        raise BadInput(f"{where}: unknown key {sorted(unknown)[0]!r}; a range has low, high, step, log")
    fix = "a range needs integers low <= high, e.g. {low = 1, high = 8}"
    for key in ("low", "high"):
        if key not in spec:
            raise BadInput(f"{where}.{key}: missing; {fix}")
        limits.integer(spec[key], f"{where}.{key}", -limits.SIZE_MAX, limits.SIZE_MAX, fix)
    low, high = spec["low"], spec["high"]
    if low > high:
        raise BadInput(f"{where}: low {low} is above high {high}; {fix}")
    step = limits.integer(spec.get("step", 1), f"{where}.step", 1, limits.SIZE_MAX, "a step is a positive integer")
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise BadInput(f"{where}.log: must be true or false, not {shown(log)}")
    if log and low < 1:
        raise BadInput(f"{where}: a log range (powers of two) needs low >= 1")
    return Param(name, low=low, high=high, step=step, log=log)


@dataclass(frozen=True)
class SearchSpace:
    params: tuple[Param, ...]
    constraints: tuple[Constraint, ...]

    def size(self) -> int:
        return math.prod(len(p.all_values()) for p in self.params)

    def point_at(self, index: int) -> dict:
        """The point at `index` in the order of itertools.product over the knobs (the last fastest)."""
        point = {}
        for p in reversed(self.params):
            values = p.all_values()
            index, i = divmod(index, len(values))
            point[p.name] = values[i]
        return {p.name: point[p.name] for p in self.params}

    def points(self):
        """Every point, in order; past ENUMERATION_LIMIT decoded one at a time, so nothing is listed."""
        if self.size() > ENUMERATION_LIMIT:
            return (self.point_at(i) for i in range(self.size()))
        names = [p.name for p in self.params]
        return (dict(zip(names, values)) for values in itertools.product(*(p.all_values() for p in self.params)))

    def sample(self, count: int, seed: int = 0):
        """`count` points drawn uniformly (with replacement), decoded one at a time."""
        rng, size = random.Random(seed), self.size()
        return (self.point_at(rng.randrange(size)) for _ in range(count))

    def violated(self, env: dict) -> Constraint | None:
        """The first constraint that `env` (params + shape + target properties) breaks, or None."""
        for c in self.constraints:
            if not c.holds(env):
                return c
        return None

    def valid_points(self, env_of, max_points: int | None = None):
        """The points, in order, that meet every constraint; `env_of(point)` gives the names a constraint
        sees (see constraint_env). At most `max_points` points are looked at."""
        for index, point in enumerate(self.points()):
            if max_points is not None and index >= max_points:
                return
            if self.violated(env_of(point)) is None:
                yield point

    def completion(self, partial: dict, env_of) -> dict | None:
        """`partial` (some knobs' values) made a full point that meets the constraints, its missing knobs
        taking the first values that do, in the order of points(); None when `partial` names a knob or a
        value outside the space, or no completion fits. `env_of(point)` is constraint_env's: the point's
        names laid over the same others (env_of({}) holds those). Found knob by knob, as
        _enumerate_valid finds them: the matmul module's seeds took 15-20 ms each when every combination
        of the knobs they leave out was tried in turn (a new study's first ask waited for them)."""
        known = {p.name: p for p in self.params}
        if not set(partial) <= set(known) or not all(known[n].contains(v) for n, v in partial.items()):
            return None
        fixed = SearchSpace(tuple(dataclasses.replace(p, values=(partial[p.name],)) if p.name in partial else p
                                  for p in self.params), self.constraints)
        found = _enumerate_valid(fixed, env_of({}), {}, limit=1)
        return fixed.point_at(found[0]) if found else None


def _enumerate_valid(space: SearchSpace, base: dict, rejected_by: dict, limit: int | None = None) -> list[int]:
    """The indices (in the order of SearchSpace.points) of the points that meet every constraint, found
    knob by knob: a constraint is checked as soon as every knob it names has a value, so a knob value it
    refuses is never combined with the knobs after it (the matmul recipe's 62208 points per shape: the
    UNITS == units constraint alone drops three in four before the others are looked at). `rejected_by`
    counts, per constraint, the points it refuses (its first refusal in constraint order at a knob).
    With `limit`, the first `limit` of them (the counts then cover what was looked at)."""
    params = space.params
    names = [p.name for p in params]
    values = [p.all_values() for p in params]
    # after knob k is set: the constraints whose last named knob is k (-1: they name no knob)
    checked_at: dict[int, list[Constraint]] = {}
    for c in space.constraints:
        named = [names.index(n) for n in (c.uses if c.uses is not None else names) if n in names]
        checked_at.setdefault(max(named, default=-1), []).append(c)
    below = [math.prod(len(v) for v in values[k + 1:]) for k in range(len(values))]  # points under one value of k
    env, valid = dict(base), []

    def refused(depth: int, points: int) -> bool:
        for c in checked_at.get(depth, ()):
            if not c.holds(env):
                rejected_by[c] = rejected_by.get(c, 0) + points
                return True
        return False

    def walk(k: int, index: int) -> None:
        if k == len(params):
            valid.append(index)
            return
        for i, value in enumerate(values[k]):
            if limit is not None and len(valid) >= limit:
                break
            env[names[k]] = value
            if not refused(k, below[k]):
                walk(k + 1, index + i * below[k])
        env.pop(names[k], None)

    if not refused(-1, math.prod(len(v) for v in values)):
        walk(0, 0)
    return valid


def constraint_env(params: dict, shape: dict, properties: dict, dtype_bytes: int) -> dict:
    return {**properties, **shape, "dtype_bytes": dtype_bytes, **params}


def feasible_points(space: SearchSpace, shape: dict, properties: dict, dtype_bytes: int, where: str,
                    limit: int = ENUMERATION_LIMIT) -> list[int] | None:
    """The indices of the points that meet every constraint, or, past `limit` points, None after checking
    SAMPLED_POINTS of them (the valid ones are then not known). A space where none does is refused, in
    one line."""
    size = space.size()
    exhaustive = size <= limit
    rejected_by: dict[Constraint, int] = {}
    if exhaustive:
        valid, total = _enumerate_valid(space, constraint_env({}, shape, properties, dtype_bytes), rejected_by), size
    else:
        valid, total = [], 0
        for index, point in enumerate(space.sample(SAMPLED_POINTS)):
            total += 1
            broken = space.violated(constraint_env(point, shape, properties, dtype_bytes))
            if broken is None:
                valid.append(index)
            else:
                rejected_by[broken] = rejected_by.get(broken, 0) + 1
    if not valid:
        worst = max(rejected_by, key=rejected_by.get)
        looked = f"all {total} points violate" if exhaustive else \
            f"none of {total} points sampled from its {size} points meets"
        raise BadInput(f"{where}: {looked} the constraints for shape {shape}; {rejected_by[worst]} are rejected "
                       f"by {worst.where.rsplit(': ', 1)[-1]} {shown(worst.text)}: widen the space or relax it")
    return valid if exhaustive else None
