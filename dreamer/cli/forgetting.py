"""Commands that take text out of the memory: forget (by id or search) and redact --scan."""

from __future__ import annotations

import sys

import click

from dreamer.cli.common import emit_json, json_option, open_workspace, workspace_option
from dreamer.cli.progress import ProgressLine, quiet_option
from dreamer.errors import EXIT_OK, UsageError
from dreamer.memory import forget_pending, forget_search, redaction
from dreamer.memory.forget_search import FEW
from dreamer.memory.forgetting import ForgetReport
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
@click.option(
    "--forms",
    is_flag=True,
    help="With --search --yes: also forget the crystals that hold only another form of a word "
    "(cat for cats); without it they are listed and kept.",
)
@click.option(
    "--pending",
    is_flag=True,
    help="List the forget requests written in notes that wait for your confirmation.",
)
@click.option(
    "--confirm",
    "confirm_id",
    type=click.IntRange(min=1),
    metavar="ID",
    help="Forget what the waiting request ID (the note that asked) matched.",
)
@click.option(
    "--dismiss",
    "dismiss_id",
    type=click.IntRange(min=1),
    metavar="ID",
    help="Let the waiting request ID go: nothing is forgotten and it stops asking.",
)
@click.option("--reason", default="by request", show_default=True, help="Why, for the audit log.")
@click.option("--yes", is_flag=True, help="Do not ask before forgetting what --search found.")
@json_option
@workspace_option
def forget(
    ids: tuple[str, ...],
    query: str | None,
    every: bool,
    forms: bool,
    pending: bool,
    confirm_id: int | None,
    dismiss_id: int | None,
    reason: str,
    yes: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Forget crystals for good: their text leaves the database, scratch, journal, MEMORY.md,
    the seed backup and the report page.

    A tombstone keeps each id, its hash, dates and the reason; the audit log records the forget
    without the text. Nothing else in dreamer ever deletes.

    --search selects only the crystals that hold every content word of QUERY (small words
    such as "the" are ignored) and every "quoted phrase" exactly as written (case and spacing
    aside); a word inside a [secret:...] placeholder never counts. Crystals that are only
    similar in meaning are never selected, and the query is not logged as a search. The
    matches are listed with the matched words in [brackets] and forgotten only once you
    confirm (or with --yes). Those that hold only another form of a word ("cat" for "cats")
    are listed apart and kept unless you say so (--forms with --yes). A word that is part of
    two names ("Kofi Mensah", "Kofi Boateng") is asked about: --yes refuses and names them.
    With --yes and more than 3 matches, --all must say "all of them"; otherwise narrow the
    query. memory/report.html, if there is one, is drawn again without the forgotten text.
    A receipt says what was removed from where (counts and ids, never the text); the audit
    log keeps it. A forget request written in a note that a dream could not take on its own
    (many matches, a shared name, another word form) waits for you: --pending lists it,
    --confirm ID forgets its matches, --dismiss ID lets it go.

    \b
    Examples:
      dream forget 42 57
      dream forget --search "staging password"
      dream forget --search '"12 Rua Augusta"' --yes --reason "user asked"
      dream forget --search "billing deploy" --yes --all
      dream forget --search cats --yes --forms
      dream forget --pending
      dream forget --confirm 31
    """
    if pending or confirm_id or dismiss_id:
        if ids or query or sum(map(bool, (pending, confirm_id, dismiss_id))) > 1:
            raise UsageError("--pending, --confirm and --dismiss each go alone; see --help")
        _requests(workspace, confirm_id, dismiss_id, as_json=as_json)
        return
    if bool(ids) == bool(query):
        raise UsageError("name crystal ids or --search QUERY (one of the two); see --help")
    if (every or forms) and not query:
        raise UsageError(
            "--all and --forms go with --search QUERY; crystal ids are forgotten as named"
        )
    chosen = [_crystal_id(raw) for raw in ids]
    with open_workspace(workspace, create=False) as ws:
        now = utc_now()
        if query:
            chosen = _confirmed(ws, query, yes=yes, every=every, forms=forms)
        report = ws.forget(chosen, reason=reason, now=now)
        if report.report_removed:  # drawn before with the text: drawn again without it
            from dreamer.service import report as memory_report

            memory_report.write(ws, now)
    _receipt(report, as_json=as_json)


def _receipt(report: ForgetReport, *, as_json: bool) -> None:
    if as_json:
        emit_json(report.to_dict())
        return
    click.echo(
        f"Forgot {len(report.forgotten)} crystal(s) "
        f"({', '.join(f'#{i}' for i in report.forgotten)}). Removed, by place:"
    )
    click.echo("\n".join(report.receipt()))


def _requests(
    workspace: str | None, confirm_id: int | None, dismiss_id: int | None, *, as_json: bool
) -> None:
    """List, confirm or dismiss the forget requests that wait for the user."""
    with open_workspace(workspace, create=False) as ws:
        now = utc_now()
        if confirm_id:
            report = forget_pending.confirm(ws, confirm_id, now=now)
            if report.report_removed:
                from dreamer.service import report as memory_report

                memory_report.write(ws, now)
            _receipt(report, as_json=as_json)
            return
        if dismiss_id:
            forget_pending.dismiss(ws, dismiss_id, now=now)
            click.echo(f"Dismissed forget request {dismiss_id}: nothing forgotten.")
            return
        waiting = forget_pending.pending_forget_requests(ws)
        previews = {
            c.id: _preview(c.text, 100)
            for c in ws.store.crystals.crystals_by_id(
                sorted({i for w in waiting for i in w.matches})
            )
        }
    if as_json:
        emit_json([item.to_dict() for item in waiting])
        return
    if not waiting:
        click.echo("No forget request waits for you.")
        return
    for item in waiting:
        click.echo(f"Request {item.request_id} ({item.at}): forget {item.target!r}: {item.why}")
        for crystal_id in item.matches:
            click.echo(f"  #{crystal_id}  {previews.get(crystal_id, '(gone)')}")
    click.echo(
        "Confirm one with 'dream forget --confirm ID', let it go with 'dream forget --dismiss "
        "ID', or forget some of its matches by id ('dream forget 12')."
    )


def _crystal_id(raw: str) -> int:
    if not raw.isdecimal() or not raw.isascii() or int(raw) < 1:
        raise UsageError(
            f"{raw!r} is not a crystal id; ids are whole numbers from 1, as 'dream search' shows"
        )
    return int(raw)


def _confirmed(ws: Workspace, query: str, *, yes: bool, every: bool, forms: bool) -> list[int]:
    """The ids --search selects, once listed and confirmed (or refused with one Error line)."""
    matches = forget_search.select(ws.store, query)
    if not matches:
        raise UsageError(
            f"no crystal holds every word of {query!r}; nothing forgotten ('dream search' "
            "shows what is near, to forget by id)"
        )
    exact = [m for m in matches if m.exact]
    others = [m for m in matches if not m.exact]
    _list(
        f"These {len(exact)} crystal(s) hold every word of {query!r} and would be forgotten:",
        exact,
    )
    _list(
        f"These {len(others)} hold only another form of a word (as cat for cats)"
        + (" and would be forgotten too:" if forms else "; they are kept unless you say so:"),
        others,
    )
    if not yes and not sys.stdin.isatty():
        raise UsageError("not confirmed: pass --yes to forget without asking")
    chosen = exact + others if forms else exact
    if yes:
        if not chosen:
            raise UsageError(forget_search.forms_only(others, query, "add --forms to forget them"))
        names = forget_search.ambiguous_names(chosen, query)
        if names:
            raise UsageError(forget_search.which_name(names, query, "e.g. --search"))
        if len(chosen) > FEW and not every:
            raise UsageError(
                forget_search.too_many(
                    len(chosen), query, "crystals", "add --all to forget them all"
                )
            )
        return [match.crystal.id for match in chosen]
    if others and not forms:
        if click.confirm(f"Forget the {len(others)} with another form too?", err=True):
            chosen = exact + others
    chosen = _one_name(chosen, query)
    if not chosen:  # declined: not bad input, nothing to do
        click.echo("Nothing chosen; nothing forgotten.", err=True)
        sys.exit(EXIT_OK)
    if not click.confirm("Forget them for good?", err=True):
        click.echo("Nothing forgotten.", err=True)
        sys.exit(EXIT_OK)  # the user's answer, not an error
    return [match.crystal.id for match in chosen]


def _list(title: str, matches: list[forget_search.Match]) -> None:
    if not matches:
        return
    click.echo(title, err=True)
    for match in matches:
        click.echo(f"  #{match.crystal.id}  {_preview(match.marked)}", err=True)


def _one_name(chosen: list[forget_search.Match], query: str) -> list[forget_search.Match]:
    """Ask which name a word means while it is part of several (none is taken without it)."""
    while names := forget_search.ambiguous_names(chosen, query):
        word, candidates = next(iter(names.items()))
        click.echo(f"{word!r} is part of {len(candidates)} names:", err=True)
        for number, name in enumerate(candidates, 1):
            click.echo(f"  {number}) {name}", err=True)
        picked = click.prompt(
            "Which one (a number, or 'all')",
            type=click.Choice([*map(str, range(1, len(candidates) + 1)), "all"]),
            err=True,
        )
        if picked == "all":
            return chosen
        chosen = forget_search.only(chosen, candidates[int(picked) - 1])
    return chosen


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
