"""`kt check`: CI's regression gate. Exit 0 pass, 1 regression or wrong result, 2 cannot run."""

import dataclasses
from pathlib import Path

import click

from kt_cli.commands.output import emit_json, flag


@click.command()
@click.argument("artifacts", nargs=-1, required=True, type=click.Path())
@click.option("--threshold", default="5%", show_default=True,
              help="Slowdown (vs the artifact's kernel/reference ratio) that counts as a regression.")
@click.option("--junit", type=click.Path(dir_okay=False), help="Write a JUnit XML report.")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False), help="Write a Markdown report.")
@click.option("--record", type=click.Path(dir_okay=False), help="Save the measured samples (JSON) for --replay.")
@click.option("--replay", type=click.Path(dir_okay=False),
              help="Decide from samples a --record run saved instead of measuring (no GPU needed).")
def check(artifacts, threshold, junit, markdown_path, record, replay):
    """Re-verify and re-time ARTIFACTS' best configs here; fail on a wrong result or a real slowdown."""
    from tabulate import tabulate

    from kt_cli.reports import check as checking
    from kt_cli.errors import BadInput, JobFailed

    if record and replay:
        raise BadInput("--record and --replay: give one; a replay measures nothing to record")
    limit = checking.parse_threshold(threshold)
    outcomes, samples = checking.run_check(list(artifacts), limit, replay)
    if flag("json"):
        emit_json([dataclasses.asdict(o) for o in outcomes])
    else:
        click.echo(tabulate(checking.table_rows(outcomes), headers=checking.HEADERS))
    if junit:
        Path(junit).write_text(checking.junit_xml(outcomes))
    if markdown_path:
        Path(markdown_path).write_text(checking.markdown(outcomes))
    if record:
        checking.save_recording(record, samples.recorded)
    problem = checking.cannot_run(outcomes)
    if problem:
        raise problem
    failing = [o for o in outcomes if o.status in checking.FAILING]
    if failing:
        raise JobFailed(f"{len(failing)} of {sum(o.checked for o in outcomes)} checked configs failed: "
                        + "; ".join(f"{o.name} {o.target} {o.problem}: {o.status}" for o in failing))
    how = f" (replayed from {replay})" if replay else ""
    if not flag("json"):
        click.echo(f"\nkt check: {sum(o.checked for o in outcomes)} configs pass{how}")
