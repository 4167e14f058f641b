"""The ``dream`` command. Thin: parse, call the core, turn DreamError into a one-line message.

Each area of commands lives in its own module; ``COMMANDS`` says where each command is, and a
command's module is imported only when that command runs (or ``--help`` lists them all), so
``dream note`` does not pay for the scheduler, the benchmarks or the MCP SDK.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from dreamer.errors import DreamError
from dreamer.support import failures

# numpy's OpenBLAS starts a thread per core at import (nothing above imports numpy): ~90 ms
# of a fresh `dream note` on a 2-core machine, for vector sums that take microseconds on one
# thread. A user's own setting wins; the Python API (an agent's process) is left alone.
for _blas in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_blas, "1")

COMMANDS = {
    "init": "memory:init",
    "note": "memory:note",
    "search": "memory:search",
    "get": "memory:get",
    "reindex": "memory:reindex",
    "config": "memory:config",
    "run": "dreaming:run_command",
    "log": "dreaming:log_command",
    "show": "dreaming:show_command",
    "diff": "dreaming:diff_command",
    "restore": "dreaming:restore_command",
    "export": "dreaming:export_command",
    "import": "dreaming:import_command",
    "review": "controls:review_command",
    "adopt": "controls:adopt_command",
    "discard": "controls:discard_command",
    "pin": "controls:pin_command",
    "unpin": "controls:unpin_command",
    "pins": "controls:pins_command",
    "demo": "dreaming:demo_command",
    "forget": "forgetting:forget",
    "redact": "forgetting:redact",
    "serve": "service:serve",
    "tick": "service:tick",
    "consolidate": "service:consolidate",
    "status": "service:status",
    "hormones": "service:hormones_command",
    "report": "report:report",
    "feel": "service:feel",
    "migrate": "intake:migrate",
    "bootstrap": "intake:bootstrap",
    "ingest": "intake:ingest",
    "mcp": "integrations:mcp",
    "hook": "integrations:hook",
    "claude": "claude:claude",
    "bench": "bench:bench",
    "worker": "worker:worker",
}


class _Group(click.Group):
    """Loads commands on demand; maps DreamError to ``Error: message`` and its exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
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


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
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
