"""``dream codex``: install, inspect and remove dreamer's Codex CLI hooks and MCP server."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dreamer.agents import claude_settings as cs
from dreamer.agents import codex_settings as xs
from dreamer.cli.claude import _dream, _make_workspace, home_folder, refuse_env_pin
from dreamer.cli.common import emit_json, json_option, workspace_option, write_config
from dreamer.errors import UsageError
from dreamer.memory import location

_SCOPE = click.option(
    "--scope",
    type=click.Choice(xs.SCOPES),
    default="project",
    show_default=True,
    help="user: ~/.codex (or $CODEX_HOME); project: .codex/ of this repository (shared via git).",
)


@click.group()
def codex() -> None:
    """Connect dreamer to the Codex CLI: hooks that capture sessions, and the MCP server.

    \b
    Examples:
      dream codex install --scope user --dry-run
      dream codex install
      dream codex status
      dream codex uninstall
    """


def _places(scope: str) -> tuple[Path, Path]:
    """(hooks.json, config.toml) of a scope."""
    base = xs.folder(scope, home_folder(), _project())
    return base / "hooks.json", base / "config.toml"


def _project() -> Path:
    cwd = Path.cwd().resolve()
    return location.repository_root(cwd) or cwd


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: cannot read it ({e}); check the file and its permissions") from e


def _write(
    path: Path, before: str, after: str, *, dry_run: bool, shared: bool, keep_empty: bool = False
) -> bool:
    """Show the diff of path; write (or remove, when empty) unless dry_run; True if it changed."""
    if before == after:
        return False
    if not after and path.exists() and not keep_empty:
        # The file held dreamer's entries only: install made it, so uninstall takes it away.
        click.echo(f"{'would remove' if dry_run else 'removed'} {path}")
        if not dry_run:
            path.unlink()
        return True
    write_config(path, before, after, dry_run=dry_run, shared=shared)
    return True


def _hooks_text(path: Path, change, *, remove_empty: bool) -> tuple[str, str]:
    """(before, after) of hooks.json, after = the JSON in the file's own layout."""
    text = _read(path)
    try:
        old = cs.load(path)
        new = change(old)
    except ValueError as e:
        named = str(e) if str(path) in str(e) else f"{path}: {e}"
        raise UsageError(f"{named}; fix the file, then run this again") from e
    if new == old:
        return text, text
    if not new and remove_empty:
        return text, ""
    return text, cs.dump(new, text)


@codex.command()
@_SCOPE
@click.option("--dry-run", is_flag=True, help="Show the changes only.")
@workspace_option
def install(scope: str, dry_run: bool, workspace: str | None) -> None:
    """Add dreamer's hooks (SessionStart, PreCompact, Stop) and register its MCP server.

    Hooks go into hooks.json, the server into config.toml ([mcp_servers.dreamer]), in
    ~/.codex for --scope user or .codex/ of this repository for --scope project. Shows each
    file's diff; running it again changes nothing; 'dream codex uninstall' gives the files back
    byte for byte. SessionStart hands the agent its memory; Stop stores the turn that just
    ended (from the session's rollout file); PreCompact stores what is new before compaction.
    Codex runs new hooks only once you trust them: start codex and review them with /hooks.
    With -w, hooks and server use that workspace; without, each project's own.

    The project scope is for committing: its commands run the 'dream' found on each
    teammate's PATH (a hook prints a hint when there is none) and name no path of this
    machine; Codex reads a project's .codex/ only once the project is trusted.

    \b
    Examples:
      dream codex install --scope user
      dream codex install --scope user -w ~/agents/ada --dry-run
      dream codex install --scope project
    """
    hooks_file, config_file = _places(scope)
    shared = scope == "project"
    if shared:
        refuse_env_pin("codex install --scope project", "--scope user")
    dream = xs.PORTABLE if shared else _dream()
    pinned = Path(workspace).expanduser().absolute() if workspace else None
    hooks_before, hooks_after = _hooks_text(
        hooks_file, lambda data: xs.with_hooks(data, dream, pinned), remove_empty=False
    )
    config_before = _read(config_file)
    try:
        config_after = xs.with_server(config_before, config_file, dream, pinned)
    except ValueError as e:
        raise UsageError(f"{e}; fix the file, then run this again") from e
    if not dry_run:  # before any file changes: a workspace that cannot be made stops here
        _make_workspace(pinned or location.resolve(None)[0])
    changed = False
    for path, before, after in (
        (hooks_file, hooks_before, hooks_after),
        (config_file, config_before, config_after),
    ):
        existed = path.exists()
        if _write(path, before, after, dry_run=dry_run, shared=shared) and not dry_run:
            xs.remember(path, before if existed else None, after)
            changed = True
        changed |= dry_run and before != after
    verb = "Would install" if dry_run else "Installed"
    click.echo(f"{verb} for scope {scope}." if changed else f"Already installed ({scope}).")
    if not dry_run and _memory_off(scope, hooks_file):
        click.echo(xs.TRUST_HINT)


def _trust(scope: str, hooks_file: Path) -> tuple[dict[str, str], bool]:
    """(per event: does Codex run dreamer's hook, is the project trusted) for a scope."""
    user_config = xs.folder("user", home_folder(), _project()) / "config.toml"
    text = _read(user_config)
    trust = xs.hook_trust(hooks_file, cs.load(hooks_file), text)
    project_ok = scope == "user" or xs.project_trusted(text, _project(), user_config)
    return trust, project_ok


def _memory_off(scope: str, hooks_file: Path) -> bool:
    try:
        trust, project_ok = _trust(scope, hooks_file)
    except (ValueError, UsageError):
        return True
    return not project_ok or any(state != "trusted" for state in trust.values())


@codex.command()
@_SCOPE
@click.option("--dry-run", is_flag=True, help="Show the changes only.")
@workspace_option
def uninstall(scope: str, dry_run: bool, workspace: str | None) -> None:
    """Remove dreamer's hooks and MCP server from a scope, and nothing else.

    A file install created is removed; a file that was there before gets its bytes back.
    -w is accepted for symmetry with install; the hooks are found whatever workspace they pin.

    \b
    Example:
      dream codex uninstall --scope user
    """
    hooks_file, config_file = _places(scope)
    hooks_before, hooks_after = _hooks_text(hooks_file, cs.without_hooks, remove_empty=True)
    config_before = _read(config_file)
    try:
        config_after = xs.without_server(config_before, config_file)
    except ValueError as e:
        raise UsageError(f"{e}; fix the file, then run this again") from e
    changed = False
    for path, before, after in (
        (hooks_file, hooks_before, hooks_after),
        (config_file, config_before, config_after),
    ):
        if before == after:
            continue  # none of dreamer's entries here
        known, kept = xs.original(path, before)
        if not known:  # edited since install: take dreamer's entries out of what is there
            changed |= _write(path, before, after, dry_run=dry_run, shared=False)
        else:  # as install left it: the bytes from before (no file, when there was none)
            changed |= _write(
                path, before, kept or "", dry_run=dry_run, shared=False, keep_empty=kept == ""
            )
        if not dry_run:
            xs.forget(path)
    click.echo(f"Removed from scope {scope}." if changed else f"Nothing to remove ({scope}).")


def _memory_state(scopes: dict, trusts: dict) -> str:
    """One line: whether Codex gives this project its memory, and what to do when it does not."""
    hooked = [trusts[scope] for scope, info in scopes.items() if info["hooks"]]
    if not hooked:
        return "off: dreamer's hooks are not installed (dream codex install)"
    for info in hooked:
        if not info["project_trusted"]:
            return (
                "off: Codex reads this project's .codex/ only once you trust the project "
                "(start codex here and accept it)"
            )
        states = set(info["hooks"].values())
        if states == {"trusted"}:
            continue
        if "modified" in states:
            return "off: the hooks changed since you trusted them; review them again with /hooks"
        if "disabled" in states:
            return "off: a hook is turned off in /hooks; turn it on there"
        return "off until you trust the hooks: start codex and review them with /hooks"
    return "on (the hooks are trusted)"


@codex.command()
@json_option
@workspace_option
def status(as_json: bool, workspace: str | None) -> None:
    """Show the hooks and MCP server per scope, the workspace for this folder, its captures.

    \b
    Example:
      dream codex status --json
    """
    report: dict = {"scopes": {}}
    for scope in xs.SCOPES:
        hooks_file, config_file = _places(scope)
        trust: dict[str, str] = {}
        project_ok = True
        try:
            hooks = cs.hooks_installed(cs.load(hooks_file), xs.HOOK_EVENTS)
            mcp = xs.server_registered(_read(config_file), config_file)
            trust, project_ok = _trust(scope, hooks_file)
        except (ValueError, OSError, UsageError) as e:
            hooks, mcp = [], False
            report.setdefault("errors", []).append(str(e))
        report["scopes"][scope] = {"hooks_file": str(hooks_file), "hooks": hooks, "mcp": mcp}
        report.setdefault("trust", {})[scope] = {"hooks": trust, "project_trusted": project_ok}
    report["memory"] = _memory_state(report["scopes"], report["trust"])
    root, how = location.resolve(workspace)
    exists = (root / "memory").is_dir()
    report["workspace"] = {"path": str(root), "chosen_by": how, "exists": exists}
    if report["workspace"]["exists"]:
        from dreamer.memory.workspace import Workspace

        with Workspace.open(root, create=False) as ws:
            report["workspace"]["last_capture"] = {
                key.split(":", 1)[1]: json.loads(value).get("last_at")
                for key, value in ws.store.records.meta_items("ingest.codex:")
            }
    if as_json:
        emit_json(report)
        return
    for scope, info in report["scopes"].items():
        events = ", ".join(info["hooks"]) or "none"
        click.echo(f"{scope:<8} hooks: {events}; MCP server: {'yes' if info['mcp'] else 'no'}")
        if info["hooks"]:
            trust = report["trust"][scope]["hooks"]
            states = ", ".join(f"{e} {trust.get(e, '?')}" for e in info["hooks"])
            click.echo(f"{'':<8} trust in Codex: {states}")
    click.echo(f"memory: {report['memory']}")
    for error in report.get("errors", []):
        click.echo(f"problem: {error}")
    ws_info = report["workspace"]
    click.echo(
        f"workspace: {ws_info['path']} ({ws_info['chosen_by']}"
        f"{'' if ws_info['exists'] else ', not created yet'})"
    )
    for session, when in sorted(ws_info.get("last_capture", {}).items()):
        click.echo(f"captured {Path(session).name}: up to {when}")
