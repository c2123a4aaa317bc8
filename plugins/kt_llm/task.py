"""The task a model solves (a library template or a dsl file), and the text surgery on proposals: pull
the code out of a reply, drop the model's own problem definitions, append the task's."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from kt_cli.errors import BadInput
from kt_cli.kernel import parse_module_file

# The problem is the task's: a model that redefines these could loosen the check it is judged by.
PROBLEM_NAMES = ("OUTPUTS", "VERIFY_SHAPES", "TOLERANCE", "make_inputs", "reference", "baseline", "flops",
                 "bytes_moved", "shape_of")
# Dropped from proposals and not taken from the task: bytes a kernel claims to move would feed the estimate.
DROPPED = PROBLEM_NAMES + ("traffic",)
APPENDIX = "# ---- the task's problem definition, appended by kt: proposals cannot change it ----"
_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Task:
    name: str
    path: Path
    text: str
    problem: str  # the task's imports and problem definitions, as source text

    @property
    def has_kernel(self) -> bool:
        """A task that is itself a full kernel module is the static-mode baseline."""
        return "launch" in _top_level_names(ast.parse(self.text))


def resolve_task(task: str, recipe_path: Path) -> Task:
    """`task` is a library template name, or a .py file (relative to the recipe) that defines the problem."""
    if task.endswith(".py"):
        path = (recipe_path.parent / task).resolve()
        if not path.is_file():
            raise BadInput(f"{recipe_path}: kernel.task: {task!r} not found (relative to the recipe)")
    else:
        from kt_cli import plugins

        library = plugins.generators().get("templates")
        if library is None:
            raise BadInput(f"{recipe_path}: kernel.task: no kernel library is loaded; give a .py file instead")
        path = Path(library.build({"generator": "templates", "name": task}, recipe_path).path)
    text, tree = parse_module_file(path)
    names = _top_level_names(tree)
    for required in ("make_inputs", "reference"):
        if required not in names:
            raise BadInput(f"{recipe_path}: kernel.task: {path.name} has no function {required!r}; the task must "
                           "define the problem (make_inputs, reference, flops)")
    return Task(path.stem, path, text, problem_block(text, tree))


def _top_level_names(tree: ast.Module) -> set[str]:
    return {name for node in tree.body for name in _defines(node)}


def _defines(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
        node, (ast.AnnAssign, ast.AugAssign)) else []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _span(node: ast.stmt) -> tuple[int, int]:
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return start, node.end_lineno


def problem_block(text: str, tree: ast.Module | None = None) -> str:
    tree = tree or ast.parse(text)
    lines = text.splitlines()
    keep = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
            or set(_defines(n)) & set(PROBLEM_NAMES)]
    return "\n\n".join("\n".join(lines[a - 1:b]) for a, b in map(_span, keep)) + "\n"


def strip_problem(code: str) -> str:
    """The model's module without its own definitions of the problem names."""
    return without(code, DROPPED)


def without(code: str, names: tuple[str, ...]) -> str:
    """`code` less its top-level definitions of `names`."""
    tree = ast.parse(code)
    drop = set()
    for node in tree.body:
        if set(_defines(node)) & set(names):
            a, b = _span(node)
            drop.update(range(a, b + 1))
    return "\n".join(line for i, line in enumerate(code.splitlines(), 1) if i not in drop).rstrip() + "\n"


def assemble(model_code: str, task: Task) -> str:
    return f"{model_code.rstrip()}\n\n\n{APPENDIX}\n{task.problem}"


def extract_code(reply: str) -> str | None:
    """The longest fenced Python block of a reply, or the whole reply when it is bare Python."""
    blocks = [b for b in _FENCE.findall(reply) if b.strip()]
    if blocks:
        return max(blocks, key=len)
    try:
        ast.parse(reply)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, or past the parser's limits
        return None
    return reply if "def launch" in reply else None
