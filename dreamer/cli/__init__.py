"""The ``dream`` command. Thin: parse, call the core, turn DreamError into a one-line message.

Each area of commands lives in its own module and registers itself on ``main``.
"""

from __future__ import annotations

import sys

import click

from dreamer.cli import bench, dreaming, forgetting, integrations, memory, service
from dreamer.cli import intake as migration
from dreamer.errors import DreamError


class _Group(click.Group):
    """Maps DreamError to ``Error: message`` on stderr and the error's exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except DreamError as e:
            click.echo(f"Error: {e}", err=True)
            sys.exit(e.exit_code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dreamer")
def main() -> None:
    """dreamer: long-term memory for LLM agents, consolidated in the background.

    \b
    Examples:
      dream demo /tmp/dream-demo            see a dream happen, offline
      dream note "User prefers dark mode" --importance 0.8
      dream search "editor theme"
      dream run                             consolidate the scratch into MEMORY.md
    """


for _module in (memory, dreaming, forgetting, service, migration, integrations, bench):
    _module.register(main)
