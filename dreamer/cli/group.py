"""The ``dream`` click group: loads each command's module on demand (``dreamer.cli.COMMANDS``)
and turns DreamError into a one-line ``Error:`` message and its exit code.

Other packages add commands through the ``dreamer.commands`` entry points, as plugins do for
simonw/llm: an entry point names a click command, under the command's name. The benchmarks
(``dream bench``, benchmarks/ in dreamer's repository) come that way.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from dreamer.errors import DreamError, UsageError
from dreamer.support import failures

ENTRY_POINTS = "dreamer.commands"
# Commands of dreamer's repository that live in a package of their own: how to get each.
ELSEWHERE = {
    "bench": "the benchmarks package: run 'pip install ./benchmarks' in a clone of dreamer"
}


def _added() -> dict[str, Any]:
    """The commands installed packages add: name -> entry point."""
    from importlib.metadata import entry_points

    return {point.name: point for point in entry_points(group=ENTRY_POINTS)}


@click.command(add_help_option=False, context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def _not_installed(ctx: click.Context, args: tuple[str, ...]) -> None:
    """A command whose package is not installed: one line naming the fix (exit 2)."""
    name = ctx.info_name or ""
    raise UsageError(f"'dream {name}' needs {ELSEWHERE[name]}")


class _Group(click.Group):
    """Loads commands on demand; maps DreamError to ``Error: message`` and its exit code."""

    def __init__(self, *args: Any, table: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.table = table  # command name -> "module:attribute" in dreamer.cli

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.table, *_added()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = self.table.get(cmd_name)
        if where is None:
            added = _added().get(cmd_name)
            if added is not None:
                command = added.load()
            elif cmd_name in ELSEWHERE:
                command = _not_installed
            else:
                return None
            return command if isinstance(command, click.Command) else None
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
