"""Constraints: a safe, bounded expression evaluator (never `eval`).

A constraint is parsed once, refused when it is longer, larger or deeper than a screen of arithmetic,
type-checked (a string knob is only ever compared with == or != to a string), and evaluated with a
bound on every number it computes: an exponent or a product that would leave the bound is a bad
input naming the constraint, found in microseconds instead of filling memory."""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass
from typing import Any, Callable

from kt_cli.errors import BadInput
from kt_cli.recipe.limits import STRING_CHARS_MAX, shown

CHARS_MAX = 1000
NODES_MAX = 400  # syntax-tree nodes, operators and names included
DEPTH_MAX = 40
NUMBER_BITS_MAX = 128  # every number a constraint computes stays below 2**128 in magnitude
NUMBER, STRING = "number", "string"
SYNTAX = ("constraints may use knob, shape and target names, numbers, strings compared with == or !=, "
          "+ - * / // % **, comparisons, and/or/not, min() and max()")

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
_CMPOPS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_FUNCS = {"min": min, "max": max}


class OutOfBounds(Exception):
    """A constraint computed a number past NUMBER_BITS_MAX, or one that is not a finite real."""


def bounded(value):
    """`value` if it is a finite real within the bound; else OutOfBounds."""
    if isinstance(value, int):
        if value.bit_length() > NUMBER_BITS_MAX:
            raise OutOfBounds(f"an integer past 2**{NUMBER_BITS_MAX}")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise OutOfBounds("a float past 1.8e308")
        return value
    raise OutOfBounds(f"a {type(value).__name__} number")  # (-8) ** 0.5 is complex


def bounded_pow(base, exponent):
    """base ** exponent, refused before it is computed when the result would leave the bound."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1 \
            and (abs(base).bit_length() - 1) * exponent > NUMBER_BITS_MAX:
        raise OutOfBounds(f"{shown(base)} ** {shown(exponent)}, past 2**{NUMBER_BITS_MAX}")
    try:
        return bounded(base ** exponent)
    except OverflowError:
        raise OutOfBounds(f"{shown(base)} ** {shown(exponent)}, past 1.8e308") from None


class _Compiler:
    """Turns an expression AST into nested closures over a dict of names; each step also says whether
    it yields a number or a string, so that a type error is found here rather than at run time."""

    def __init__(self, text: str, where: str, kinds: dict[str, str]):
        self.text, self.where, self.kinds = text, where, kinds

    def fail(self, what: str) -> BadInput:
        return BadInput(f"{self.where}: {what} in constraint {shown(self.text)}; {SYNTAX}")

    def build(self, node: ast.AST) -> tuple[Callable[[dict], Any], str]:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise self.fail(f"unsupported syntax {type(node).__name__}")
        return method(node)

    def _Expression(self, node):
        return self.build(node.body)

    def _Constant(self, node):
        value = node.value
        if type(value) is str and len(value) <= STRING_CHARS_MAX:
            return (lambda env: value), STRING
        if type(value) not in (int, float, bool):
            raise self.fail(f"unsupported syntax Constant {shown(value)}")
        try:
            bounded(value)
        except OutOfBounds as exc:
            raise self.fail(f"the number {shown(value)} ({exc})") from None
        return (lambda env: value), NUMBER

    def _Name(self, node):
        name = node.id
        if name.startswith("__"):
            raise self.fail(f"dunder name {name!r}")
        if name not in self.kinds:
            raise self.fail(f"unknown name {name!r} (known: {', '.join(sorted(self.kinds))})")
        return (lambda env: env[name]), self.kinds[name]

    def _number(self, node) -> Callable[[dict], Any]:
        fn, kind = self.build(node)
        if kind != NUMBER:
            raise self.fail(f"arithmetic on the string {shown(ast.unparse(node))}")
        return fn

    def _BinOp(self, node):
        left, right = self._number(node.left), self._number(node.right)
        if isinstance(node.op, ast.Pow):
            return (lambda env: bounded_pow(left(env), right(env))), NUMBER
        if type(node.op) not in _BINOPS:
            raise self.fail(f"unsupported operator {type(node.op).__name__}")
        op = _BINOPS[type(node.op)]
        return (lambda env: bounded(op(left(env), right(env)))), NUMBER

    def _UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            operand, _ = self.build(node.operand)
            return (lambda env: not operand(env)), NUMBER
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise self.fail(f"unsupported operator {type(node.op).__name__}")
        operand, sign = self._number(node.operand), -1 if isinstance(node.op, ast.USub) else 1
        return (lambda env: sign * operand(env)), NUMBER

    def _BoolOp(self, node):
        parts = [self.build(v)[0] for v in node.values]
        if isinstance(node.op, ast.And):
            return (lambda env: all(p(env) for p in parts)), NUMBER
        return (lambda env: any(p(env) for p in parts)), NUMBER

    def _Compare(self, node):
        first, kind = self.build(node.left)
        rest = []
        for op, comparator in zip(node.ops, node.comparators):
            if type(op) not in _CMPOPS:
                raise self.fail(f"unsupported comparison {type(op).__name__}")
            fn, right_kind = self.build(comparator)
            if right_kind != kind:
                raise self.fail(f"a comparison of a {kind} with a {right_kind} (never true)")
            if kind == STRING and type(op) not in (ast.Eq, ast.NotEq):
                raise self.fail("an ordering of strings (compare strings with == or != only)")
            rest.append((_CMPOPS[type(op)], fn))

        def compare(env):
            left = first(env)
            for op, right_fn in rest:
                right = right_fn(env)
                if not op(left, right):
                    return False
                left = right
            return True

        return compare, NUMBER

    def _Call(self, node):
        if isinstance(node.func, ast.Attribute):
            raise self.fail("an attribute access")
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCS or node.keywords:
            raise self.fail("a call other than min()/max()")
        if not node.args:
            raise self.fail(f"{node.func.id}() with no arguments")
        fn, args = _FUNCS[node.func.id], [self._number(a) for a in node.args]
        return (lambda env: fn(*(a(env) for a in args))), NUMBER

    def _Attribute(self, node):
        raise self.fail("an attribute access")

    def _Subscript(self, node):
        raise self.fail("a subscript")


@dataclass(frozen=True)
class Constraint:
    text: str
    where: str
    check: Callable[[dict], Any]
    uses: frozenset | None = None  # the names it reads (None: not known, any)

    def holds(self, env: dict) -> bool:
        """Whether the point `env` meets the constraint (a division by zero does not); a number past
        the bound is a BadInput naming the constraint."""
        try:
            return bool(self.check(env))
        except ZeroDivisionError:
            return False
        except OutOfBounds as exc:
            raise BadInput(f"{self.where}: constraint {shown(self.text)} computes {exc}; numbers in a "
                           f"constraint stay below 2**{NUMBER_BITS_MAX}: rewrite it") from None


def parse_expression(text: str, where: str) -> ast.Expression:
    """The syntax tree of a constraint, refused past CHARS_MAX characters, NODES_MAX nodes or DEPTH_MAX
    levels (so that neither the parser nor the evaluator recurses without end)."""
    if len(text) > CHARS_MAX:
        raise BadInput(f"{where}: constraint {shown(text)} is {len(text)} characters long; at most {CHARS_MAX}: "
                       "split it into several constraints (all of them must hold)")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise BadInput(f"{where}: constraint {shown(text)} is not an expression ({exc.msg})") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise BadInput(f"{where}: constraint {shown(text)} is not an expression ({type(exc).__name__})") from None
    nodes, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > NODES_MAX or depth > DEPTH_MAX:
            raise BadInput(f"{where}: constraint {shown(text)} is too large (more than {NODES_MAX} terms or "
                           f"{DEPTH_MAX} levels of nesting): split it into several constraints")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def compile_constraint(text: str, where: str, names) -> Constraint:
    """`names`: the names a constraint may use, a dict name -> NUMBER or STRING (a plain collection of
    names: all numbers)."""
    kinds = dict(names) if isinstance(names, dict) else dict.fromkeys(names, NUMBER)
    tree = parse_expression(text, where)
    check, _ = _Compiler(text, where, kinds).build(tree)
    return Constraint(text, where, check, frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)))
