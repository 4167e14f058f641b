"""Commands for the agent's write/read path: init, note, search, get, config."""

from __future__ import annotations

import sys

import click

from dreamer.cli.common import emit_json, json_option, open_workspace, workspace_option
from dreamer.cli.progress import ProgressLine, quiet_option
from dreamer.config import describe
from dreamer.errors import InvalidNote
from dreamer.memory import search_client
from dreamer.store.kinds import DEFAULT_IMPORTANCE, MAX_SEARCH_LIMIT, SEARCH_TYPES, SEMANTIC_TYPES
from dreamer.support.bounds import shown

DEFAULT_LIMIT = 6


@click.command()
@workspace_option
def init(workspace: str | None) -> None:
    """Create a workspace (memory/, the scratch and the crystal database).

    \b
    Example:
      dream init -w ~/agents/ada
    """
    with open_workspace(workspace, announce=False) as ws:
        ws.init()
        click.echo(f"Initialized dreamer workspace at {ws.root}")


@click.command()
@click.argument("text")
@click.option(
    "--importance",
    type=float,
    default=DEFAULT_IMPORTANCE,
    show_default=True,
    help="How much this matters, from 0 to 1.",
)
@click.option(
    "--type",
    "semantic_type",
    metavar="|".join(SEMANTIC_TYPES),
    default=None,
    help="Semantic type [default: inferred from the text].",
)
@click.option(
    "--at",
    "at",
    metavar="ISO-TIME",
    default=None,
    help="When it happened [default: now], e.g. 2026-03-12T14:30:00Z.",
)
@click.option(
    "--about",
    metavar="WORDS",
    default=None,
    help='What the note is about, e.g. "launch date"; notes about one thing: the newest holds.',
)
@click.option(
    "--replaces",
    metavar="ID|WORDS",
    default=None,
    help='What it replaces: an earlier note\'s id ("#12") or the old words; not kept as current.',
)
@workspace_option
def note(
    text: str,
    importance: float,
    semantic_type: str | None,
    at: str | None,
    about: str | None,
    replaces: str | None,
    workspace: str | None,
) -> None:
    """Write a note to the scratch and index it as a crystal; print its id.

    TEXT is the note, or - to read it from standard input (multi-line text is kept exactly).
    A note may be up to 32,000 characters (memory.note.maxChars); a longer one is refused
    and nothing is stored (long documents go in with 'dream ingest').

    \b
    Examples:
      dream note "User prefers dark mode" --importance 0.8 --type directive
      dream note "Launch moved to July 3" --about "launch date" --replaces "#12"
      git log -1 --format=%B | dream note -
      dream note -- "-5 C in the server room"   (-- before text that starts with -)
    """
    with open_workspace(workspace) as ws:
        if text == "-":
            text = read_stdin(ws.settings.note_max_chars)
        # No embedder in a one-shot process: the next search or tick embeds the note; its
        # words find it at once.
        click.echo(
            ws.note(
                text,
                importance=importance,
                type=semantic_type,
                at=at,
                embed=False,
                about=about,
                replaces=replaces,
            )
        )
        found = ws.redact(text).found  # after the note: a refused note is not scanned
    if found:
        kinds = ", ".join(dict.fromkeys(finding.kind for finding in found))
        click.echo(
            f"Redacted {len(found)} secret{'s' if len(found) > 1 else ''} ({kinds}) before "
            "storing; only the [secret:...] placeholders were kept.",
            err=True,
        )


def read_stdin(max_chars: int) -> str:
    """The note on standard input, read no further than a note may be long."""
    # Bytes, decoded here: text-mode stdin would follow the locale and could alter them.
    # UTF-8 takes at most 4 bytes a character: past that many bytes the note is surely too
    # long, and a 200 MB pipe is refused without being held in memory.
    limit = 4 * max_chars
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        from dreamer.memory.workspace import check_note_size

        check_note_size(limit + 1, max_chars, more=True)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidNote(
            f"standard input is not UTF-8 (byte {e.start}); convert it, e.g. with iconv"
        ) from None


@click.command()
@click.argument("query")
@click.option(
    "--limit",
    type=click.IntRange(min=1, max=MAX_SEARCH_LIMIT),
    default=DEFAULT_LIMIT,
    show_default=True,
)
@click.option(
    "--type",
    "search_type",
    type=click.Choice(SEARCH_TYPES),
    default="both",
    show_default=True,
    help="conversations = session transcripts; facts = the rest.",
)
@json_option
@workspace_option
def search(query: str, limit: int, search_type: str, as_json: bool, workspace: str | None) -> None:
    """Search the crystals (BM25 + vectors, fused, boosted by recency and importance).

    \b
    Examples:
      dream search "editor theme"
      dream search "what did we decide about the deadline" --limit 3 --json
    """
    # A running search door (serve's, or one an earlier search left) answers without loading
    # numpy, the embedder or the store in this process.
    hits = search_client.ask(workspace, query, limit, search_type)
    if hits is None:
        with open_workspace(workspace, create=False) as ws:
            found = ws.search(query, limit=limit, search_type=search_type)
            hits = [hit.to_dict() for hit in found]
            if not ws.settings.store_url:  # a door declines a PostgreSQL workspace
                # for the next search
                search_client.leave_open(ws.root, ws.settings.search_warm_minutes)
    if as_json:
        emit_json(hits)
        return
    if not hits:
        click.echo(f"No memories match {query!r}.")
    for hit in hits:
        click.echo(
            f"#{hit['id']}  score {hit['score']:.4f}  {hit['source']}/{hit['semantic_type']}  "
            f"{hit['created_at']}  [{hit['lifecycle']}]"
        )
        text = shown(hit["text"], f"dream get {hit['id']}")  # --json gives every hit whole
        click.echo("    " + text.replace("\n", "\n    "))


@click.command()
@click.argument("crystal_id", type=int)
@json_option
@workspace_option
def get(crystal_id: int, as_json: bool, workspace: str | None) -> None:
    """Show one crystal whole.

    \b
    Example:
      dream get 42 --json
    """
    with open_workspace(workspace, create=False) as ws:
        crystal = ws.get(crystal_id)
    if as_json:
        emit_json(crystal.to_dict())
        return
    for key, value in crystal.to_dict().items():
        if key != "text":
            click.echo(f"{key}: {value}")
    click.echo("text:")
    click.echo(crystal.text)


@click.command()
@json_option
@workspace_option
def config(as_json: bool, workspace: str | None) -> None:
    """Show the effective settings and where each came from (flag, env, dreamer.toml, default).

    \b
    Example:
      dream config -w ~/agents/ada
    """
    with open_workspace(workspace, create=False) as ws:
        rows = describe(ws.settings)
        from dreamer.dream.synth.factory import explain  # not on the note/search path

        says = explain(ws.settings)
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        click.echo(f"{row['key']:<44} {str(row['value']):<22} ({row['source']}; {row['env']})")
    click.echo(f"Next dream written by: {says}")


@click.command()
@quiet_option
@json_option
@workspace_option
def reindex(quiet: bool, as_json: bool, workspace: str | None) -> None:
    """Give every crystal a vector from the current embedder (memory.search.embedder).

    Search compares only vectors of one embedder; after a change of embedder, older crystals
    are found by their words alone until re-embedded. Consolidation ticks do this in the
    background, a batch at a time; this does all of it now, with a progress line on a
    terminal (counts and the time left; none when piped or with -q).

    \b
    Examples:
      dream reindex
      DREAM_EMBEDDER=hashing dream reindex -w ~/agents/ada
      dream reindex -q --json
    """
    from dreamer.retrieval.reindex import reindex as run_reindex  # numpy: not for `dream note`

    with open_workspace(workspace, create=False) as ws:
        with ProgressLine(f"Embedding with {ws.embedder.name}", quiet=quiet) as progress:
            done = run_reindex(ws.store, ws.embedder, progress=progress)
        name = ws.embedder.name
    if as_json:
        emit_json({"embedder": name, "reindexed": done})
    else:
        click.echo(f"Re-embedded {done} crystal(s) with {name}.")
