"""`kt export`: an artifact's tuned configs in another tool's format."""

from pathlib import Path

import click

from kt_cli.commands.output import emit_json, flag, note

FORMATS = ("triton-configs",)


@click.command()
@click.argument("artifact", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="triton-configs", show_default=True,
              help="triton-configs: a Python module with CONFIGS = {target: [triton.Config, ...]}.")
@click.option("--out", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
def export(artifact, fmt, out):
    """Write ARTIFACT's tuned configs for another tool: triton.Config lists for @triton.autotune."""
    from kt_cli.artifact.export import triton_configs

    text = triton_configs(artifact)
    if out:
        Path(out).write_text(text)
        note(f"wrote {out}")
    elif flag("json"):
        emit_json({"artifact": str(artifact), "format": fmt, "text": text})
    else:
        click.echo(text, nl=False)
