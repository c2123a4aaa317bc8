"""`kt init FILE[:FUNCTION]`: a starting recipe for the user's own Triton kernel, and the protocol
functions the file still lacks (kt_cli.recipe.starter)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from kt_cli.commands.output import emit_json, flag, note
from kt_cli.errors import BadInput


@click.command(name="init")
@click.argument("kernel_file")
@click.option("--out", "out", default=None, help="Recipe to write (default: FILE's name with .toml, beside it).")
@click.option("--force", is_flag=True, help="Replace an existing recipe.")
def init(kernel_file: str, out: str | None, force: bool):
    """Write a recipe for the @triton.jit kernel in KERNEL_FILE (FILE or FILE:FUNCTION); print the
    protocol functions the file lacks (make_inputs, launch, reference)."""
    from kt_cli.recipe.starter import default_reference, glue_to_add, plan_init, starter_recipe

    path, tree, kernel, sizes, knobs = plan_init(kernel_file)
    recipe = Path(out) if out else path.with_suffix(".toml")
    if recipe.resolve() == path.resolve():
        raise BadInput(f"--out: {recipe} is the kernel file itself; name a .toml file")
    if recipe.exists() and not force:
        raise BadInput(f"--out: {recipe} exists; pass --force to replace it or --out to write another")
    if not recipe.parent.is_dir() or not os.access(recipe.parent, os.W_OK):
        raise BadInput(f"--out: cannot write in {recipe.parent}; name a writable place")
    text = starter_recipe(path, recipe.parent, kernel, sizes, knobs, default_reference(tree))
    fd, tmp = tempfile.mkstemp(dir=recipe.parent, prefix=f".{recipe.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, recipe)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    glue = glue_to_add(tree, kernel, sizes)
    if flag("json"):
        emit_json({"recipe": str(recipe), "kernel": kernel.name, "sizes": sizes, "autotuned": kernel.autotuned,
                   "glue": glue})
        return
    note(f"wrote {recipe} (kernel {kernel.name}"
         + (", space from its @triton.autotune configs" if kernel.autotuned else "") + ")")
    if glue:
        click.echo(f"# {path.name} lacks these protocol functions (docs/kernel-protocol.md); complete and add them:\n")
        click.echo(glue)
    note(f"next: kt tune {recipe}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
