"""The `dsl` generator: the user's own @triton.jit kernel in a Python file that follows kt's kernel
protocol (docs/kernel-protocol.md); the recipe may rename the protocol functions."""

from __future__ import annotations

import ast
from pathlib import Path

from kt_cli.errors import BadInput
from kt_cli.hookspecs import hookimpl
from kt_cli.kernel import REQUIRED, KernelSource, parse_module_file

RENAMEABLE = REQUIRED + ("baseline", "flops", "bytes_moved", "traffic")


class DslGenerator:
    name = "dsl"

    def build(self, kernel_table: dict, recipe_path: Path) -> KernelSource:
        allowed = {"generator", "file", "name", "kernel", *RENAMEABLE}
        unknown = set(kernel_table) - allowed
        if unknown:
            raise BadInput(f"{recipe_path}: kernel.{sorted(unknown)[0]}: unknown key; the dsl generator takes: "
                           f"{', '.join(sorted(allowed - {'generator'}))}")
        file = kernel_table.get("file")
        if not isinstance(file, str):
            raise BadInput(f"{recipe_path}: kernel.file: missing; name the Python file holding the @triton.jit kernel")
        try:
            path = (recipe_path.parent / file).resolve()
            found = path.is_file()
        except OSError as exc:  # a name too long, a loop of links
            raise BadInput(f"{recipe_path}: kernel.file: {file!r}: {exc.strerror}; check the path") from None
        if not found:
            raise BadInput(f"{recipe_path}: kernel.file: {file!r} not found (relative to the recipe)")
        functions = {k: v for k, v in kernel_table.items() if k in RENAMEABLE}
        for key, value in functions.items():
            if not isinstance(value, str):
                raise BadInput(f"{recipe_path}: kernel.{key}: must be the name of a function in {file}")
        _, tree = parse_module_file(path)
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        for protocol in REQUIRED:
            name = functions.get(protocol, protocol)
            if name not in defined:
                key = f"kernel.{protocol}" if protocol in functions else f"kernel.{protocol} (default {protocol!r})"
                raise BadInput(f"{recipe_path}: {key}: {file} has no function {name!r}; define it or name yours")
        kernel_name = kernel_table.get("kernel")
        if kernel_name is not None and kernel_name not in defined:
            raise BadInput(f"{recipe_path}: kernel.kernel: {file} has no function {kernel_name!r}")
        return KernelSource(str(path), self.name, kernel_table.get("name", path.stem), functions)


@hookimpl
def kt_register_generators(register):
    register(DslGenerator())
