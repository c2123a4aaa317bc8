"""The shape of the code, as docs/design.md promises it: the core names no vendor, kt's own imports
form no cycle, and no function is longer than a screen."""

import ast
import re
from pathlib import Path

from tests.helpers import ROOT

CORE = ROOT / "kt_cli"
PACKAGES = [ROOT / "kt_cli", ROOT / "vendor_nvidia", ROOT / "vendor_amd", ROOT / "plugins"]
VENDOR_WORDS = re.compile(r"torch\.cuda|cuobjdump|ptxas|nvidia|\bamd\b|\bhip\b|rocm", re.IGNORECASE)
MAX_FUNCTION_LINES = 60


def _sources(roots):
    for root in roots:
        yield from sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _code_without_comments_and_docstrings(path: Path) -> str:
    """The module's code with comments and docstrings removed (what runs, and the strings it prints)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body[0] = ast.Pass()
    return ast.unparse(tree)  # unparse drops comments


def test_the_core_names_no_vendor_outside_comments_and_docstrings():
    found = [f"{path.relative_to(ROOT)}: {m.group(0)!r}" for path in _sources([CORE])
             for m in VENDOR_WORDS.finditer(_code_without_comments_and_docstrings(path))]
    assert not found, found


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT / "plugins" if path.is_relative_to(ROOT / "plugins") else ROOT)
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """kt modules `path` imports, at any depth of the file (imports inside functions count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found |= {n for n in names if n in known}
    return found


def test_kt_imports_form_no_cycle():
    modules = {_module_name(p): p for p in _sources(PACKAGES)}
    graph = {name: _imports(path, set(modules)) - {name} for name, path in modules.items()}
    # a package's __init__ importing its own modules is how a package is built, not a cycle
    graph = {n: {d for d in deps if not (d.startswith(n + ".") and modules[n].name == "__init__.py")}
             for n, deps in graph.items()}
    state, cycle = {}, []

    def visit(node, path):
        state[node] = "open"
        for dep in sorted(graph[node]):
            if state.get(dep) == "open":
                cycle.append(path[path.index(dep):] + [dep] if dep in path else path + [dep])
            elif dep not in state:
                visit(dep, path + [dep])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycle, " ; ".join(" -> ".join(c) for c in cycle)


def test_no_function_is_longer_than_a_screen():
    long = []
    for path in _sources(PACKAGES):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long
