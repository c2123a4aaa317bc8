"""The `templates` generator: kt's built-in kernel library, one module per kernel under kernels/."""

from __future__ import annotations

from pathlib import Path

from kt_cli.errors import BadInput
from kt_cli.hookspecs import hookimpl
from kt_cli.kernel import KernelSource

KERNELS_DIR = Path(__file__).parent / "kernels"
# In a checkout a link to the top-level recipes/; installed, the library's recipes copied beside kernels/.
RECIPES_DIR = Path(__file__).parent / "recipes"


def available() -> list[str]:
    return sorted(p.stem for p in KERNELS_DIR.glob("*.py") if not p.stem.startswith("_"))


class TemplatesGenerator:
    name = "templates"

    def build(self, kernel_table: dict, recipe_path: Path) -> KernelSource:
        unknown = set(kernel_table) - {"generator", "name"}
        if unknown:
            raise BadInput(f"{recipe_path}: kernel.{sorted(unknown)[0]}: unknown key; the templates generator takes: name")
        name = kernel_table.get("name")
        if name not in available():
            raise BadInput(f"{recipe_path}: kernel.name: unknown template {name!r}; must be one of: {', '.join(available())}")
        return KernelSource(str(KERNELS_DIR / f"{name}.py"), self.name, name)

    def recipes(self) -> dict[str, Path]:
        """The library's recipes (those of this generator) by file name: `kt tune softmax`."""
        import tomllib

        shipped = {}
        for path in sorted(RECIPES_DIR.glob("*.toml")):
            with path.open("rb") as f:
                if tomllib.load(f).get("kernel", {}).get("generator") == self.name:
                    shipped[path.stem] = path
        return shipped


@hookimpl
def kt_register_generators(register):
    register(TemplatesGenerator())
