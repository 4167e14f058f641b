"""``dream claude``: install, inspect and remove dreamer's Claude Code hooks and MCP server."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import click

from dreamer.agents import claude_settings as cs
from dreamer.agents import team
from dreamer.cli.common import emit_json, json_option, show_diff, workspace_option, write_config
from dreamer.errors import UsageError
from dreamer.memory import location
from dreamer.support.files import atomic_write
from dreamer.support.resources import plugin_dir

_SCOPE = click.option(
    "--scope",
    type=click.Choice(cs.SCOPES),
    default="project",
    show_default=True,
    help="user: ~/.claude; project: .claude/settings.json and .mcp.json (shared via git); "
    "local: .claude/settings.local.json and this project in ~/.claude.json.",
)


@click.group()
def claude() -> None:
    """Connect dreamer to Claude Code: hooks that capture sessions, and the MCP server.

    \b
    Examples:
      dream claude install --scope project --dry-run
      dream claude install
      dream claude status
      dream claude uninstall
    """


def _places(scope: str) -> tuple[Path, Path, Path]:
    home = home_folder()
    cwd = Path.cwd().resolve()
    project = location.repository_root(cwd) or cwd
    return home, project, cs.settings_path(scope, home, project, os.environ)


def home_folder() -> Path:
    """$HOME (where Claude Code and Codex keep their settings); UsageError when it is a file."""
    home = Path(os.environ.get("HOME") or Path.home())
    if home.exists() and not home.is_dir():
        raise UsageError(
            f"HOME is {home}, a file, not a folder; set HOME to your home folder "
            "(where ~/.claude and ~/.codex live), then run this again"
        )
    return home


def refuse_env_pin(scope_flag: str, other: str) -> None:
    """A project-scope install with -w, or with DREAM_WORKSPACE set, is refused by name."""
    ctx = click.get_current_context()
    value = ctx.params.get("workspace")
    if not value:
        return
    where = f"{location.POINTER} (a path relative to the project)"
    if ctx.get_parameter_source("workspace") == click.core.ParameterSource.ENVIRONMENT:
        raise UsageError(
            f"DREAM_WORKSPACE is set (to {value}), which would pin this machine's workspace "
            "into a project-scope install that is shared through git; run it without the "
            f"variable (env -u DREAM_WORKSPACE dream {scope_flag}), or write the path into "
            f"{where}, or install with {other}"
        )
    raise UsageError(
        "a project-scope install is shared through git, so it cannot pin this machine's "
        f"workspace path; write it into {where} instead, or install with {other} -w PATH"
    )


def _edited(path: Path, change: Callable[[dict], dict]) -> dict:
    """The settings file at path after ``change``; UsageError names the file and the key."""
    try:
        return change(cs.load(path))
    except ValueError as e:
        named = str(e) if str(path) in str(e) else f"{path}: {e}"
        raise UsageError(f"{named}; fix the file, then run this again") from e


def _dream() -> str:
    beside = Path(sys.executable).with_name("dream")
    return str(beside) if beside.exists() else (shutil.which("dream") or "dream")


def _change(path: Path, new: dict, *, dry_run: bool, shared: bool) -> bool:
    """Show the JSON diff of path; write new unless dry_run; True when something changed."""
    old = _edited(path, lambda data: data)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    before, after = (cs.dump(old, text) if old else ""), cs.dump(new, text) if new else ""
    if before == after:
        return False
    write_config(path, before, after, dry_run=dry_run, shared=shared)
    return True


@claude.command()
@_SCOPE
@click.option("--dry-run", is_flag=True, help="Show the changes only.")
@click.option(
    "--plugin",
    is_flag=True,
    help="Instead, write dreamer's Claude Code plugin folder (hooks, MCP server, skills), "
    "which is also a marketplace: 'claude plugin marketplace add DIR'.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("dreamer-plugin"),
    show_default=True,
    help="Where --plugin writes the folder (it must not exist yet).",
)
@click.option(
    "--no-synthesizer",
    is_flag=True,
    help="Leave the model choice alone (by default the workspace's dreamer.toml gets "
    'memory.dream.synthesizer = "claude-code": dreams written by your Claude Code login; '
    "with --scope project, .dreamer/synthesizer records it for the team too).",
)
@click.option(
    "--no-permissions",
    is_flag=True,
    help="Leave permissions.allow alone: Claude Code then asks before each dreamer tool once.",
)
@workspace_option
def install(
    scope: str,
    dry_run: bool,
    plugin: bool,
    out: Path,
    no_synthesizer: bool,
    no_permissions: bool,
    workspace: str | None,
) -> None:
    """Add dreamer's hooks (SessionStart, PreCompact, SessionEnd) and register its MCP server.

    Shows each file's diff; running it again changes nothing. 'dream claude uninstall'
    removes exactly what this adds. With -w, hooks and server use that workspace; without,
    each project's own (see docs/guides/notes-and-search.md). Unless --no-synthesizer, the
    workspace's dreamer.toml also gets memory.dream.synthesizer = "claude-code", so dreams are
    written by this Claude Code login (a subscription needs no API key; see
    docs/guides/synthesizers.md); a dreamer.toml that names a synthesizer already is left as it
    is. With --plugin, writes the
    plugin folder instead (load it with 'claude --plugin-dir DIR', or add it as a marketplace:
    'claude plugin marketplace add DIR', then 'claude plugin install dreamer@dreamer').

    The project scope is for committing: its commands run the 'dream' found on each
    teammate's PATH (a hook prints a hint when there is none) and name no path of this machine.
    It also writes the model choice to .dreamer/synthesizer for the team: each teammate's
    first session takes it into their own dreamer.toml when the claude CLI is on their PATH,
    and otherwise says in one line how to opt in.
    Unless --no-permissions, permissions.allow lets Claude Code run dreamer's tools without
    asking, all but memory_forget and memory_accept (a person approves each of those).

    \b
    Examples:
      dream claude install --scope user
      dream claude install --no-synthesizer --dry-run
      dream claude install --scope project --no-permissions
      dream claude install --plugin --out ~/claude-plugins/dreamer
    """
    if plugin:
        _write_plugin(out, dry_run)
        return
    home, project, settings = _places(scope)
    shared = scope == "project"
    if shared:
        refuse_env_pin("claude install --scope project", "--scope local")
    dream = cs.PORTABLE if shared else _dream()
    pinned = Path(workspace).expanduser().absolute() if workspace else None

    def hooks_change(data: dict) -> dict:
        if not no_permissions:  # taken out and put back, so a second install writes the same
            data = cs.without_permissions(data)
        data = cs.with_hooks(data, dream, pinned)
        return data if no_permissions else cs.with_permissions(data)

    hooks_new = _edited(settings, hooks_change)
    mcp_file = cs.mcp_path(scope, home, project, os.environ)
    mcp_new = _edited(mcp_file, lambda data: cs.with_server(data, scope, project, dream, pinned))
    # Everything that can fail before any file changes: a dreamer.toml the offer cannot join,
    # then the workspace the hooks write to (made here, so 'dream status' answers at once).
    toml = _toml(pinned)
    offer = None if no_synthesizer else _planned_synthesizer(toml)
    if not dry_run:
        _make_workspace(toml.parent)
    changed = offer is not None
    if offer is not None:
        show_diff(toml, *offer)
        if not dry_run:
            atomic_write(toml, offer[1])
    if shared and not no_synthesizer:
        changed |= _commit_choice(project, dry_run)
    changed |= _change(settings, hooks_new, dry_run=dry_run, shared=shared)
    changed |= _change(mcp_file, mcp_new, dry_run=dry_run, shared=shared)
    verb = "Would install" if dry_run else "Installed"
    click.echo(f"{verb} for scope {scope}." if changed else f"Already installed ({scope}).")


def _make_workspace(root: Path) -> None:
    """Create the workspace the hooks write to, so 'dream status' answers right away."""
    from dreamer.memory.workspace import Workspace

    fresh = not (root / "memory").is_dir()
    with Workspace.open(root, create=True) as ws:
        ws.init()
    if fresh:
        click.echo(f"Created the dreamer workspace {root}.")


def _commit_choice(project: Path, dry_run: bool) -> bool:
    """Write the team's model choice (.dreamer/synthesizer) for the project to commit."""
    path = project / team.CHOICE
    if path.exists():
        return False  # the project's committed choice stands
    write_config(path, "", "claude-code\n", dry_run=dry_run, shared=True)
    return True


def _withdraw_choice(project: Path, dry_run: bool) -> bool:
    """Remove the team's choice install wrote (the folder too, when it held nothing else)."""
    path = project / team.CHOICE
    try:
        if path.read_text(encoding="utf-8") != "claude-code\n":
            return False  # not what install wrote: the team's own
    except (OSError, UnicodeDecodeError):
        return False
    click.echo(f"{'would remove' if dry_run else 'removed'} {path}")
    if not dry_run:
        path.unlink()
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when empty
    return True


def _toml(pinned: Path | None) -> Path:
    """The dreamer.toml of the workspace the hooks write to (pinned, or this folder's)."""
    return (pinned or location.resolve(None)[0]) / "dreamer.toml"


def _planned_synthesizer(path: Path) -> tuple[str, str] | None:
    """dreamer.toml's (before, after) with memory.dream.synthesizer = "claude-code" added;
    None when the file names a synthesizer already (the user's choice stands)."""
    try:
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        after = cs.with_synthesizer(before)
    except (ValueError, OSError) as e:
        raise UsageError(
            f'{path}: {e}; add memory.dream.synthesizer = "claude-code" yourself, or pass '
            "--no-synthesizer"
        ) from e
    return None if after is None else (before, after)


def _withdraw_synthesizer(path: Path, dry_run: bool) -> bool:
    """Remove the line install added to dreamer.toml (the file too, when nothing else is left)."""
    try:
        before = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    after = cs.without_synthesizer(before)
    if after == before:
        return False
    if not after:
        click.echo(f"{'would remove' if dry_run else 'removed'} {path}")
        if not dry_run:
            path.unlink()
        return True
    show_diff(path, before, after)
    if not dry_run:
        atomic_write(path, after)
    return True


def _write_plugin(out: Path, dry_run: bool) -> None:
    """Write the plugin folder, which is also a one-plugin marketplace (its manifest beside
    plugin.json), so both 'claude --plugin-dir DIR' and 'claude plugin marketplace add DIR'
    take it."""
    source = plugin_dir()
    files = sorted(p.relative_to(source) for p in source.rglob("*") if p.is_file())
    market = Path(".claude-plugin") / "marketplace.json"
    out = out.expanduser()
    if out.exists():
        raise UsageError(f"{out} exists already; pass --out with a new folder")
    for name in [*files, market]:
        click.echo(f"{'would write' if dry_run else 'wrote'} {out / name}")
    if not dry_run:
        shutil.copytree(source, out)
        atomic_write(out / market, json.dumps(_marketplace(source), indent=2) + "\n")


def _marketplace(source: Path) -> dict[str, object]:
    """A marketplace manifest whose one plugin is the folder it sits in."""
    plugin = json.loads((source / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    return {
        "name": plugin["name"],
        "owner": plugin["author"],
        "plugins": [
            {
                "name": plugin["name"],
                "source": "./",
                "description": plugin["description"],
                "version": plugin["version"],
            }
        ],
    }


@claude.command()
@_SCOPE
@click.option("--dry-run", is_flag=True, help="Show the changes only.")
@workspace_option
def uninstall(scope: str, dry_run: bool, workspace: str | None) -> None:
    """Remove dreamer's hooks and MCP server from a scope, and the synthesizer line install added.

    \b
    Example:
      dream claude uninstall --scope project
    """
    home, project, settings = _places(scope)
    mcp_file = cs.mcp_path(scope, home, project, os.environ)
    hooks_new = _edited(settings, lambda data: cs.without_permissions(cs.without_hooks(data)))
    mcp_new = _edited(mcp_file, lambda data: cs.without_server(data, scope, project))
    changed = _remove(settings, hooks_new, dry_run)
    changed |= _remove(mcp_file, mcp_new, dry_run)
    if scope == "project":
        changed |= _withdraw_choice(project, dry_run)
    pinned = Path(workspace).expanduser().absolute() if workspace else None
    changed |= _withdraw_synthesizer(_toml(pinned), dry_run)
    click.echo(f"Removed from scope {scope}." if changed else f"Nothing to remove ({scope}).")


def _doubled(scopes: dict) -> list[str]:
    """A line when the plugin and the settings' hooks both run for this project: each session
    would then get its memory twice."""
    plugin = [s for s, info in scopes.items() if any(p["enabled"] for p in info["plugin"])]
    hooks = [s for s, info in scopes.items() if info["hooks"]]
    if not plugin or not hooks:
        return []
    return [
        f"note: the dreamer plugin ({', '.join(plugin)}) and dreamer's hooks "
        f"({', '.join(hooks)}) both run here, so each session gets its memory twice; keep one "
        "('dream claude uninstall --scope SCOPE', or 'claude plugin uninstall dreamer')"
    ]


def _remove(path: Path, new: dict, dry_run: bool) -> bool:
    if not path.exists():
        return False
    if not new and cs.load(path):
        # The file held dreamer's entries only: install made it, so uninstall takes it away.
        click.echo(f"{'would remove' if dry_run else 'removed'} {path}")
        if not dry_run:
            path.unlink()
        return True
    return _change(path, new, dry_run=dry_run, shared=False)


@claude.command()
@json_option
@workspace_option
def status(as_json: bool, workspace: str | None) -> None:
    """Show the hooks and MCP server per scope, the workspace for this folder, its activity.

    \b
    Example:
      dream claude status --json
    """
    report: dict = {"scopes": {}}
    home, project, _ = _places("user")
    try:
        plugins = cs.plugin_installs(cs.config_dir(home, os.environ), project)
    except ValueError as e:
        plugins = {}
        report.setdefault("errors", []).append(str(e))
    for scope in cs.SCOPES:
        home, project, settings = _places(scope)
        try:
            hooks = cs.hooks_installed(cs.load(settings))
            mcp = cs.server_registered(
                cs.load(cs.mcp_path(scope, home, project, os.environ)), scope, project
            )
        except (ValueError, OSError) as e:
            hooks, mcp = [], False
            report.setdefault("errors", []).append(str(e))
        report["scopes"][scope] = {
            "settings": str(settings),
            "hooks": hooks,
            "mcp": mcp,
            "plugin": plugins.get(scope, []),
        }
    try:
        choice = team.committed(project)
    except ValueError as e:
        choice = None
        report.setdefault("errors", []).append(str(e))
    report["team_synthesizer"] = (
        {"name": choice[0], "file": str(choice[1])} if choice is not None else None
    )
    root, how = location.resolve(workspace)
    report["workspace"] = {
        "path": str(root),
        "chosen_by": how,
        "exists": (root / "memory").is_dir(),
    }
    if report["workspace"]["exists"]:
        from dreamer.memory.workspace import Workspace

        with Workspace.open(root, create=False) as ws:
            captures = {}
            for key, value in ws.store.records.meta_items("ingest.claude-code:"):
                captures[key.split(":", 1)[1]] = json.loads(value).get("last_at")
            dreams = ws.store.journal.dream_entries(1)
            report["workspace"].update(
                last_capture=captures,
                last_dream=dreams[0] if dreams else None,
                pending_notes=len(ws.scratch.notes()),
            )
    if as_json:
        emit_json(report)
        return
    for scope, info in report["scopes"].items():
        events = ", ".join(info["hooks"]) or "none"
        plugin = "; ".join(
            f"plugin {p['plugin']} {p['version'] or ''}".rstrip()
            + ("" if p["enabled"] else " (disabled)")
            for p in info["plugin"]
        )
        click.echo(
            f"{scope:<8} hooks: {events}; MCP server: {'yes' if info['mcp'] else 'no'}"
            + (f"; {plugin}" if plugin else "")
        )
    for line in _doubled(report["scopes"]):
        click.echo(line)
    for error in report.get("errors", []):
        click.echo(f"problem: {error}")
    if report["team_synthesizer"]:
        chosen = report["team_synthesizer"]
        click.echo(f"team synthesizer: {chosen['name']} (committed in {chosen['file']})")
    ws_info = report["workspace"]
    click.echo(
        f"workspace: {ws_info['path']} ({ws_info['chosen_by']}"
        f"{'' if ws_info['exists'] else ', not created yet'})"
    )
    if ws_info["exists"]:
        last = ws_info["last_dream"]
        click.echo(
            f"pending notes: {ws_info['pending_notes']}; last dream: "
            f"{last['started_at'] + ' ' + last['outcome'] if last else 'none yet'}"
        )
        for session, when in sorted(ws_info["last_capture"].items()):
            click.echo(f"captured {Path(session).name}: up to {when}")
