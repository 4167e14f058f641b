"""``dream worker``: register workspaces in a PostgreSQL jobs table and run worker processes."""

from __future__ import annotations

import logging
import signal
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from dreamer.cli.common import emit_json, json_option
from dreamer.errors import UsageError
from dreamer.service import worker as workers
from dreamer.store import open_jobs
from dreamer.support.times import utc_now


def db_option(func: Any) -> Any:
    """Add ``--db URL`` (default: $DREAM_STORE_URL)."""
    return click.option(
        "--db",
        "db",
        envvar="DREAM_STORE_URL",
        required=True,
        metavar="URL",
        help="The PostgreSQL database holding the jobs table [default: $DREAM_STORE_URL].",
    )(func)


def workspaces_option(help_text: str) -> Any:
    """Add ``-w/--workspace PATH`` (repeatable; default: $DREAM_WORKSPACE)."""
    return click.option(
        "-w",
        "--workspace",
        "workspaces",
        multiple=True,
        type=click.Path(file_okay=False, path_type=Path),
        envvar="DREAM_WORKSPACE",
        help=help_text,
    )


@click.group()
def worker() -> None:
    """Run jobs of many workspaces from worker processes on any number of machines.

    Workspaces are registered in a jobs table in PostgreSQL; every worker claims due jobs
    (FOR UPDATE SKIP LOCKED) under a lease, so each due job runs once and a dead worker's job
    is taken over when its lease expires. See docs/guides/postgresql.md.

    \b
    Examples:
      dream worker add -w ~/agents/ada -w ~/agents/bob --db postgresql://dreamer@db/dreamer
      dream worker run --db postgresql://dreamer@db/dreamer
      dream worker list --db postgresql://dreamer@db/dreamer --json
    """


@worker.command()
@workspaces_option("A workspace to register; repeat for several [default: $DREAM_WORKSPACE].")
@db_option
@json_option
def add(workspaces: tuple[Path, ...], db: str, as_json: bool) -> None:
    """Register workspaces' jobs (a consolidation and a dream each) in the jobs table.

    A job already there keeps its schedule and takes the workspace's current interval. Every
    machine running workers must see the workspace at this same absolute path.

    \b
    Examples:
      dream worker add -w ~/agents/ada --db postgresql://dreamer@db/dreamer
      DREAM_STORE_URL=postgresql:///dreamer dream worker add -w /srv/agents/ada
    """
    if not workspaces:
        raise UsageError("name the workspaces to register with -w PATH (repeat for several)")
    with open_jobs(db) as queue:
        added = workers.add_workspaces(queue, [p.resolve() for p in workspaces], utc_now())
    if as_json:
        emit_json(added)
        return
    for row in added:
        state = "added" if row["new"] else "kept"
        click.echo(
            f"{state}: {row['workspace']} {row['job']} (due {row['due']:%Y-%m-%dT%H:%M:%SZ})"
        )


@worker.command()
@workspaces_option("A workspace to take out; repeat for several [default: $DREAM_WORKSPACE].")
@db_option
def remove(workspaces: tuple[Path, ...], db: str) -> None:
    """Take workspaces' jobs out of the jobs table (their files and memory stay).

    \b
    Examples:
      dream worker remove -w ~/agents/ada --db postgresql://dreamer@db/dreamer
    """
    if not workspaces:
        raise UsageError("name the workspaces to take out with -w PATH (repeat for several)")
    with open_jobs(db) as queue:
        for path in workspaces:
            count = queue.remove(str(path.resolve()))
            click.echo(f"removed {count} job(s) of {path.resolve()}")


@worker.command(name="list")
@workspaces_option("Only this workspace's jobs; repeat for several [default: all].")
@db_option
@json_option
def list_jobs(workspaces: tuple[Path, ...], db: str, as_json: bool) -> None:
    """Show the registered jobs: next due time, lease holder, runs so far.

    \b
    Examples:
      dream worker list --db postgresql://dreamer@db/dreamer
      dream worker list -w ~/agents/ada --json
    """
    with open_jobs(db) as queue:
        jobs = queue.jobs()
    if workspaces:
        wanted = {str(path.resolve()) for path in workspaces}
        jobs = [job for job in jobs if job["workspace"] in wanted]
    if as_json:
        emit_json(jobs)
        return
    for job in jobs:
        holder = f" held by {job['lease_owner']}" if job["lease_owner"] else ""
        click.echo(
            f"{job['workspace']} {job['kind']}: next {job['next_due']:%Y-%m-%dT%H:%M:%SZ},"
            f" {job['runs_count']} run(s), last {job['last_outcome'] or '-'}{holder}"
        )


@worker.command()
@db_option
@click.option("--id", "owner", default=None, help="This worker's name [default: host:pid].")
@click.option(
    "--lease",
    type=click.FloatRange(min=1, max=86_400),
    default=workers.DEFAULT_LEASE.total_seconds(),
    show_default=True,
    metavar="SECONDS",
    help="How long a claim lasts without a heartbeat; a dead worker's job waits this long.",
)
@click.option(
    "--poll",
    type=click.FloatRange(min=0.01, max=3600),
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait when no job is due.",
)
@click.option("--until-idle", is_flag=True, help="Exit once no job is due or held.")
@workspaces_option(
    "Register this workspace first (as 'dream worker add'); repeat for several "
    "[default: $DREAM_WORKSPACE, else none]."
)
def run(
    db: str,
    owner: str | None,
    lease: float,
    poll: float,
    until_idle: bool,
    workspaces: tuple[Path, ...],
) -> None:
    """Claim and run due jobs until stopped (Ctrl-C or SIGTERM finish the job in hand).

    \b
    Examples:
      dream worker run --db postgresql://dreamer@db/dreamer
      dream worker run --db postgresql:///dreamer -w ~/agents/ada --until-idle
      dream worker run --db postgresql:///dreamer --lease 60 --id box-1
    """
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s"
    )
    with open_jobs(db) as queue:
        if workspaces:
            workers.add_workspaces(queue, [p.resolve() for p in workspaces], utc_now())
        process = workers.Worker(
            queue, owner=owner, lease=timedelta(seconds=lease), poll_seconds=poll
        )
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, process.stop)
        ran = process.run(until_idle=until_idle)
    failed = process.counts["failed"]
    click.echo(f"{process.owner}: ran {ran} job(s), {failed} failed", err=True)
