"""The kernel source of a recipe: the generator its [kernel] table names builds the kernel module
(kt's library, the user's own file, the DSL, or a language model's proposals)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kt_cli import plugins
from kt_cli.errors import BadInput
from kt_cli.evaluate.evaluator import Evaluator
from kt_cli.recipe.parse import Recipe


@dataclass(frozen=True)
class BuildContext:
    """What a generator that searches over kernel modules (the llm generator) needs besides its
    [kernel] table: the recipe (problem, search timeout, seed), the targets being tuned with their
    mode, the output directory for its own records, and workers to run candidates in.

    tune() passes it as `build(kernel_table, recipe_path, context=...)` only to generators that set
    `needs_context = True`; the others keep their two-argument build(). Candidate
    modules run only in the Evaluator's worker processes, never in the CLI process."""

    recipe: Recipe
    plans: tuple
    out_dir: Path

    def evaluator(self, source) -> Evaluator:
        """Workers for `source` (switch modules with Evaluator.use); the caller closes it."""
        return Evaluator(source, self.recipe, list(self.recipe.problem.verify_shapes), self.recipe.search.timeout)


def recipe_generator(recipe: Recipe):
    generators = plugins.generators()
    if recipe.generator not in generators:
        raise BadInput(f"{recipe.path}: kernel.generator: unknown generator {recipe.generator!r}; "
                       f"must be one of: {', '.join(sorted(generators))}")
    return generators[recipe.generator]


def kernel_source(recipe: Recipe, plans: list, out_dir: Path):
    """The generator's kernel module; a generator that declares `needs_context` gets a BuildContext."""
    generator = recipe_generator(recipe)
    if getattr(generator, "needs_context", False):
        return generator.build(recipe.kernel, recipe.path, context=BuildContext(recipe, tuple(plans), out_dir))
    return generator.build(recipe.kernel, recipe.path)
