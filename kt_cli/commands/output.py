"""What every command prints the same way."""

from __future__ import annotations

import json

import click


def emit_json(data) -> None:
    """`--json`: indented, sorted, anything not JSON written as its str()."""
    click.echo(json.dumps(data, indent=2, sort_keys=True, default=str))


def flag(name: str) -> bool:
    """A global flag (`debug`, `quiet`, `json`), given before the command's name or after it."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and (ctx.obj or {}).get(name))


def note(message: str) -> None:
    """A line for the user beside the results (progress, notes, 'wrote ...'), on stderr; --quiet drops it."""
    if not flag("quiet"):
        click.echo(message, err=True)
