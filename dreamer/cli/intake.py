"""Commands that bring existing memory in and hand it to an agent: migrate, bootstrap, ingest."""

from __future__ import annotations

import sys
from typing import Any

import click

from dreamer.agents.bootstrap import bootstrap as build_bootstrap
from dreamer.agents.bootstrap import parse_window
from dreamer.agents.ingest import ingest as run_ingest
from dreamer.cli.common import emit_json, json_option, open_workspace, workspace_option
from dreamer.cli.progress import ProgressLine, quiet_option
from dreamer.dream.seed import migrate as run_migrate
from dreamer.support.times import utc_now

PROGRESS_MIN_BYTES = 256 * 1024


@click.command()
@quiet_option
@json_option
@workspace_option
def migrate(quiet: bool, as_json: bool, workspace: str | None) -> None:
    """Turn a hand-written MEMORY.md into seed crystals (once; also runs before the first dream).

    MEMORY.md is copied byte for byte to MEMORY.md.seed-backup, cut into 400-token windows
    (80 tokens of overlap) and stored as searchable crystals. The next dream keeps your text
    on top of MEMORY.md and adds the generated state below it. Running it again does nothing.
    On a terminal a progress line counts the windows stored (none when piped or with -q).

    \b
    Example:
      dream migrate -w ~/agents/ada
      dream migrate -q --json
    """
    with open_workspace(workspace) as ws, ProgressLine("Migrating", quiet=quiet) as progress:
        report = run_migrate(ws, utc_now(), progress=progress)
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(report.message[:1].upper() + report.message[1:] + ".")


@click.command()
@click.option(
    "--context-window",
    "context_window",
    metavar="TOKENS",
    default=None,
    envvar="DREAM_CONTEXT_WINDOW",
    help="The agent's context window, e.g. 200000 or 128k [default: unknown, "
    "which gets the largest budget].",
)
@json_option
@workspace_option
def bootstrap(context_window: str | None, as_json: bool, workspace: str | None) -> None:
    """Print the memory block an agent puts in its system prompt, sized to its context window.

    Budgets: 200K and up (or unknown) 8,000 characters, 128K 6,000, 64K 4,000, 32K and
    below 3,200. Over budget, whole lines of the least important sections are left out.

    \b
    Examples:
      dream bootstrap --context-window 128k > memory-block.md
      dream bootstrap --context-window 32000 --json
    """
    window = parse_window(context_window)
    with open_workspace(workspace, create=False) as ws:
        block = build_bootstrap(ws, window, utc_now())
    if as_json:
        emit_json(block.to_dict())
    else:
        click.echo(block.text, nl=False)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option(
    "--live",
    is_flag=True,
    help="Sessions may still be growing (as when Claude Code's hooks run): a Claude Code "
    "session's (or Codex rollout's) last turn waits until it is over, unless the file has been "
    "quiet for 10 minutes.",
)
@json_option
@workspace_option
def ingest(paths: tuple[str, ...], live: bool, as_json: bool, workspace: str | None) -> None:
    """Store session transcripts, memory files and other text as searchable crystals.

    PATH may be a file or a folder (its .jsonl, .json, .md, .markdown and .txt files).
    Transcripts (Anthropic messages JSON, JSONL chat logs) become 'sessions' crystals with
    their own timestamps. A Claude Code project folder (~/.claude/projects/<project>/) or
    session file is read with its subagents, without markup, errors, compaction summaries or
    tool-output dumps, and from where the last ingest of it stopped: each exchange is stored
    once however often a growing session is ingested. Codex CLI rollout files
    (~/.codex/sessions/...) are read the same way, one crystal per finished turn, without tool
    output or harness text. Markdown with name/description/type
    frontmatter becomes 'memory' crystals. Ingesting the same file again adds nothing.
    A file that cannot be read is reported and the others still go in (exit code 1).

    \b
    Examples:
      dream ingest ~/.claude/projects/-home-ada-src-ferrous/
      dream ingest --live ~/.claude/projects/-home-ada-src-ferrous/abc123.jsonl
      dream ingest ~/.codex/sessions/2026/03/
      dream ingest notes.md memory/feedback_testing.md --json
    """
    with open_workspace(workspace) as ws:
        with _ProgressBar() as progress:
            report = run_ingest(ws, paths, utc_now(), progress=progress, live=live)
    if as_json:
        emit_json(report.to_dict())
    else:
        for result in report.files:
            if result.error:
                continue
            plural = "" if result.crystals == 1 else "s"
            click.echo(
                f"{result.path}: {result.crystals} {result.kind} crystal{plural} "
                f"({result.created} new)"
            )
        click.echo(
            f"Ingested {len(report.files) - len(report.failed)} of "
            f"{len(report.files)} files: {report.created} new crystals."
        )
    for result in report.failed:
        click.echo(f"Error: {result.error}", err=True)
    if report.failed:
        sys.exit(1)


class _ProgressBar:
    """A click progress bar on stderr, shown once the input turns out to be long."""

    def __init__(self) -> None:
        self.bar: Any = None  # a click progress bar, made once the input proves long
        self.shown = 0

    def __enter__(self) -> _ProgressBar:
        return self

    def __call__(self, done: int, total: int) -> None:
        if total < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
            return  # short inputs finish first; logs and pipes get no bar noise
        if self.bar is None:
            self.bar = click.progressbar(length=total, label="Ingesting", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.shown)
        self.shown = done

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
