"""Pieces every command module shares: the -w option, opening a workspace, JSON output."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from dreamer.errors import DreamError
from dreamer.memory import location
from dreamer.support.files import atomic_write

if TYPE_CHECKING:
    from dreamer.memory.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])


def workspace_option(func: F) -> F:
    """Add ``-w/--workspace PATH`` (default: see dreamer.memory.location)."""
    return click.option(
        "-w",
        "--workspace",
        "workspace",
        # Not file_okay=False: Workspace.open explains a file given as a workspace in one line.
        type=click.Path(path_type=str),
        envvar="DREAM_WORKSPACE",
        default=None,
        help=(
            "Workspace folder [default: $DREAM_WORKSPACE, a .dreamer/workspace pointer, else a"
            " per-project folder in your data dir; see docs/guides/notes-and-search.md]."
        ),
    )(func)


def json_option(func: F) -> F:
    """Add ``--json`` for machine-readable output."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def open_workspace(
    path: str | None,
    *,
    create: bool = True,
    overrides: dict[str, Any] | None = None,
    announce: bool = True,
) -> Workspace:
    """Open the workspace a command names (created on first write unless create=False).

    ``overrides`` are settings given as flags; they beat the environment and dreamer.toml.
    A workspace made here is announced on stderr, so a mistyped ``-w`` is never silent.
    """
    # Imported here: a search that a search door answers opens no workspace.
    from dreamer.memory.workspace import Workspace

    root, how = location.resolve(path)
    fresh = create and not (root / "memory").is_dir()
    ws = Workspace.open(root, create=create, overrides=overrides)
    if fresh and announce:
        click.echo(f"Created a new dreamer workspace at {root} ({_CHOSEN[how]}).", err=True)
    if announce and ws.settings.store_url and ws.db_path.exists():
        _left_behind(ws)
    return ws


def _left_behind(ws: Workspace) -> None:
    """Say so when a workspace moved to PostgreSQL left its SQLite memory behind: the new store
    starts empty (dreamer copies pending notes over, not a store), so a search finding nothing
    must not look like lost memory."""
    try:
        if ws.store.crystals.crystal_count() == 0:
            click.echo(
                f"Note: {ws.db_path} holds this workspace's earlier SQLite memory, and "
                "memory.store.url points to PostgreSQL, where it has no crystals yet; dreamer "
                "does not copy a store (pending notes do move). Unset memory.store.url "
                "(DREAM_STORE_URL) to use the SQLite one.",
                err=True,
            )
    except DreamError:
        ws.close()
        raise


_CHOSEN = {
    "flag": "from -w",
    "env": "from $DREAM_WORKSPACE",
    "pointer": "from the project's .dreamer/workspace",
    "default": "this project's default, in your data folder; -w or $DREAM_WORKSPACE picks another",
}


def interval_options(func: F) -> F:
    """Add ``--dream-interval`` and ``--consolidation-interval`` (minutes; override settings)."""
    func = click.option(
        "--consolidation-interval",
        "consolidation_interval_minutes",
        type=float,
        default=None,
        metavar="MINUTES",
        help="Minutes between consolidations [default: memory.consolidation.intervalMinutes].",
    )(func)
    return click.option(
        "--dream-interval",
        "dream_interval_minutes",
        type=float,
        default=None,
        metavar="MINUTES",
        help="Minutes between dreams [default: memory.dream.intervalMinutes].",
    )(func)


def emit_json(value: Any) -> None:
    """Print value as indented JSON (UTF-8 kept readable)."""
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def show_diff(path: Path, before: str, after: str) -> None:
    """Print the unified diff of ``path`` from ``before`` to ``after``."""
    import difflib  # here: only the install commands show diffs

    diff = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=str(path),
        tofile=str(path),
    )
    click.echo("".join(diff), nl=False)


def write_config(path: Path, before: str, after: str, *, dry_run: bool, shared: bool) -> None:
    """Show a config file's diff and, unless ``dry_run``, write it: a file that exists keeps its
    mode (a shared one stays readable), a new one is owner-only unless ``shared``, and a link
    at a dotfile is replaced, as a person editing it would."""
    show_diff(path, before, after)
    if not dry_run:
        mode = path.stat().st_mode & 0o777 if path.exists() else (0o644 if shared else 0o600)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, after, replace_link=True)
        path.chmod(mode)
