"""Commands that take text out of the memory: forget (by id or search) and redact --scan."""

from __future__ import annotations

import sys

import click

from dreamer.cli.common import emit_json, json_option, open_workspace, workspace_option
from dreamer.errors import UsageError
from dreamer.memory import redaction
from dreamer.support.times import utc_now


@click.command()
@click.argument("ids", nargs=-1, type=int)
@click.option("--search", "query", metavar="QUERY", help="Forget what this search finds.")
@click.option("--limit", type=int, default=5, show_default=True, help="Hits --search considers.")
@click.option("--reason", default="by request", show_default=True, help="Why, for the audit log.")
@click.option("--yes", is_flag=True, help="Do not ask before forgetting what --search found.")
@json_option
@workspace_option
def forget(
    ids: tuple[int, ...],
    query: str | None,
    limit: int,
    reason: str,
    yes: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Forget crystals for good: their text leaves the database, scratch, journal and MEMORY.md.

    A tombstone keeps each id, its hash, dates and the reason; the audit log records the forget
    without the text. With --search, the hits are shown first and forgotten only once you
    confirm (or with --yes). Nothing else in dreamer ever deletes.

    \b
    Examples:
      dream forget 42 57
      dream forget --search "staging password"
      dream forget --search "old phone number" --yes --reason "user asked"
    """
    if bool(ids) == bool(query):
        raise UsageError("name crystal ids or --search QUERY (one of the two); see --help")
    with open_workspace(workspace, create=False) as ws:
        now = utc_now()
        chosen = list(ids)
        if query:
            hits = ws.search(query, limit=limit, now=now)
            if not hits:
                raise UsageError(f"nothing found for {query!r}; nothing forgotten")
            click.echo(f"These {len(hits)} crystal(s) would be forgotten:", err=True)
            for hit in hits:
                click.echo(f"  #{hit.id}  {_preview(hit.text)}", err=True)
            if not yes:
                if not sys.stdin.isatty():
                    raise UsageError("not confirmed: pass --yes to forget without asking")
                click.confirm("Forget them for good?", abort=True, err=True)
            chosen = [hit.id for hit in hits]
        report = ws.forget(chosen, reason=reason, now=now)
    if as_json:
        emit_json(report.to_dict())
        return
    click.echo(
        f"Forgot {len(report.forgotten)} crystal(s) "
        f"({', '.join(f'#{i}' for i in report.forgotten)}): {report.memory_lines} line(s) of "
        f"MEMORY.md, {report.scratch_notes} pending note(s), {report.journal_rows} journal "
        "row(s) cleaned."
    )


def _preview(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@click.command()
@click.option("--scan", is_flag=True, help="Scan everything stored and redact in place.")
@click.option("--dry-run", is_flag=True, help="With --scan: count what would change only.")
@json_option
@workspace_option
def redact(scan: bool, dry_run: bool, as_json: bool, workspace: str | None) -> None:
    """Find secrets already stored (crystals, scratch, journal, MEMORY.md) and redact them.

    For workspaces written before redaction existed, or while memory.secrets.redact was off.
    Each secret becomes a [secret:kind#hash] placeholder; the old bytes are purged from the
    database files.

    \b
    Examples:
      dream redact --scan --dry-run
      dream redact --scan -w ~/agents/ada
    """
    if not scan:
        raise UsageError("say what to redact: 'dream redact --scan' scans the whole workspace")
    with open_workspace(workspace, create=False) as ws:
        report = redaction.scan(ws, now=utc_now(), dry_run=dry_run)
    if as_json:
        emit_json(report.to_dict())
        return
    verb = "Would redact" if dry_run else "Redacted"
    click.echo(
        f"{verb} {report.secrets} secret(s): {report.crystals} crystal(s), "
        f"{report.scratch_lines} scratch line(s), {report.memory_lines} MEMORY.md line(s), "
        f"{report.journal_rows} journal row(s)."
    )
