"""``dream report``: write the workspace's memory as one HTML page to look at."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import click

from dreamer.cli.common import open_workspace, workspace_option
from dreamer.dream import health
from dreamer.errors import UsageError
from dreamer.service import report as memory_report
from dreamer.support.times import parse_iso, utc_now


def parse_since(value: str | None) -> datetime | None:
    """``--since`` as a UTC time; a bad date is a usage error that shows the format."""
    if value is None:
        return None
    try:
        return parse_iso(value)
    except ValueError:
        raise UsageError(
            f"--since {value!r} is not a date; use e.g. 2026-03-01 or 2026-03-01T08:00:00Z"
        ) from None


@click.command(name="report")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    help="Where to write the page (its folder must exist); '-' prints it "
    "[default: <workspace>/memory/report.html].",
)
@click.option(
    "--since",
    metavar="DATE",
    default=None,
    help="Start the charts at DATE (ISO, UTC: 2026-03-01 or 2026-03-01T08:00:00Z) "
    "[default: the first record, at most a year back].",
)
@workspace_option
def report(output: str | None, since: str | None, workspace: str | None) -> None:
    """Write one HTML page that shows the memory: open it in any browser, even offline.

    The page holds a summary (crystals, pending notes, last and next dream, LLM cost and
    tokens to date, forgotten and redacted counts), the hormones over time with their
    stimuli, every dream with its outcome, cost, tokens, revisions and diff, the crystal
    lifecycle per day, the pointers of MEMORY.md (each checked: does it still find its
    topic?) and MEMORY.md itself. It loads nothing from the network and is readable by
    its owner only. Making it changes nothing in the workspace.

    \b
    Examples:
      dream report                                 writes <workspace>/memory/report.html
      dream report -w ~/agents/ada -o ~/ada.html
      dream report --since 2026-03-01 -o -  > march.html
    """
    start = parse_since(since)
    with open_workspace(workspace, create=False) as ws:
        now = utc_now()
        if output == "-":
            sys.stdout.write(memory_report.build(ws, now, start))
            return
        target = memory_report.write(
            ws, now, Path(output).expanduser() if output else None, since=start
        )
        warnings = health.lines(ws, now)
    click.echo(f"Report written to {target}")
    for line in warnings:  # also at the top of the page; quiet when all is well
        click.echo(f"Health: {line}")
