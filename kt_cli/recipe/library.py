"""Recipes that ship with installed plugins (kt's kernel library among them), by name: what
`kt tune NAME` resolves and `kt kernels` lists."""

from __future__ import annotations

import difflib
from pathlib import Path

from kt_cli.errors import BadInput


def library_recipes() -> dict[str, Path]:
    """Every shipped recipe by name, from each generator that ships some (a `recipes()` method)."""
    from kt_cli import plugins

    found: dict[str, Path] = {}
    for generator in plugins.generators().values():
        shipped = getattr(generator, "recipes", None)
        found.update(shipped() if shipped else {})
    return dict(sorted(found.items()))


def resolve_recipe(argument: str) -> Path:
    """The recipe file `argument` names: a path (anything with a separator or a .toml suffix, or an
    existing file), else a shipped recipe's name."""
    path = Path(argument)
    try:
        directory = path.is_dir()
    except OSError:  # a name too long, say: load_recipe says what is wrong with it
        directory = False
    if directory:
        raise BadInput(f"RECIPE {argument}: a directory, not a recipe; give a recipe .toml file or a library "
                       "kernel's name (kt kernels lists them)")
    if path.suffix == ".toml" or len(path.parts) > 1 or path.exists():
        return path
    library = library_recipes()
    if argument in library:
        return library[argument]
    near = difflib.get_close_matches(argument, list(library), n=1)
    hint = f"did you mean {near[0]!r}? " if near else ""
    raise BadInput(f"{argument}: no recipe file of that name and no library kernel; {hint}give a path to a "
                   f"recipe .toml or one of: {', '.join(library)} (kt kernels lists them)")
