"""`kt compare`: the same kernels side by side across vendors and devices."""

import click

from kt_cli.commands.output import flag, note
from kt_cli.reports.compare import FORMATS


@click.command()
@click.argument("artifacts", nargs=-1, required=True, type=click.Path())
@click.option("--vendors", help="Comma-separated vendors to show (default: all in the artifacts).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Write a % of peak bar chart (PNG).")
def compare(artifacts, vendors, fmt, plot_path):
    """Join ARTIFACTS (NAME.kt or directories of them) per kernel and problem across vendors."""
    from kt_cli.errors import BadInput
    from kt_cli.reports import compare as comparing

    if plot_path:
        comparing.require_matplotlib()
    if flag("json"):
        if fmt not in ("table", "json"):
            raise BadInput(f"--json and --format {fmt}: give one")
        fmt = "json"
    asked = [v.strip() for v in vendors.split(",") if v.strip()] if vendors else None
    result = comparing.compare(list(artifacts), asked)
    click.echo(comparing.render(result, fmt))
    if fmt == "csv":
        for line in result.notes:
            note(f"kt: note: {line}")
    if plot_path:
        comparing.plot(result, plot_path)
        note(f"wrote {plot_path}")
