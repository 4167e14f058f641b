"""Commands that take text out of the memory: forget (by id or search) and redact --scan."""

from __future__ import annotations

import sys

import click

from dreamer.cli.common import emit_json, json_option, open_workspace, workspace_option
from dreamer.cli.progress import ProgressLine, quiet_option
from dreamer.errors import UsageError
from dreamer.memory import forget_search, redaction
from dreamer.memory.forget_search import FEW
from dreamer.memory.workspace import Workspace
from dreamer.support.times import utc_now


@click.command()
@click.argument("ids", nargs=-1)
@click.option(
    "--search",
    "query",
    metavar="QUERY",
    help='Forget the crystals that hold every word of QUERY (a "quoted phrase" as written).',
)
@click.option(
    "--all",
    "every",
    is_flag=True,
    help=f"With --search --yes: forget every match even when more than {FEW} crystals hold "
    "the words.",
)
@click.option("--reason", default="by request", show_default=True, help="Why, for the audit log.")
@click.option("--yes", is_flag=True, help="Do not ask before forgetting what --search found.")
@json_option
@workspace_option
def forget(
    ids: tuple[str, ...],
    query: str | None,
    every: bool,
    reason: str,
    yes: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Forget crystals for good: their text leaves the database, scratch, journal, MEMORY.md,
    the seed backup and the report page.

    A tombstone keeps each id, its hash, dates and the reason; the audit log records the forget
    without the text. Nothing else in dreamer ever deletes.

    --search selects only the crystals that hold every content word of QUERY (word forms
    count: "address" finds "addresses"; small words such as "the" are ignored) and every
    "quoted phrase" exactly as written (case and spacing aside). Crystals that are only
    similar in meaning are never selected, and the query is not logged as a search. The
    matches are listed with the matched words in [brackets] and forgotten only once you
    confirm (or with --yes). With --yes and more than 3 matches, --all must say "all of
    them"; otherwise narrow the query. memory/report.html, if there is one, is drawn again
    without the forgotten text.

    \b
    Examples:
      dream forget 42 57
      dream forget --search "staging password"
      dream forget --search '"12 Rua Augusta"' --yes --reason "user asked"
      dream forget --search "billing deploy" --yes --all
    """
    if bool(ids) == bool(query):
        raise UsageError("name crystal ids or --search QUERY (one of the two); see --help")
    if every and not query:
        raise UsageError("--all goes with --search QUERY; crystal ids are forgotten as named")
    chosen = [_crystal_id(raw) for raw in ids]
    with open_workspace(workspace, create=False) as ws:
        now = utc_now()
        if query:
            chosen = _confirmed(ws, query, yes=yes, every=every)
        report = ws.forget(chosen, reason=reason, now=now)
        if report.report_removed:  # drawn before with the text: drawn again without it
            from dreamer.service import report as memory_report

            memory_report.write(ws, now)
    if as_json:
        emit_json(report.to_dict())
        return
    click.echo(
        f"Forgot {len(report.forgotten)} crystal(s) "
        f"({', '.join(f'#{i}' for i in report.forgotten)}): {report.memory_lines} line(s) of "
        f"MEMORY.md, {report.scratch_notes} pending note(s), {report.journal_rows} journal "
        f"row(s), {report.backup_lines} seed backup line(s) cleaned"
        + ("; memory/report.html drawn again." if report.report_removed else ".")
    )


def _crystal_id(raw: str) -> int:
    if not raw.isdecimal() or not raw.isascii() or int(raw) < 1:
        raise UsageError(
            f"{raw!r} is not a crystal id; ids are whole numbers from 1, as 'dream search' shows"
        )
    return int(raw)


def _confirmed(ws: Workspace, query: str, *, yes: bool, every: bool) -> list[int]:
    """The ids --search selects, once listed and confirmed (or refused with one Error line)."""
    matches = forget_search.select(ws.store, query)
    if not matches:
        raise UsageError(
            f"no crystal holds every word of {query!r}; nothing forgotten ('dream search' "
            "shows what is near, to forget by id)"
        )
    click.echo(
        f"These {len(matches)} crystal(s) hold every word of {query!r} and would be forgotten:",
        err=True,
    )
    for match in matches:
        click.echo(f"  #{match.crystal.id}  {_preview(match.marked)}", err=True)
    if yes:
        if len(matches) > FEW and not every:
            raise UsageError(
                forget_search.too_many(
                    len(matches), query, "crystals", "add --all to forget them all"
                )
            )
    else:
        if not sys.stdin.isatty():
            raise UsageError("not confirmed: pass --yes to forget without asking")
        click.confirm("Forget them for good?", abort=True, err=True)
    return [match.crystal.id for match in matches]


def _preview(text: str, width: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@click.command()
@click.option("--scan", is_flag=True, help="Scan everything stored and redact in place.")
@click.option("--dry-run", is_flag=True, help="With --scan: count what would change only.")
@quiet_option
@json_option
@workspace_option
def redact(scan: bool, dry_run: bool, quiet: bool, as_json: bool, workspace: str | None) -> None:
    """Find secrets already stored (crystals, scratch, journal, MEMORY.md, seed backup) and
    redact them.

    For workspaces written before redaction existed, or while memory.secrets.redact was off.
    Each secret becomes a [secret:kind#hash] placeholder; the old bytes are purged from the
    database files, and memory/report.html, if there is one, is drawn again. On a terminal
    a progress line counts the crystals scanned (none when piped or with -q).

    \b
    Examples:
      dream redact --scan --dry-run
      dream redact --scan -w ~/agents/ada
    """
    if not scan:
        raise UsageError("say what to redact: 'dream redact --scan' scans the whole workspace")
    with open_workspace(workspace, create=False) as ws:
        now = utc_now()
        with ProgressLine("Scanning crystals", quiet=quiet) as progress:
            report = redaction.scan(ws, now=now, dry_run=dry_run, progress=progress)
        if report.report_removed:  # drawn before with the secrets: drawn again without them
            from dreamer.service import report as memory_report

            memory_report.write(ws, now)
    if as_json:
        emit_json(report.to_dict())
        return
    verb = "Would redact" if dry_run else "Redacted"
    click.echo(
        f"{verb} {report.secrets} secret(s): {report.crystals} crystal(s), "
        f"{report.scratch_lines} scratch line(s), {report.memory_lines} MEMORY.md line(s), "
        f"{report.backup_lines} seed backup line(s), {report.journal_rows} journal row(s)"
        + ("; memory/report.html drawn again." if report.report_removed else ".")
    )
