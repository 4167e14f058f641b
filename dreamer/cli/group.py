"""The ``dream`` click group: loads each command's module on demand (``dreamer.cli.COMMANDS``)
and turns DreamError into a one-line ``Error:`` message and its exit code."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from dreamer.errors import DreamError
from dreamer.support import failures


class _Group(click.Group):
    """Loads commands on demand; maps DreamError to ``Error: message`` and its exit code."""

    def __init__(self, *args: Any, table: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.table = table  # command name -> "module:attribute" in dreamer.cli

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.table)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = self.table.get(cmd_name)
        if where is None:
            return None
        module, attribute = where.split(":")
        command = getattr(importlib.import_module(f"dreamer.cli.{module}"), attribute)
        return command if isinstance(command, click.Command) else None

    def invoke(self, ctx: click.Context):
        # Past `ulimit -f` a write raises EFBIG, explained below, instead of SIGXFSZ killing us.
        failures.ignore_file_size_signal()
        try:
            return super().invoke(ctx)
        except DreamError as e:
            click.echo(f"Error: {e}", err=True)
            sys.exit(e.exit_code)
        except OSError as e:
            known = failures.explain_os_error(e)
            if known is None:
                raise
            click.echo(f"Error: {known}", err=True)
            sys.exit(known.exit_code)


def build(table: dict[str, str]) -> click.Group:
    """The ``dream`` group over ``table`` (``dreamer.cli.COMMANDS``)."""

    @click.group(cls=_Group, table=table, context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(package_name="dreamer-memory")
    def main() -> None:
        """dreamer: long-term memory for LLM agents, consolidated in the background.

        \b
        Examples:
          dream demo /tmp/dream-demo            see a dream happen, offline
          dream note "User prefers dark mode" --importance 0.8
          dream search "editor theme"
          dream run                             consolidate the scratch into MEMORY.md
        """

    return main
