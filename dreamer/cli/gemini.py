"""``dream gemini``: install, inspect and remove dreamer's Gemini CLI hooks and MCP server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from dreamer.agents import claude_settings as cs
from dreamer.agents import codex_settings as xs
from dreamer.agents import gemini_settings as gs
from dreamer.cli.claude import _dream
from dreamer.cli.codex import _read, _write
from dreamer.cli.common import emit_json, json_option, workspace_option
from dreamer.errors import UsageError
from dreamer.memory import location

_SCOPE = click.option(
    "--scope",
    type=click.Choice(gs.SCOPES),
    default="project",
    show_default=True,
    help="user: ~/.gemini (or $GEMINI_CLI_HOME/.gemini); project: .gemini/ of this "
    "repository (shared via git).",
)


@click.group()
def gemini() -> None:
    """Connect dreamer to the Gemini CLI: hooks that capture sessions, and the MCP server.

    \b
    Examples:
      dream gemini install --scope user --dry-run
      dream gemini install
      dream gemini status
      dream gemini uninstall
    """


def _settings_file(scope: str) -> Path:
    home = Path(os.environ.get("HOME") or Path.home())
    cwd = Path.cwd().resolve()
    project = location.repository_root(cwd) or cwd
    return gs.settings_path(scope, home, project)


def _load(path: Path) -> tuple[str, dict]:
    """(text, data) of settings.json; UsageError names a file that is not a JSON object."""
    text = _read(path)
    try:
        return text, cs.load(path)
    except ValueError as e:
        raise UsageError(
            f"{path} is not plain JSON ({e}); dreamer edits no file with comments: remove "
            "them, or add its entries by hand (docs/guides/gemini-cli.md)"
        ) from e


@gemini.command()
@_SCOPE
@click.option("--dry-run", is_flag=True, help="Show the changes only.")
@workspace_option
def install(scope: str, dry_run: bool, workspace: str | None) -> None:
    """Add dreamer's hooks (SessionStart, AfterAgent, SessionEnd) and its MCP server.

    All go into settings.json, in ~/.gemini for --scope user or .gemini/ of this repository
    for --scope project, with dreamer's tools but memory_forget and memory_accept in
    tools.allowed (a headless run leaves out a tool that would ask first). Shows the diff;
    running it again changes nothing; 'dream gemini uninstall' gives the file back byte for
    byte. SessionStart hands the agent its memory; AfterAgent stores the turn that just ended
    (from the session's chat file); SessionEnd stores what is left. With -w, hooks and server
    use that workspace; without, each project's own.

    The project scope is for committing: its commands run the 'dream' found on each
    teammate's PATH (a hook prints a hint when there is none) and name no path of this
    machine; Gemini CLI reads a project's .gemini/settings.json only in a trusted folder.

    \b
    Examples:
      dream gemini install --scope user
      dream gemini install --scope user -w ~/agents/ada --dry-run
      dream gemini install --scope project
    """
    path = _settings_file(scope)
    shared = scope == "project"
    if shared and workspace:
        raise UsageError(
            "a project-scope install is shared through git, so it cannot pin this machine's "
            f"workspace path; write it (relative to the project) into {location.POINTER} "
            "instead, or install with --scope user -w PATH"
        )
    dream = gs.PORTABLE if shared else _dream()
    pinned = Path(workspace).expanduser().absolute() if workspace else None
    before, data = _load(path)
    try:
        new = gs.with_all(data, dream, pinned)
    except (AttributeError, TypeError) as e:  # "hooks" or "mcpServers" is no object
        raise UsageError(
            f"{path}: its hooks or mcpServers are not shaped as the Gemini CLI writes them "
            f"({e}); fix the file, then run this again"
        ) from e
    after = before if new == data else cs.dump(new, before)
    existed = path.exists()
    changed = _write(path, before, after, dry_run=dry_run, shared=shared)
    if changed and not dry_run:
        xs.remember(path, before if existed else None, after)
    verb = "Would install" if dry_run else "Installed"
    click.echo(f"{verb} for scope {scope}." if changed else f"Already installed ({scope}).")
    if changed and not dry_run and shared:
        click.echo(gs.TRUST_HINT)


@gemini.command()
@_SCOPE
@click.option("--dry-run", is_flag=True, help="Show the changes only.")
@workspace_option
def uninstall(scope: str, dry_run: bool, workspace: str | None) -> None:
    """Remove dreamer's hooks and MCP server from a scope, and nothing else.

    A settings.json install created is removed; one that was there before gets its bytes
    back. -w is accepted for symmetry with install; the hooks are found whatever workspace
    they pin.

    \b
    Example:
      dream gemini uninstall --scope user
    """
    path = _settings_file(scope)
    before, data = _load(path)
    new = gs.without(data)
    if new == data:
        click.echo(f"Nothing to remove ({scope}).")
        return
    known, kept = xs.original(path, before)
    if known:  # as install left it: the bytes from before (no file, when there was none)
        changed = _write(
            path, before, kept or "", dry_run=dry_run, shared=False, keep_empty=kept == ""
        )
    else:  # edited since install: take dreamer's entries out of what is there
        after = cs.dump(new, before) if new else ""
        changed = _write(path, before, after, dry_run=dry_run, shared=False)
    if not dry_run:
        xs.forget(path)
    click.echo(f"Removed from scope {scope}." if changed else f"Nothing to remove ({scope}).")


@gemini.command()
@json_option
@workspace_option
def status(as_json: bool, workspace: str | None) -> None:
    """Show the hooks and MCP server per scope, the workspace for this folder, its captures.

    \b
    Example:
      dream gemini status --json
    """
    report: dict = {"scopes": {}}
    for scope in gs.SCOPES:
        path = _settings_file(scope)
        try:
            data = cs.load(path)
            hooks, mcp = cs.hooks_installed(data, gs.HOOK_EVENTS), gs.server_registered(data)
        except (ValueError, OSError) as e:
            hooks, mcp = [], False
            report.setdefault("errors", []).append(f"{path}: {e}")
        report["scopes"][scope] = {"settings_file": str(path), "hooks": hooks, "mcp": mcp}
    root, how = location.resolve(workspace)
    exists = (root / "memory").is_dir()
    report["workspace"] = {"path": str(root), "chosen_by": how, "exists": exists}
    if exists:
        from dreamer.memory.workspace import Workspace

        with Workspace.open(root, create=False) as ws:
            report["workspace"]["last_capture"] = {
                key.split(":", 1)[1]: json.loads(value).get("last_at")
                for key, value in ws.store.records.meta_items("ingest.gemini:")
            }
    if as_json:
        emit_json(report)
        return
    for scope, info in report["scopes"].items():
        events = ", ".join(info["hooks"]) or "none"
        click.echo(f"{scope:<8} hooks: {events}; MCP server: {'yes' if info['mcp'] else 'no'}")
    if report["scopes"]["project"]["hooks"]:
        click.echo(f"note: {gs.TRUST_HINT}")
    for error in report.get("errors", []):
        click.echo(f"problem: {error}")
    ws_info = report["workspace"]
    click.echo(
        f"workspace: {ws_info['path']} ({ws_info['chosen_by']}"
        f"{'' if ws_info['exists'] else ', not created yet'})"
    )
    for session, when in sorted(ws_info.get("last_capture", {}).items()):
        click.echo(f"captured {Path(session).name}: up to {when}")
