"""Honesty gates: pure AST analysis of a model-written kernel module before anything runs it.

A generated kernel must compute its answer in its own Triton kernels. `check(text)` returns the reason
the module is rejected, or "" when it passes. Rejected: calling the reference or baseline; torch ops
that compute (anything but allocation); `@` on tensors; other streams; threads, processes, clocks and
timers, file and network access (imports outside an allow-list); monkey-patching; results cached
across calls in module-level state; dynamic escapes (eval, exec, getattr, __import__, open...).
The task's problem functions (make_inputs, reference...) are kt's, not the model's: they are removed
from the model's text before the gates run and appended from the task afterwards.
"""

from __future__ import annotations

import ast

ALLOWED_IMPORTS = ("torch", "triton", "triton.language", "math", "typing", "__future__")
# torch calls that only allocate (the kernel writes the values) or describe types
ALLOWED_TORCH = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
                 "full_like", "arange", "finfo", "iinfo", "is_tensor", "Size"}
# tensor methods that compute or write values outside a kernel
TENSOR_COMPUTE = {
    "softmax", "log_softmax", "matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "sum", "mean", "exp", "log",
    "max", "min", "amax", "amin", "add", "add_", "mul", "mul_", "div", "div_", "sub", "sub_", "copy_", "fill_",
    "zero_", "clone", "cumsum", "prod", "norm", "tanh", "sigmoid", "relu", "pow", "sqrt", "rsqrt", "sort",
    "topk", "where", "abs", "neg", "index_copy_", "index_add_", "scatter_", "scatter", "gather", "masked_fill",
    "masked_fill_", "clamp", "clamp_", "logsumexp", "var", "std", "dot", "outer", "lerp", "square",
    "__matmul__", "record_stream", "set_", "detach_",
}
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "open", "getattr", "setattr", "delattr", "globals",
                   "locals", "vars", "input", "breakpoint", "memoryview"}
PROBLEM_NAMES = {"reference", "baseline"}
MUTATORS = {"append", "extend", "update", "setdefault", "insert", "add", "pop", "popitem", "clear",
            "__setitem__", "remove", "discard"}


class _Gate(ast.NodeVisitor):
    def __init__(self, tree: ast.Module):
        self.aliases: dict[str, str] = {}  # local name -> fully qualified module or object
        self.module_names = {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                             for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                             if isinstance(t, ast.Name)}
        self.module_names |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        self.function_depth = 0
        self.reasons: list[str] = []

    def reject(self, node: ast.AST, why: str) -> None:
        self.reasons.append(f"line {getattr(node, 'lineno', '?')}: {why}")

    def qualified(self, node: ast.AST) -> str:
        """`torch.nn.functional.softmax` for `F.softmax` after `import torch.nn.functional as F`."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return ""
        root = self.aliases.get(node.id, "")
        return ".".join([root, *reversed(parts)]) if root else ""

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_import(node, alias.name)
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.reject(node, "relative imports are not allowed")
        for alias in node.names:
            full = f"{module}.{alias.name}"
            self._check_import(node, full if full in ALLOWED_IMPORTS else module)
            self.aliases[alias.asname or alias.name] = full

    def _check_import(self, node: ast.AST, name: str) -> None:
        if name not in ALLOWED_IMPORTS:
            self.reject(node, f"import of {name!r}: kernels may import only {', '.join(ALLOWED_IMPORTS)} "
                              "(no threads, processes, clocks, files or network)")

    def _function(self, node) -> None:
        for decorator in node.decorator_list:
            name = self.qualified(decorator.func if isinstance(decorator, ast.Call) else decorator)
            if not name.startswith("triton.") or name.startswith("triton.autotune"):
                self.reject(decorator, f"decorator {name or ast.unparse(decorator)}: only @triton.jit and "
                                       "@triton.heuristics are allowed (kt does the tuning and the timing)")
        self.function_depth += 1
        self.generic_visit(node)
        self.function_depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.function_depth += 1
        self.generic_visit(node)
        self.function_depth -= 1

    def visit_Global(self, node: ast.Global) -> None:
        self.reject(node, f"global {', '.join(node.names)}: state kept across calls (a cached result)")

    visit_Nonlocal = visit_Global

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in PROBLEM_NAMES:
            self.reject(node, f"uses {node.id}(): the kernel must compute the answer itself")
        if node.id.startswith("__") and node.id != "__name__":
            self.reject(node, f"dunder name {node.id}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__"):
            self.reject(node, f"dunder attribute .{node.attr}")
        name = self.qualified(node)
        if name.startswith("triton.testing"):
            self.reject(node, f"{name}: timing utilities are not allowed in a kernel")
        if name.startswith("torch.cuda.") or name.startswith("torch.hip"):
            self.reject(node, f"{name}: streams, events and device control belong to kt, not the kernel")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult):
            self.reject(node, "@ (matrix product) computes the answer with torch")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in FORBIDDEN_CALLS:
            self.reject(node, f"{func.id}() is not allowed in a kernel module")
        name = self.qualified(func)
        if name.startswith("torch.") and name.split(".")[-1] not in ALLOWED_TORCH and not name.startswith("torch.cuda"):
            self.reject(node, f"{name}() computes with torch; only allocation ({', '.join(sorted(ALLOWED_TORCH))}) "
                              "is allowed outside the Triton kernels")
        elif isinstance(func, ast.Attribute) and not name and func.attr in TENSOR_COMPUTE:
            self.reject(node, f".{func.attr}() computes or writes values with torch outside the Triton kernels")
        elif (self.function_depth and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
              and func.value.id in self.module_names and func.attr in MUTATORS):
            self.reject(node, f"{func.value.id}.{func.attr}(): module-level state written at run time "
                              "(results cached across calls)")
        for keyword in node.keywords:
            if keyword.arg == "stream":
                self.reject(node, "stream=: kernels run on kt's stream")
        self.generic_visit(node)

    def _targets(self, node, targets) -> None:
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Attribute) and self.qualified(sub.value):
                    self.reject(node, f"assignment to {self.qualified(sub)}: monkey-patching an imported module")
                if (self.function_depth and isinstance(sub, (ast.Subscript, ast.Attribute))
                        and isinstance(sub.value, ast.Name) and sub.value.id in self.module_names):
                    self.reject(node, f"{ast.unparse(sub)} = ...: module-level state written at run time "
                                      "(results cached across calls)")

    def visit_Assign(self, node: ast.Assign) -> None:
        self._targets(node, node.targets)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._targets(node, [node.target])
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._targets(node, [node.target])
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._targets(node, node.targets)
        self.generic_visit(node)


def check(text: str) -> str:
    """Why the module is rejected ("" when it passes). A syntax error is reported by the caller."""
    tree = ast.parse(text)
    gate = _Gate(tree)
    gate.visit(tree)
    return "; ".join(dict.fromkeys(gate.reasons))
