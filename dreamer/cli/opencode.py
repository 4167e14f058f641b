"""``dream opencode``: install, inspect and remove dreamer's OpenCode plugin and MCP server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from dreamer.agents import claude_settings as cs
from dreamer.agents import codex_settings as xs
from dreamer.agents import opencode_settings as os_
from dreamer.cli.claude import _dream
from dreamer.cli.codex import _read, _write
from dreamer.cli.common import emit_json, json_option, workspace_option
from dreamer.errors import UsageError
from dreamer.memory import location

_SCOPE = click.option(
    "--scope",
    type=click.Choice(os_.SCOPES),
    default="project",
    show_default=True,
    help="user: ~/.config/opencode; project: opencode.json and .opencode/ of this repository "
    "(shared via git).",
)


@click.group()
def opencode() -> None:
    """Connect dreamer to OpenCode: a plugin that captures sessions, and the MCP server.

    \b
    Examples:
      dream opencode install --scope user --dry-run
      dream opencode install
      dream opencode status
      dream opencode uninstall
    """


def _places(scope: str) -> tuple[Path, Path]:
    home = Path(os.environ.get("HOME") or Path.home())
    cwd = Path.cwd().resolve()
    return os_.places(scope, home, location.repository_root(cwd) or cwd)


def _load(path: Path) -> tuple[str, dict]:
    text = _read(path)
    try:
        return text, cs.load(path)
    except ValueError as e:
        raise UsageError(
            f"{path} is not plain JSON ({e}); dreamer edits no file with comments: remove "
            "them, or add its server by hand (docs/guides/opencode.md)"
        ) from e


def _plugin(path: Path) -> str:
    """The plugin file's text ('' when there is none); UsageError when it is not dreamer's."""
    text = _read(path)
    if text and not os_.is_ours(text):
        raise UsageError(f"{path} is not dreamer's plugin; move it away, then run this again")
    return text


@opencode.command()
@_SCOPE
@click.option("--dry-run", is_flag=True, help="Show the changes only.")
@workspace_option
def install(scope: str, dry_run: bool, workspace: str | None) -> None:
    """Add dreamer's plugin (plugins/dreamer.js) and register its MCP server (opencode.json).

    The plugin hands each session its memory (in the system prompt) and, each time a session
    goes idle, gives dreamer the turns it has not stored yet (tool output left out). --scope
    user writes to ~/.config/opencode, --scope project to .opencode/plugins/ and opencode.json
    of this repository. Shows each change; running it again changes nothing; 'dream opencode
    uninstall' removes the plugin and gives opencode.json back byte for byte. With -w, plugin
    and server use that workspace; without, each project's own.

    The project scope is for committing: the plugin runs the 'dream' found on each teammate's
    PATH (and tells the agent when there is none) and names no path of this machine.

    \b
    Examples:
      dream opencode install --scope user
      dream opencode install --scope user -w ~/agents/ada --dry-run
      dream opencode install --scope project
    """
    plugin, config = _places(scope)
    shared = scope == "project"
    if shared and workspace:
        raise UsageError(
            "a project-scope install is shared through git, so it cannot pin this machine's "
            f"workspace path; write it (relative to the project) into {location.POINTER} "
            "instead, or install with --scope user -w PATH"
        )
    dream = os_.PORTABLE if shared else _dream()
    pinned = Path(workspace).expanduser().absolute() if workspace else None
    plugin_before = _plugin(plugin)
    plugin_after = os_.plugin_text(dream, pinned)
    before, data = _load(config)
    try:
        new = os_.with_server(data, dream, pinned)
    except (AttributeError, TypeError) as e:  # "mcp" is no object
        raise UsageError(
            f"{config}: its mcp entry is not shaped as OpenCode writes it ({e}); fix the file, "
            "then run this again"
        ) from e
    after = before if new == data else cs.dump(new, before)
    changed = _write(plugin, plugin_before, plugin_after, dry_run=dry_run, shared=shared)
    existed = config.exists()
    if _write(config, before, after, dry_run=dry_run, shared=shared):
        changed = True
        if not dry_run:
            xs.remember(config, before if existed else None, after)
    verb = "Would install" if dry_run else "Installed"
    click.echo(f"{verb} for scope {scope}." if changed else f"Already installed ({scope}).")


@opencode.command()
@_SCOPE
@click.option("--dry-run", is_flag=True, help="Show the changes only.")
@workspace_option
def uninstall(scope: str, dry_run: bool, workspace: str | None) -> None:
    """Remove dreamer's plugin and MCP server from a scope, and nothing else.

    The plugin file goes; opencode.json gets its bytes from before install back (or dreamer's
    entry taken out, when it was edited since). -w is accepted for symmetry with install.

    \b
    Example:
      dream opencode uninstall --scope user
    """
    plugin, config = _places(scope)
    changed = _write(plugin, _plugin(plugin), "", dry_run=dry_run, shared=False)
    before, data = _load(config)
    new = os_.without_server(data)
    if new != data:
        known, kept = xs.original(config, before)
        if known:
            after, keep_empty = kept or "", kept == ""
        else:
            after, keep_empty = (cs.dump(new, before) if new else ""), False
        changed |= _write(
            config, before, after, dry_run=dry_run, shared=False, keep_empty=keep_empty
        )
        if not dry_run:
            xs.forget(config)
    click.echo(f"Removed from scope {scope}." if changed else f"Nothing to remove ({scope}).")


@opencode.command()
@json_option
@workspace_option
def status(as_json: bool, workspace: str | None) -> None:
    """Show the plugin and MCP server per scope, the workspace for this folder, its captures.

    \b
    Example:
      dream opencode status --json
    """
    report: dict = {"scopes": {}}
    for scope in os_.SCOPES:
        plugin, config = _places(scope)
        try:
            mcp = os_.server_registered(cs.load(config))
        except (ValueError, OSError) as e:
            mcp = False
            report.setdefault("errors", []).append(f"{config}: {e}")
        try:
            ours = os_.is_ours(plugin.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            ours = False
        report["scopes"][scope] = {"plugin_file": str(plugin), "plugin": ours, "mcp": mcp}
    root, how = location.resolve(workspace)
    exists = (root / "memory").is_dir()
    report["workspace"] = {"path": str(root), "chosen_by": how, "exists": exists}
    if exists:
        from dreamer.memory.workspace import Workspace

        with Workspace.open(root, create=False) as ws:
            report["workspace"]["last_capture"] = {
                key.split(":", 1)[1]: json.loads(value).get("last_at")
                for key, value in ws.store.records.meta_items("ingest.opencode:")
            }
    if as_json:
        emit_json(report)
        return
    for scope, info in report["scopes"].items():
        plugin_state = "yes" if info["plugin"] else "no"
        click.echo(
            f"{scope:<8} plugin: {plugin_state}; MCP server: {'yes' if info['mcp'] else 'no'}"
        )
    for error in report.get("errors", []):
        click.echo(f"problem: {error}")
    ws_info = report["workspace"]
    click.echo(
        f"workspace: {ws_info['path']} ({ws_info['chosen_by']}"
        f"{'' if ws_info['exists'] else ', not created yet'})"
    )
    for session, when in sorted(ws_info.get("last_capture", {}).items()):
        click.echo(f"captured session {session}: up to {when}")
