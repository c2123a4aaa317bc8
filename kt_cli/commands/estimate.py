"""`kt estimate`: the cost model's estimate of given points of a recipe's space, its terms and rank."""

from __future__ import annotations

import click

from kt_cli.commands.output import emit_json, flag


@click.command()
@click.argument("recipe")
@click.option("--target", required=True, metavar="VENDOR:ARCH", help="The target to estimate for.")
@click.option("--points", "points_path", type=click.Path(dir_okay=False), metavar="FILE.jsonl",
              help="One JSON object of knob values a line, optionally with a \"problem\" table (default: the "
                   "kernel's SEEDS, else a few valid points of the space).")
def estimate(recipe, target, points_path):
    """Estimate points of RECIPE's space for TARGET with the static cost model: the time, the terms behind
    it, and the point's rank among the valid points of the space (all of them up to 512, else a fixed
    sample of 256)."""
    from tabulate import tabulate

    from kt_cli.point_estimates import estimate_points
    from kt_cli.recipe.library import resolve_recipe
    from kt_cli.recipe.parse import load_recipe
    from kt_cli.reports.format import params, seconds
    from kt_cli.types import shape_key

    rows = estimate_points(load_recipe(resolve_recipe(recipe)), target, points_path)
    if flag("json"):
        emit_json(rows)
        return
    table = [[r["point"], shape_key(r["problem"]), params(r["params"]),
              seconds(r["estimate"]["seconds"], "estimated") if "estimate" in r else f"{r['failure']}",
              rank(r) if "estimate" in r else r["message"][:80],
              terms(r["estimate"]) if "estimate" in r else ""] for r in rows]
    click.echo(tabulate(table, headers=["point", "problem", "params", "estimate", "rank", "terms"]))


def rank(row: dict) -> str:
    """`3 of 6 (all valid points)`, or of a sample; points of the set that did not compile are left out."""
    among = "all valid points" if row["ranking"] == "all" else "a fixed sample of valid points"
    failed = f", {row['ranking_failed']} did not compile" if row["ranking_failed"] else ""
    return f"{row['rank']} of {row['ranked_among']} ({among}{failed})"


def terms(estimate: dict) -> str:
    """Whatever terms the cost model returned besides `seconds`, as key=value."""
    def shown(value):
        return f"{value:.3g}" if isinstance(value, float) else str(value)

    return " ".join(f"{k}={shown(v)}" for k, v in estimate.items() if k != "seconds")
