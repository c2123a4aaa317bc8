"""What `kt export` adds to a triton.Config list so that it launches what kt's launch function does at
every problem, not only at the tuned one: the module's HEURISTICS (the constexprs its launch computes
per call, as expressions of the kernel's arguments) as `@triton.heuristics` lambdas, its GRID as a grid
lambda; and the check, at every problem the artifact names, that config + heuristics + grid give the
arguments and grid kt's launch gave. What they do not reproduce is refused."""

from __future__ import annotations

import ast

from kt_cli.errors import BadInput

FIX = ("declare it in the module's HEURISTICS (and GRID) as expressions of the kernel's arguments "
       "(docs/kernel-protocol.md), or load the artifact with kt_cli.load")


def lambda_source(expression: str, names, where: str) -> str:
    """`lambda args: ...` reading each of the kernel's argument `names` from Triton's args dict."""

    class _Args(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id not in names:
                return node
            return ast.copy_location(ast.Subscript(ast.Name("args", ast.Load()), ast.Constant(node.id), ast.Load()),
                                     node)

    try:
        tree = ast.parse(expression, mode="eval")
    except (SyntaxError, TypeError):
        raise BadInput(f"{where}: {expression!r} is not a Python expression") from None
    return f"lambda args: {ast.unparse(_Args().visit(tree).body)}"


def compiled(declared: dict, names, where: str) -> tuple[dict, str | None]:
    """({name: lambda source} of the module's HEURISTICS, the GRID lambda source or None)."""
    heuristics = declared.get("heuristics") or {}
    if not isinstance(heuristics, dict) or not all(isinstance(v, str) for v in heuristics.values()):
        raise BadInput(f"{where}: HEURISTICS must map argument names to expressions (strings)")
    grid = declared.get("grid")
    if grid is not None and not isinstance(grid, str):
        raise BadInput(f"{where}: GRID must be an expression (a string), e.g. '(triton.cdiv(n_rows, ROWS),)'")
    return ({k: lambda_source(v, names, f"{where}: HEURISTICS[{k!r}]") for k, v in heuristics.items()},
            None if grid is None else lambda_source(grid, names, f"{where}: GRID"))


def _call(source: str, args: dict, what: str):
    import triton

    try:
        return eval(source, {"triton": triton})(args)  # noqa: S307 - the artifact's own declared expression
    except Exception as exc:  # noqa: BLE001 - any failure of the module's expression is its author's
        raise BadInput(f"{what}: {type(exc).__name__}: {exc}") from None


def check(where: str, config: dict, probes: list[dict], heuristics: dict, grid: str | None) -> None:
    """Refuse unless, at every probe (a launch kt's launch function made at some problem), `config`'s
    kwargs with `heuristics` applied in order give the constexprs the launch passed, and `grid` its grid."""
    for probe in probes:
        got = {**probe["scalars"], **config}
        for name, source in heuristics.items():
            got[name] = _call(source, got, f"{where}: HEURISTICS[{name!r}] at {probe['shape']}")
        for name, passed in probe["values"].items():
            if name not in got or got[name] != passed:
                exported = got.get(name, "nothing")
                raise BadInput(f"{where}: at problem {probe['shape']} kt's launch passes {name}={passed!r}, the "
                               f"exported config {exported!r}: a triton.Config holds one value; {FIX}")
        if grid is not None:
            made = tuple(_call(grid, got, f"{where}: GRID at {probe['shape']}"))
            if made != tuple(probe["grid"]):
                raise BadInput(f"{where}: at problem {probe['shape']} GRID gives {made}, kt's launch {tuple(probe['grid'])}")
