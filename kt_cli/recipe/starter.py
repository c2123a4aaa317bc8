"""A starting recipe (and, where the module lacks them, the protocol functions to add) for a Triton
kernel file, read from its syntax tree alone: nothing of the file runs in the CLI process.

What it reads: the @triton.jit functions and their arguments (`tl.constexpr` ones are knobs, `*_ptr`
ones are tensors), an @triton.autotune's configs (kt reads them as the space, so the recipe leaves the
space to the module) and its `key` (the problem's sizes), and the sizes make_inputs reads from
`shape[...]` where the module has one.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

from kt_cli.errors import BadInput
from kt_cli.kernel import parse_module_file

DEFAULT_SIZE = 4096  # a problem size the recipe starts with, to be replaced by the user's own


@dataclass
class KernelSignature:
    name: str
    arguments: list  # every argument, in order
    knobs: list  # the tl.constexpr arguments
    autotuned: bool = False
    autotune_key: list = field(default_factory=list)


def _decorator_name(node) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


def _is_constexpr(annotation) -> bool:
    return annotation is not None and "constexpr" in ast.unparse(annotation)


def kernels_in(tree: ast.Module) -> dict[str, KernelSignature]:
    """{name: signature} of the module's top-level functions decorated with triton.jit."""
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        names = [_decorator_name(d) for d in node.decorator_list]
        if "jit" not in names:
            continue
        args = node.args.args
        signature = KernelSignature(node.name, [a.arg for a in args], [a.arg for a in args if _is_constexpr(a.annotation)])
        for d in node.decorator_list:
            if _decorator_name(d) == "autotune" and isinstance(d, ast.Call):
                signature.autotuned = True
                for kw in d.keywords:
                    if kw.arg == "key" and isinstance(kw.value, (ast.List, ast.Tuple)):
                        signature.autotune_key = [e.value for e in kw.value.elts
                                                  if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        found[node.name] = signature
    return found


def keys_read(tree: ast.Module, function: str, argument: int) -> list[str] | None:
    """The keys `function` reads from its argument at position `argument` (`shape["M"]`,
    `params["BLOCK"]`), in order; None where the module has no such function."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function and len(node.args.args) > argument:
            shape = node.args.args[argument].arg
            keys = [n.slice.value for n in ast.walk(node)
                    if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == shape
                    and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)]
            return list(dict.fromkeys(keys))
    return None


def pick_kernel(path: Path, tree: ast.Module, function: str | None) -> KernelSignature:
    kernels = kernels_in(tree)
    if not kernels:
        raise BadInput(f"{path}: no @triton.jit function; name a file that defines the kernel")
    if function is not None:
        if function not in kernels:
            raise BadInput(f"{path}:{function}: not a @triton.jit function of the file; it has: "
                           f"{', '.join(kernels)}")
        return kernels[function]
    autotuned = [k for k in kernels.values() if k.autotuned]
    if len(kernels) == 1 or len(autotuned) == 1:
        return autotuned[0] if autotuned else next(iter(kernels.values()))
    raise BadInput(f"{path}: {len(kernels)} @triton.jit functions ({', '.join(kernels)}); name one: "
                   f"kt init {path.name}:NAME")


def _knob_values(name: str) -> list:
    upper = name.upper()
    if "BLOCK" in upper or "TILE" in upper:
        return [64, 128, 256, 512, 1024]
    if "STAGE" in upper:
        return [1, 2, 3]
    return [1, 2, 4]


def starter_recipe(path: Path, recipe_dir: Path, kernel: KernelSignature, sizes: list[str],
                   knobs: list[str] | None = None, reference: tuple[dict, str] | None = None) -> str:
    """The recipe text: every line the user may want to change is there, commented. `reference`:
    (configuration, where it comes from) that kt verifies against by default (default_reference)."""
    try:
        file = path.resolve().relative_to(recipe_dir.resolve()).as_posix()
    except ValueError:
        file = str(path.resolve())
    shape = ", ".join(f"{s} = {DEFAULT_SIZE}" for s in sizes) or f"N = {DEFAULT_SIZE}"
    lines = [f"# Written by `kt init {path.name}:{kernel.name}`: check the problem sizes, then `kt tune` this file.",
             "[kernel]", 'generator = "dsl"', f'file = "{file}"', f'kernel = "{kernel.name}"',
             *_reference_lines(kernel, knobs, reference), "",
             "[problem]", 'dtype = "float16"  # float32, float16, bfloat16, float8_e4m3',
             "# the sizes make_inputs reads from shape[...]; one table per problem to tune",
             f"shapes = [{{{shape}}}]", "",
             "[search]", "trials = 32", 'sampler = "tpe"', "timeout = 120  # seconds per candidate", ""]
    if kernel.autotuned:
        lines += ["# No [search.space]: kt searches the values of the kernel's @triton.autotune configs (each",
                  "# config is evaluated first). Add a [search.space] table to search other values."]
    else:
        lines += ["[search.space]"]
        # the knobs the module's launch reads from params, else the kernel's constexpr arguments
        chosen = kernel.knobs if knobs is None else knobs
        lines += [f"{k} = {_knob_values(k)}" for k in chosen if k not in ("num_warps", "num_stages")]
        lines += ["num_warps = [2, 4, 8]", "num_stages = [1, 2, 3]"]
    every, chosen = starter_targets()
    lines += ["", "[targets]", "# without a GPU of a target kt estimates it; with one, it verifies and times there",
              f"# every target: {', '.join(every)}", f"names = {chosen!r}".replace("'", '"'), ""]
    return "\n".join(lines)


def _reference_lines(kernel: KernelSignature, knobs: list[str] | None, reference: tuple[dict, str] | None) -> list:
    """The commented kernel.reference_config: the configuration kt verifies against by default where
    the file has one (uncommented, it changes nothing), else an example to complete."""
    if reference is not None:
        point, where = reference
        return ["# Without a reference function, candidates are checked against the kernel at this config;",
                f"# by default {where}, which this line names:", f"# reference_config = {_inline_table(point)}"]
    example = {k: _knob_values(k)[-1] for k in (kernel.knobs if knobs is None else knobs)
               if k not in ("num_warps", "num_stages")}
    return ["# Without a reference function, candidates are checked against the kernel at this config",
            "# (default: its first SEEDS point or @triton.autotune config), for example:",
            f"# reference_config = {_inline_table({**example, 'num_warps': 4})}"]


def _inline_table(point: dict) -> str:
    def value(v) -> str:
        return json.dumps(v) if isinstance(v, (str, bool)) else repr(v)

    return "{" + ", ".join(f"{k} = {value(v)}" for k, v in point.items()) + "}"


def default_reference(tree: ast.Module) -> tuple[dict, str] | None:
    """(configuration, where it comes from) that kt verifies a kernel without a reference function
    against when the recipe sets no kernel.reference_config (Kernel.reference_point): the module's first
    SEEDS point, else the first config of its first @triton.autotune, read as kt reads a triton.Config
    (its defaults included); None where the file has neither or they are not literals read unrun."""
    assigned = {node.targets[0].id: node.value for node in tree.body if isinstance(node, ast.Assign)
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)}
    if "SEEDS" in assigned:
        seeds = _literal(assigned["SEEDS"])
        if seeds is _UNREAD or (seeds and not isinstance(seeds[0], dict)):
            return None  # computed when the module runs
        if seeds:
            return dict(seeds[0]), "its first SEEDS point"
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and "jit" in [_decorator_name(d) for d in node.decorator_list]:
            for d in node.decorator_list:
                if _decorator_name(d) == "autotune" and isinstance(d, ast.Call):
                    configs = _autotune_configs(d, assigned)
                    if configs == []:
                        continue  # no config: kt takes the next kernel's first
                    first = _config_point(configs[0]) if configs else None
                    return (first, "its first @triton.autotune config") if first is not None else None
    return None


_UNREAD = object()  # what _literal gives for syntax that is not a literal


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNREAD


def _autotune_configs(decorator: ast.Call, assigned: dict) -> list | None:
    """The syntax of each config of @triton.autotune(configs=[...]), or of a module-level list it
    names; None where the list is computed."""
    configs = next((kw.value for kw in decorator.keywords if kw.arg == "configs"),
                   decorator.args[0] if decorator.args else None)
    if isinstance(configs, ast.Name):
        configs = assigned.get(configs.id)
    return list(configs.elts) if isinstance(configs, (ast.List, ast.Tuple)) else None


def _config_point(call) -> dict | None:
    """A `triton.Config({...}, num_warps=..., ...)` call of literals as the point kt reads from it
    (kt_cli.kernel.config_point); None where it is not one."""
    import triton

    from kt_cli.kernel import config_point

    if not (isinstance(call, ast.Call) and _decorator_name(call) == "Config"):
        return None
    args = [_literal(a) for a in call.args]
    options = {kw.arg: _literal(kw.value) for kw in call.keywords if kw.arg != "pre_hook"}
    if _UNREAD in args or _UNREAD in options.values() or None in options:
        return None
    try:
        return config_point(triton.Config(*args, **options))
    except TypeError:
        return None


def starter_targets() -> tuple[list, list]:
    """(every registered target, one of each vendor to start with: the middle generation it lists)."""
    from kt_cli import plugins

    names = list(plugins.targets())
    by_vendor: dict = {}
    for name in names:
        by_vendor.setdefault(name.split(":", 1)[0], []).append(name)
    return names, [listed[len(listed) // 2] for listed in by_vendor.values()]


OUTPUT_WORDS = ("out", "dst", "result", "res")
PROTOCOL = ("make_inputs", "reference", "launch")  # reference optional: else kernel.reference_config is the reference


def glue_to_add(tree: ast.Module, kernel: KernelSignature, sizes: list[str]) -> str:
    """The protocol functions the module lacks, as Python to complete and paste into it: inputs named
    after the kernel's pointer arguments (an argument named like an output is made empty), a launch
    with a 1-D grid over the first size, a reference to write."""
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    missing = [name for name in PROTOCOL if name not in defined]
    if not missing:
        return ""
    pointers = [a for a in kernel.arguments if a.endswith("ptr")]
    name = {a: (a[:-4] if a.endswith("_ptr") else a[:-3]) or a for a in pointers}
    outputs = [a for a in pointers if any(w in name[a].lower() for w in OUTPUT_WORDS)] or pointers[-1:]
    others = [a for a in kernel.arguments if a not in pointers and a not in kernel.knobs]
    dims = sizes or ["N"]
    size = ", ".join(f'shape["{d}"]' for d in dims)
    made = ", ".join(f'"{name[a]}": t.{"empty" if a in outputs else "randn"}({size}, dtype=dtype)' for a in pointers)
    tuned = [k for k in kernel.knobs if k not in ("num_warps", "num_stages")]
    call = [f'inputs["{name[a]}"]' if a in pointers else a for a in kernel.arguments
            if a not in kernel.knobs]
    if not kernel.autotuned:
        call += [f'{k}=params["{k}"]' for k in tuned]
    step = f'meta["{tuned[0]}"]' if tuned else "1024"
    blocks = {
        "make_inputs": [
            "def make_inputs(shape, dtype, t):",
            "    # every tensor the kernel reads or writes, made with kt's seeded factory t (t.randn, t.empty...)",
            f"    return {{{made}}}"],
        "reference": [
            "def reference(inputs):",
            "    # what the outputs must hold, computed in float64, by name: these names are the outputs kt checks",
            "    # (optional: without it, kt checks every candidate against the kernel at kernel.reference_config)",
            "    return {" + ", ".join(f'"{name[a]}": ...' for a in outputs) + "}"],
        "launch": [
            "def launch(k, inputs, params):",
            *(f"    {a} = ...  # TODO" for a in others),
            f"    grid = lambda meta: (triton.cdiv({others[0] if others else '...'}, {step}),)  # TODO: the kernel's grid",
            f"    k.{kernel.name}[grid]({', '.join(call)})"
            + ("  # kt supplies the autotuned arguments" if kernel.autotuned else "")],
    }
    return "\n\n\n".join("\n".join(blocks[n]) for n in missing) + "\n"


def plan_init(target: str) -> tuple[Path, ast.Module, KernelSignature, list[str], list[str] | None]:
    """(file, syntax tree, kernel, problem sizes, knobs its launch reads or None) for `kt init FILE[:FUNCTION]`."""
    file, _, function = target.partition(":")
    path = Path(file)
    if not path.is_file():
        raise BadInput(f"{file}: not found; name the Python file holding the @triton.jit kernel")
    _, tree = parse_module_file(path)
    kernel = pick_kernel(path, tree, function or None)
    sizes = keys_read(tree, "make_inputs", 0) or kernel.autotune_key
    return path, tree, kernel, sizes, keys_read(tree, "launch", 2)
