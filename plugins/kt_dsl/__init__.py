"""The `dsl` generator: the user's own @triton.jit kernel in a Python file that follows kt's kernel
protocol (docs/kernel-protocol.md); the recipe may rename the protocol functions."""

from __future__ import annotations

import ast
from pathlib import Path

from kt_cli.errors import BadInput
from kt_cli.hookspecs import hookimpl
from kt_cli.kernel import REQUIRED, KernelSource, parse_module_file

RENAMEABLE = REQUIRED + ("reference", "baseline", "flops", "bytes_moved", "traffic")


class DslGenerator:
    name = "dsl"

    def build(self, kernel_table: dict, recipe_path: Path) -> KernelSource:
        allowed = {"generator", "file", "name", "kernel", "reference_config", *RENAMEABLE}
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
        defined = _defined(path)
        for protocol in REQUIRED:
            name = functions.get(protocol, protocol)
            if name not in defined:
                key = f"kernel.{protocol}" if protocol in functions else f"kernel.{protocol} (default {protocol!r})"
                raise BadInput(f"{recipe_path}: {key}: {file} has no function {name!r}; define it or name yours")
        kernel_name = kernel_table.get("kernel")
        if kernel_name is not None and kernel_name not in defined:
            raise BadInput(f"{recipe_path}: kernel.kernel: {file} has no function {kernel_name!r}")
        meta = {}
        reference_config = kernel_table.get("reference_config")
        if reference_config is not None:
            if not isinstance(reference_config, dict) or not reference_config or not all(
                    isinstance(v, (int, float, str)) for v in reference_config.values()):
                raise BadInput(f"{recipe_path}: kernel.reference_config: must be a table of knob values, the "
                               "configuration verification compares against, e.g. {BLOCK = 1024, num_warps = 4}")
            meta["reference_config"] = dict(reference_config)
        if "reference" in functions and functions["reference"] not in defined:  # optional, but named: must exist
            raise BadInput(f"{recipe_path}: kernel.reference: {file} has no function {functions['reference']!r}")
        return KernelSource(str(path), self.name, kernel_table.get("name", path.stem), functions, meta=meta)


def _defined(path: Path) -> set:
    """Names the module defines at its top level (functions and assignments), from its syntax tree."""
    _, tree = parse_module_file(path)
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return defined | {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                      if isinstance(t, ast.Name)}


@hookimpl
def kt_register_generators(register):
    register(DslGenerator())
