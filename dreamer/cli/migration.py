"""Commands of this area register here (see dreamer/cli/__init__.py)."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    """Add this module's commands to the dream command."""
