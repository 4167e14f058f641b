"""Commands of the dream cycle: run, log, show, diff, restore, demo."""

from __future__ import annotations

import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import click

from dreamer.cli.common import emit_json, json_option, open_workspace, workspace_option
from dreamer.cli.progress import ProgressLine, quiet_option
from dreamer.config import SYNTHESIZERS
from dreamer.dream import journal
from dreamer.dream.cycle import DreamResult
from dreamer.dream.cycle import run as run_dream
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.errors import DreamDeferred, DreamError, DreamRejected, UsageError
from dreamer.memory import forget_pending
from dreamer.memory.state import read_memory
from dreamer.memory.workspace import Workspace
from dreamer.support.files import atomic_write
from dreamer.support.times import utc_now


def _describe(result: DreamResult) -> str:
    if result.outcome == "skipped":
        return f"Dream skipped: {result.reason}. MEMORY.md is unchanged."
    if result.outcome == "candidate":
        return (
            f"Dream #{result.dream_id} wrote a candidate to memory/MEMORY.candidate.md "
            f"({len(result.consumed)} crystals consumed); MEMORY.md is unchanged. Review it with "
            "'dream review', then 'dream adopt' or 'dream discard'."
        )
    tokens = result.report.measures.get("tokens", {}) if result.report else {}
    # One number for what the dream consumed, the one 'dream log' shows; the new notes were
    # among its inputs.
    crystals = journal.plural(len(result.consumed), "crystal")
    line = (
        f"Dream #{result.dream_id} committed: MEMORY.md rewritten "
        f"({sum(tokens.values()):,} tokens, {crystals} consumed, with "
        f"{journal.plural(result.notes, 'new note')}, {result.synthesizer}"
        f"{'/' + result.model if result.model else ''}, {result.revisions} revision(s))."
    )
    if result.recovered:
        line += f" Recovered {result.recovered} notes left by an interrupted dream."
    if result.edited_during:
        line += " MEMORY.md was edited during the dream: dreamt again over the edited state."
    return line


@click.command(name="run")
@click.option("--force", is_flag=True, help="Dream even with fewer new notes than needed.")
@click.option(
    "--dry-run", is_flag=True, help="Show the candidate and the guard report; change nothing."
)
@click.option(
    "--synthesizer",
    type=click.Choice(SYNTHESIZERS),
    default=None,
    help="Who writes the dream [default: memory.dream.synthesizer].",
)
@click.option(
    "--model", default=None, help="The model that writes the dream [default: memory.dream.model]."
)
@click.option(
    "--min-chunks",
    "min_chunks_for_dream",
    type=click.IntRange(min=0),
    default=None,
    help="New notes needed to dream [default: memory.dream.minChunksForDream].",
)
@json_option
@workspace_option
def run_command(
    force: bool,
    dry_run: bool,
    synthesizer: str | None,
    model: str | None,
    min_chunks_for_dream: int | None,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Dream now: rebuild MEMORY.md from the old state, the scratch and new crystals.

    Skips (exit 0, and says so) unless enough new notes arrived since the last dream
    (memory.dream.minChunksForDream). Exit codes: 0 committed or skipped, 3 rejected by the
    guards (MEMORY.md unchanged, notes back in the scratch), 4 deferred (MEMORY.md was edited
    by hand during the dream, and again after a second try: the edit stands, the notes wait),
    1 failed, 2 bad usage. A dry run exits 3 when the candidate would be rejected.

    \b
    Examples:
      dream run
      dream run --force --dry-run
      dream run --json -w ~/agents/ada
      dream run --synthesizer offline --min-chunks 3
    """
    overrides = {
        "synthesizer": synthesizer,
        "model": model,
        "min_chunks_for_dream": min_chunks_for_dream,
    }
    with open_workspace(workspace, create=False, overrides=overrides) as ws:
        ws.init()
        try:
            result = run_dream(ws, now=utc_now(), force=force, dry_run=dry_run)
        except DreamError as e:
            if not as_json:
                raise
            # Scripts asked for JSON: give them the outcome as JSON too, with the exit code.
            emit_json(
                {
                    "outcome": "rejected"
                    if isinstance(e, DreamRejected)
                    else "deferred"
                    if isinstance(e, DreamDeferred)
                    else "failed",
                    "error": str(e),
                    "error_type": type(e).__name__,
                    "reasons": e.reasons if isinstance(e, DreamRejected) else [],
                    "dream_id": e.dream_id,
                }
            )
            sys.exit(e.exit_code)
    if as_json:
        emit_json(result.to_dict())
    elif result.outcome == "dry-run":
        click.echo(result.state_text, nl=False)
        click.echo("\n--- guard report ---")
        report = result.report
        click.echo("ok: every guard passed" if report and report.ok else "rejected:")
        for critique in report.critiques if report else []:
            click.echo(f"  - {critique}")
        for fix in result.pointer_fixes:
            click.echo(f"  * {fix}")
        click.echo(f"Dry run ({result.reason}): nothing changed.")
    else:
        click.echo(_describe(result))
    if result.outcome == "dry-run" and result.report and not result.report.ok:
        sys.exit(3)


@click.command(name="log")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@json_option
@workspace_option
def log_command(limit: int, as_json: bool, workspace: str | None) -> None:
    """List the dream journal, newest first (committed, skipped, rejected, deferred, failed...).

    \b
    Examples:
      dream log
      dream log --limit 5 --json
    """
    with open_workspace(workspace, create=False) as ws:
        rows = ws.store.journal.dream_entries(limit)
        totals = ws.store.journal.dream_totals()
        waiting = forget_pending.lines(ws)  # a request in a note that needs the user
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("No dreams yet; run 'dream run' (or 'dream run --force').")
        return
    for row in rows:
        tokens = f"{journal.input_tokens(row)}/{row['output_tokens'] or 0} tok"
        click.echo(
            f"#{row['id']:<4} {row['started_at']}  {row['outcome']:<9} "
            f"{row['synthesizer'] or '-':<11} consumed {row['consumed']:<3} "
            f"critiques {row['critiques']:<2} {tokens:>14} ${row['cost_usd'] or 0:.4f}  "
            f"{row['reason'] or ''}"
        )
    cached = int(totals["cache_read_tokens"]) + int(totals["cache_write_tokens"])
    click.echo(
        f"total: {journal.plural(int(totals['dreams']), 'dream')}, "
        f"{journal.input_tokens(totals)} input"
        + (f" ({cached} from the prompt cache)" if cached else "")
        + f" and {totals['output_tokens']} output tokens, ${totals['cost_usd']:.4f}"
    )
    for line in waiting:
        click.echo(f"Waiting: {line}")


@click.command(name="show")
@click.argument("dream_id", type=int)
@json_option
@workspace_option
def show_command(dream_id: int, as_json: bool, workspace: str | None) -> None:
    """Show one dream: outcome, reason, critiques, cost, and the state it wrote.

    \b
    Example:
      dream show 3
    """
    with open_workspace(workspace, create=False) as ws:
        entry = ws.store.journal.get_dream(dream_id)
    if as_json:
        emit_json(entry)
        return
    for key in (
        "id",
        "started_at",
        "outcome",
        "reason",
        "synthesizer",
        "model",
        "input_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "output_tokens",
        "cost_usd",
        "error",
    ):
        if entry.get(key) is not None:
            click.echo(f"{key}: {entry[key]}")
    synthesis = (entry.get("inputs") or {}).get("synthesis") or {}
    if synthesis.get("tries"):
        click.echo(f"synthesis: {synthesis['seconds']:.1f} s over {synthesis['tries']} call(s)")
    click.echo(f"consumed: {len(entry.get('consumed') or [])} crystals")
    for drop in (entry.get("inputs") or {}).get("dropped_lines") or []:
        click.echo(f"dropped from {drop['section']}: {drop['line']}")
        click.echo(f"  because {drop['reason']}")
    for number, critiques in enumerate(entry.get("critiques") or [], start=1):
        click.echo(f"critiques of candidate {number}:")
        for critique in critiques:
            click.echo(f"  - {critique}")
    text = journal.candidate_text(entry)
    if text:
        label = "state written" if entry.get("new_state") else "last candidate (not written)"
        click.echo(f"--- {label} ---")
        click.echo(text, nl=False)


@click.command(name="diff")
@click.argument("dream_id", type=int, required=False)
@workspace_option
def diff_command(dream_id: int | None, workspace: str | None) -> None:
    """Show what a dream changed in MEMORY.md as a unified diff (default: the newest).

    \b
    Examples:
      dream diff
      dream diff 3 | less
    """
    with open_workspace(workspace, create=False) as ws:
        if dream_id is None:
            dream_id = ws.store.journal.latest_dream_id()
            if dream_id is None:
                raise UsageError("no dream has written MEMORY.md yet; run 'dream run --force'")
        entry = ws.store.journal.get_dream(dream_id)
    text = journal.diff(entry)
    click.echo(text if text else f"Dream {dream_id} changed nothing.", nl=not text)


@click.command(name="restore")
@click.argument("dream_id", type=int)
@click.option("--before", is_flag=True, help="Restore the state the dream replaced instead.")
@workspace_option
def restore_command(dream_id: int, before: bool, workspace: str | None) -> None:
    """Put back MEMORY.md as a dream wrote it (or, with --before, as it was before it).

    The restore is journaled as its own row, so it can be undone the same way.

    \b
    Examples:
      dream restore 3
      dream restore 4 --before
    """
    with open_workspace(workspace, create=False) as ws:
        row = journal.restore(ws, dream_id, utc_now(), before=before)
    side = "before" if before else "after"
    click.echo(f"Restored MEMORY.md as it was {side} dream {dream_id} (journal #{row}).")


@click.command(name="export")
@click.option(
    "--to",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write here instead of the workspace's MEMORY.md (its folder must exist; with --all: "
    "the JSONL file, default dreamer-export.jsonl).",
)
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Export the whole memory (crystals with provenance, tombstones without text, the "
    "journal, MEMORY.md) as one JSONL file that 'dream import' restores; see "
    "docs/guides/export-import.md.",
)
@click.option(
    "--markdown",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="With --all, also write a new folder of Markdown files with frontmatter, one per crystal.",
)
@quiet_option
@workspace_option
def export_command(
    to: Path | None, everything: bool, markdown: Path | None, quiet: bool, workspace: str | None
) -> None:
    """Write MEMORY.md from the store's committed state (a PostgreSQL state row, else the
    journal's newest committed state), e.g. on a machine that did not run the dream. With
    --all, write the whole workspace to one file another machine or backend imports, with a
    progress line on a terminal (none when piped or with -q).

    \b
    Examples:
      dream export -w /srv/agents/ada
      dream export --to /tmp/ada-MEMORY.md
      dream export --all --to ada.jsonl --markdown ada-notes
    """
    if markdown is not None and not everything:
        raise UsageError("--markdown goes with --all: dream export --all --markdown DIR")
    if not everything:
        with open_workspace(workspace, create=False) as ws:
            path, source = journal.export(ws, to)
        click.echo(f"Wrote {path} from the {source}.")
        return
    from dreamer.agents import export

    target = to or Path("dreamer-export.jsonl")
    if markdown is not None and markdown.exists():
        raise UsageError(f"{markdown} exists already; pass --markdown with a new folder")
    with open_workspace(workspace, create=False) as ws:
        with ProgressLine("Exporting records", quiet=quiet) as progress:
            counts = export.export_all(ws, target, utc_now(), progress=progress)
        if markdown is not None:
            written = export.write_markdown(export.read(target), markdown)
            click.echo(f"Wrote {written} Markdown files to {markdown}.")
    click.echo(f"Wrote {target}: {counts.summary()}.")


@click.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@quiet_option
@workspace_option
def import_command(file: Path, quiet: bool, workspace: str | None) -> None:
    """Restore a 'dream export --all' file into a new, empty workspace (SQLite or PostgreSQL,
    as the workspace's memory.store.url says).

    Every crystal is then embedded with the workspace's embedder; on a terminal a progress
    line counts records restored, then crystals embedded, with the time left (none when
    piped or with -q).

    \b
    Examples:
      dream import ada.jsonl -w ~/agents/ada
      DREAM_STORE_URL=postgresql://fleet@db/dreamer dream import ada.jsonl -w /srv/agents/ada
      dream import ada.jsonl -w ~/agents/ada -q
    """
    from dreamer.agents import export

    rows = export.read(file)
    with open_workspace(workspace) as ws:
        ws.init()
        with ProgressLine("Importing", quiet=quiet) as progress:
            counts = export.import_all(ws, rows, utc_now(), progress=progress)
    click.echo(f"Imported {file} into {ws.root}: {counts.summary()}.")


DEMO_NOTES = [
    # (hours before now, importance, text)
    (70, 0.8, "User's name is Maya; she is a backend engineer at Fernhill Labs."),
    (69, 0.9, "User prefers concise answers with code first, explanation after."),
    (66, 0.7, "Deployed the billing service to staging; the migration ran clean."),
    (52, 0.8, "The Q3 analytics report deadline is Friday."),
    (50, 0.6, "CI keeps failing on the flaky payment webhook test, very frustrating."),
    (47, 0.7, "Deployed the billing service to staging again after the webhook fix."),
    (30, 0.9, "Q3 analytics report deadline moved to next Wednesday."),
    (28, 0.7, "Fixed the flaky webhook test: it depended on wall-clock time."),
    (26, 0.6, "What timezone is the analytics team in?"),
    (20, 0.7, "Need to find out which Postgres version production runs."),
    (8, 0.8, "User now prefers tabs over spaces in the billing repo."),
    (6, 0.7, "Deployed the billing service to production behind a feature flag."),
    (3, 0.6, "I should summarise long logs instead of pasting them."),
]
DEMO_NICHE = {
    "role": "coding assistant for the Fernhill billing team",
    "skills_on_offer": ["code review", "deploys", "incident notes"],
    "peers": ["ci-bot", "docs-agent"],
}


@click.command(name="demo")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@workspace_option
@click.pass_context
def demo_command(ctx: click.Context, path: Path | None, workspace: str | None) -> None:
    """Create a sample workspace, dream over it offline, and print the resulting MEMORY.md.

    PATH must be a new or empty folder (default: a new temporary folder, printed). No key and
    no network are needed.

    \b
    Examples:
      dream demo
      dream demo /tmp/dream-demo && dream log -w /tmp/dream-demo
    """
    import json

    # -w works like PATH, but $DREAM_WORKSPACE is ignored: a demo never writes into the
    # agent's real workspace.
    if (
        path is None
        and workspace
        and ctx.get_parameter_source("workspace") != click.core.ParameterSource.ENVIRONMENT
    ):
        path = Path(workspace)
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="dream-demo-"))
    elif path.exists() and any(path.iterdir()):
        raise UsageError(f"{path} is not empty; pass a new folder to 'dream demo'")
    now = utc_now().replace(microsecond=0)
    with Workspace.open(path) as ws:
        ws.init()
        for hours, importance, text in DEMO_NOTES:
            ws.note(text, importance=importance, at=now - timedelta(hours=hours))
        ws.search("kubernetes helm chart values", now=now)  # finds nothing: a curiosity gap
        atomic_write(ws.niche_json, json.dumps(DEMO_NICHE, indent=2) + "\n")  # owner-only
        result = run_dream(ws, now=now, force=True, synthesizer=OfflineSynthesizer())
        click.echo(f"Demo workspace: {ws.root}")
        click.echo(f"{len(DEMO_NOTES)} sample notes over three days; {_describe(result)}\n")
        click.echo(read_memory(ws.memory_md))
        click.echo(f'Next: dream log -w {ws.root}   dream search -w {ws.root} "deadline"')
