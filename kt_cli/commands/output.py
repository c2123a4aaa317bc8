"""What every command prints the same way."""

from __future__ import annotations

import json

import click


def emit_json(data) -> None:
    """`--json`: indented, sorted, anything not JSON written as its str()."""
    click.echo(json.dumps(data, indent=2, sort_keys=True, default=str))
