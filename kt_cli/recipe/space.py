"""Search parameters, constraints (a safe expression evaluator, never `eval`), enumeration."""

from __future__ import annotations

import ast
import itertools
import math
import operator
from dataclasses import dataclass
from typing import Any, Callable

from kt_cli.errors import BadInput

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMPOPS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_FUNCS = {"min": min, "max": max}


class _Compiler:
    """Turns an expression AST into nested closures over a dict of names."""

    def __init__(self, text: str, where: str, names: set[str]):
        self.text, self.where, self.names = text, where, names

    def fail(self, what: str) -> BadInput:
        return BadInput(
            f"{self.where}: {what} in constraint {self.text!r}; constraints may use parameter, shape and "
            "target names, numbers, + - * / // % **, comparisons, and/or/not, min() and max()"
        )

    def build(self, node: ast.AST) -> Callable[[dict], Any]:
        if isinstance(node, ast.Expression):
            return self.build(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
            value = node.value
            return lambda env: value
        if isinstance(node, ast.Name):
            name = node.id
            if name.startswith("__"):
                raise self.fail(f"dunder name {name!r}")
            if name not in self.names:
                raise self.fail(f"unknown name {name!r} (known: {', '.join(sorted(self.names))})")
            return lambda env: env[name]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            op, left, right = _BINOPS[type(node.op)], self.build(node.left), self.build(node.right)
            return lambda env: op(left(env), right(env))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            op, operand = _UNARY[type(node.op)], self.build(node.operand)
            return lambda env: op(operand(env))
        if isinstance(node, ast.BoolOp):
            parts = [self.build(v) for v in node.values]
            if isinstance(node.op, ast.And):
                return lambda env: all(p(env) for p in parts)
            return lambda env: any(p(env) for p in parts)
        if isinstance(node, ast.Compare) and all(type(o) in _CMPOPS for o in node.ops):
            first = self.build(node.left)
            rest = [(_CMPOPS[type(o)], self.build(c)) for o, c in zip(node.ops, node.comparators)]

            def compare(env):
                left = first(env)
                for op, right_fn in rest:
                    right = right_fn(env)
                    if not op(left, right):
                        return False
                    left = right
                return True

            return compare
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                raise self.fail("an attribute access")
            if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCS or node.keywords:
                raise self.fail("a call other than min()/max()")
            fn, args = _FUNCS[node.func.id], [self.build(a) for a in node.args]
            if not args:
                raise self.fail(f"{node.func.id}() with no arguments")
            return lambda env: fn(*(a(env) for a in args))
        if isinstance(node, ast.Attribute):
            raise self.fail("an attribute access")
        if isinstance(node, ast.Subscript):
            raise self.fail("a subscript")
        raise self.fail(f"unsupported syntax {type(node).__name__}")


@dataclass(frozen=True)
class Constraint:
    text: str
    where: str
    check: Callable[[dict], Any]

    def holds(self, env: dict) -> bool:
        try:
            return bool(self.check(env))
        except ZeroDivisionError:
            return False


def compile_constraint(text: str, where: str, names: set[str]) -> Constraint:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise BadInput(f"{where}: constraint {text!r} is not an expression ({exc.msg})") from None
    return Constraint(text, where, _Compiler(text, where, names).build(tree))


@dataclass(frozen=True)
class Param:
    """A categorical list of values, or an integer range low..high by step (log: sampled in log space)."""

    name: str
    values: tuple = ()
    low: int | None = None
    high: int | None = None
    step: int = 1
    log: bool = False

    def all_values(self) -> list:
        if self.values:
            return list(self.values)
        if self.log:
            out, v = [], self.low
            while v <= self.high:
                out.append(v)
                v *= 2
            return out
        return list(range(self.low, self.high + 1, self.step))

    def suggest(self, trial) -> Any:
        if self.values:
            return trial.suggest_categorical(self.name, list(self.values))
        if self.log:  # powers of two between low and high: categorical keeps them exact
            return trial.suggest_categorical(self.name, self.all_values())
        return trial.suggest_int(self.name, self.low, self.high, step=self.step)


def parse_param(name: str, spec: Any, where: str) -> Param:
    if isinstance(spec, list):
        if not spec:
            raise BadInput(f"{where}: empty list of values; give at least one value")
        if not all(isinstance(v, (int, float, str, bool)) for v in spec):
            raise BadInput(f"{where}: values must be numbers, strings or booleans")
        return Param(name, values=tuple(spec))
    if isinstance(spec, dict):
        unknown = set(spec) - {"low", "high", "step", "log"}
        if unknown:
            raise BadInput(f"{where}: unknown key {sorted(unknown)[0]!r}; a range has low, high, step, log")
        low, high = spec.get("low"), spec.get("high")
        if not isinstance(low, int) or not isinstance(high, int) or low > high:
            raise BadInput(f"{where}: a range needs integers low <= high, e.g. {{low = 1, high = 8}}")
        step, log = spec.get("step", 1), spec.get("log", False)
        if not isinstance(step, int) or step < 1 or not isinstance(log, bool):
            raise BadInput(f"{where}: step must be a positive integer and log a boolean")
        if log and low < 1:
            raise BadInput(f"{where}: a log range (powers of two) needs low >= 1")
        return Param(name, low=low, high=high, step=step, log=log)
    raise BadInput(f"{where}: must be a list of values or a range table {{low, high, step, log}}")


@dataclass(frozen=True)
class SearchSpace:
    params: tuple[Param, ...]
    constraints: tuple[Constraint, ...]

    def size(self) -> int:
        return math.prod(len(p.all_values()) for p in self.params)

    def points(self):
        names = [p.name for p in self.params]
        for values in itertools.product(*(p.all_values() for p in self.params)):
            yield dict(zip(names, values))

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


def constraint_env(params: dict, shape: dict, properties: dict, dtype_bytes: int) -> dict:
    return {**properties, **shape, "dtype_bytes": dtype_bytes, **params}


def check_feasible(space: SearchSpace, shape: dict, properties: dict, dtype_bytes: int, where: str,
                   limit: int = 200_000) -> int:
    """Count the points that satisfy every constraint; refuse a space where none does."""
    if space.size() > limit:
        return space.size()  # too large to enumerate: the search prunes point by point
    rejected_by: dict[str, int] = {}
    valid = total = 0
    for point in space.points():
        total += 1
        broken = space.violated(constraint_env(point, shape, properties, dtype_bytes))
        if broken is None:
            valid += 1
        else:
            rejected_by[broken.text] = rejected_by.get(broken.text, 0) + 1
    if valid == 0:
        worst = max(rejected_by, key=rejected_by.get)
        raise BadInput(
            f"{where}: all {total} points violate the constraints for shape "
            f"{shape}; {rejected_by[worst]} are rejected by {worst!r}: widen the space or relax it"
        )
    return valid
