"""`kt kernels`: the library's kernels (the recipes that ship with kt and its plugins), each with its
problem dimensions and knobs; any of them is tuned by name (`kt tune softmax`)."""

from __future__ import annotations

import click

from kt_cli.commands.output import emit_json, flag


def describe(name: str, path) -> dict:
    """One shipped recipe: its kernel, dtype, problem dimensions and shapes, and knobs (a knob of one
    vendor only carries that vendor's name)."""
    from kt_cli.recipe.parse import load_recipe

    recipe = load_recipe(path)
    knobs = []
    for key, value in recipe.search.space.items():
        knobs += [f"{sub} ({key})" for sub in value] if isinstance(value, dict) else [key]
    dims = list(dict.fromkeys(d for shape in recipe.problem.shapes for d in shape))
    return {"name": name, "kernel": recipe.kernel.get("name", name), "dtype": recipe.problem.dtype,
            "dimensions": dims, "shapes": list(recipe.problem.shapes), "knobs": knobs, "recipe": str(path)}


@click.command()
def kernels():
    """List the library's kernels: tune one with `kt tune NAME`."""
    from tabulate import tabulate

    from kt_cli.recipe.library import library_recipes

    rows = [describe(name, path) for name, path in library_recipes().items()]
    if flag("json"):
        emit_json(rows)
        return
    click.echo(tabulate([[r["name"], r["kernel"], r["dtype"], ",".join(r["dimensions"]), " ".join(r["knobs"])]
                         for r in rows], headers=["name", "kernel", "dtype", "problem dimensions", "knobs"]))
    click.echo("\ntune one with `kt tune NAME` (to change one, copy its recipe: `kt kernels --json` gives its path and tuned shapes)")
