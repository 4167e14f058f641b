"""Codex CLI settings: dreamer's hooks (``hooks.json``) and MCP server (``config.toml``).

Where the Codex CLI keeps them (developers.openai.com/codex/hooks and /codex/config; checked
against Codex CLI 0.169.0):

- hooks: ``hooks.json`` next to a config layer, ``~/.codex/hooks.json`` (scope ``user``; the
  folder is ``$CODEX_HOME`` when set) or ``<project>/.codex/hooks.json`` (``project``), shaped
  as Claude Code's: ``{"hooks": {"SessionStart": [{"matcher"?, "hooks": [{"type": "command",
  "command", "timeout"}]}]}}``. Hooks from every layer run. Codex runs a hook that no admin
  manages only once the person has reviewed and trusted it (``/hooks`` in the Codex TUI), so
  install says so; dreamer never writes that trust itself.
- MCP servers: ``[mcp_servers.<name>]`` tables (``command``, ``args``) in ``config.toml`` of
  the same folder. A project's ``.codex/`` layer is read only for a project the person trusts.

dreamer's hooks are the ones whose command runs ``dream hook``, exactly as for Claude Code, so
the JSON side reuses :mod:`dreamer.agents.claude_settings`. Install also keeps each file's text
from before it (in dreamer's user data folder, keyed by the file's path); uninstall writes that
text back when the file is still exactly as install left it, so even a hand-laid-out
``hooks.json`` comes back byte for byte. A file edited since gets dreamer's entries taken out:
config.toml's table is appended as its own block and removed as exactly those bytes (a table
edited by hand goes through tomlkit, which keeps comments, order and spacing). A project-scope
install names no path of this machine (the bare ``dream``, resolved on each PATH), as for
Claude Code.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit

from dreamer.agents import claude_settings as cs
from dreamer.support.files import atomic_write

SCOPES = ("user", "project")
HOOK_EVENTS = {
    "SessionStart": "session-start",
    "PreCompact": "pre-compact",
    "Stop": "stop",
}
SERVER = cs.SERVER
PORTABLE = cs.PORTABLE
TRUST_HINT = (
    "Codex runs new or changed hooks only once you trust them: start codex and review them "
    "with /hooks; until then this memory is off (dream codex status says when it is on)."
)
# Codex's names for the events in a hook's trust key (``<hooks.json>:<label>:<group>:<hook>``).
EVENT_LABELS = {"SessionStart": "session_start", "PreCompact": "pre_compact", "Stop": "stop"}
_NO_MATCHER = ("Stop", "UserPromptSubmit")  # events whose matcher Codex ignores


def folder(scope: str, home: Path, project: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The .codex folder of a scope (``$CODEX_HOME`` for the user scope when it is set)."""
    env = os.environ if environ is None else environ
    if scope == "user":
        return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    return project / ".codex"


def with_hooks(
    settings: dict[str, Any], dream: str, workspace: Path | None = None
) -> dict[str, Any]:
    """hooks.json data with dreamer's hooks (its old ones replaced, the others untouched)."""
    cs.check_hooks(settings, HOOK_EVENTS)
    out = cs.without_hooks(settings)
    hooks = out.setdefault("hooks", {})
    pin = f" -w {json.dumps(str(workspace))}" if workspace else ""
    for event, name in HOOK_EVENTS.items():
        command = f"{dream} hook {name}{pin}"
        if dream == PORTABLE:
            command = cs.portable_hook(name, pin)
        hooks.setdefault(event, []).append(
            {"hooks": [{"type": "command", "command": command, "timeout": 10}]}
        )
    return out


def hook_hash(event: str, group: dict[str, Any], hook: dict[str, Any]) -> str:
    """The hash Codex records when a person trusts a command hook (``trusted_hash``): SHA-256
    of the hook's normalized identity as compact JSON with sorted keys (checked against Codex
    CLI 0.169.0's own ``hooks/list`` in tests/agents/test_codex_install.py)."""
    handler: dict[str, Any] = {
        "type": "command",
        "command": hook.get("command"),
        "timeout": max(1, int(hook.get("timeout") or 600)),
        "async": bool(hook.get("async", False)),
    }
    if hook.get("statusMessage") is not None:
        handler["statusMessage"] = hook["statusMessage"]
    identity: dict[str, Any] = {"event_name": EVENT_LABELS[event], "hooks": [handler]}
    if group.get("matcher") is not None and event not in _NO_MATCHER:
        identity["matcher"] = group["matcher"]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def hook_trust(hooks_file: Path, data: dict[str, Any], config_text: str) -> dict[str, str]:
    """Per event, whether Codex will run dreamer's hook in ``hooks_file``: ``trusted``,
    ``untrusted`` (never reviewed), ``modified`` (changed since it was trusted) or
    ``disabled``, read from the ``[hooks.state."<key>"]`` tables Codex writes into the user's
    config.toml (``config_text``) when a person reviews hooks in ``/hooks``."""
    hooks = data.get("hooks")
    state = _parsed(config_text, hooks_file).get("hooks", {})
    states = state.get("state", {}) if isinstance(state, dict) else {}
    found: dict[str, str] = {}
    for event in HOOK_EVENTS:
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            inner = group.get("hooks") if isinstance(group, dict) else None
            for h, hook in enumerate(inner if isinstance(inner, list) else []):
                if not cs.is_ours(hook) or event in found:
                    continue
                key = f"{hooks_file.absolute()}:{EVENT_LABELS[event]}:{g}:{h}"
                mark = states.get(key) if isinstance(states, dict) else None
                mark = mark if isinstance(mark, dict) else {}
                if mark.get("enabled") is False:
                    found[event] = "disabled"
                elif mark.get("trusted_hash") is None:
                    found[event] = "untrusted"
                else:
                    trusted = mark["trusted_hash"] == hook_hash(event, group, hook)
                    found[event] = "trusted" if trusted else "modified"
    return found


def project_trusted(config_text: str, project: Path, path: Path) -> bool:
    """Whether the person trusts the project in Codex (it reads a project's .codex/ only then)."""
    projects = _parsed(config_text, path).get("projects")
    entry = projects.get(str(project)) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"


def _record(path: Path, data_dir: Path | None) -> Path:
    if data_dir is None:
        import platformdirs

        data_dir = platformdirs.user_data_path("dreamer", appauthor=False)
    key = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:24]
    return data_dir / "codex-install" / f"{key}.json"


def remember(path: Path, before: str | None, after: str, data_dir: Path | None = None) -> None:
    """Keep a file's text from before the first install, for uninstall to give back.

    ``before`` is None when the file did not exist. A record whose ``after`` is still the
    file's text keeps its ``before`` (a second install, say with another -w, is no new start).
    """
    record = _record(path, data_dir)
    try:
        old = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = None
    if isinstance(old, dict) and old.get("after") == (before or ""):
        before = old.get("before")
    record.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(record, json.dumps({"path": str(path), "before": before, "after": after}))


def original(path: Path, current: str, data_dir: Path | None = None) -> tuple[bool, str | None]:
    """(known, text): whether the file is exactly as install left it, and then its text from
    before install (None when it did not exist)."""
    record = _record(path, data_dir)
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False, None
    if not isinstance(data, dict) or data.get("after") != current:
        return False, None  # edited since: uninstall takes dreamer's entries out of what is there
    before = data.get("before")
    return True, before if isinstance(before, str) else None


def forget(path: Path, data_dir: Path | None = None) -> None:
    """Drop the record of a file (after uninstall)."""
    _record(path, data_dir).unlink(missing_ok=True)


def server_block(dream: str, workspace: Path | None) -> str:
    """The ``[mcp_servers.dreamer]`` table install appends to config.toml."""
    args = ["mcp"] + (["-w", str(workspace)] if workspace else [])
    return (
        f"[mcp_servers.{SERVER}]\ncommand = {json.dumps(dream)}\n"
        f"args = [{', '.join(json.dumps(arg) for arg in args)}]\n"
    )


def with_server(text: str, path: Path, dream: str, workspace: Path | None) -> str:
    """config.toml's text with ``[mcp_servers.dreamer]`` appended (an older one replaced).

    The table goes at the end after one newline (ending the last line, or leaving a blank one),
    so :func:`without_server` can take exactly those bytes away again.
    """
    wanted = _parsed(server_block(dream, workspace), path)["mcp_servers"][SERVER]
    servers = _parsed(text, path).get("mcp_servers")
    if isinstance(servers, dict) and servers.get(SERVER) == wanted:
        return text  # there as it should be, wherever Codex's own tables went since
    base = without_server(text, path)
    new = base + ("\n" if base else "") + server_block(dream, workspace)
    if _parsed(new, path).get("mcp_servers", {}).get(SERVER) != wanted:
        raise ValueError(f"{path}: the [mcp_servers.{SERVER}] table could not be added safely")
    return new


def without_server(text: str, path: Path) -> str:
    """config.toml's text without dreamer's table: the bytes install added, and only those.

    A table that was edited by hand (not the block install writes) is removed through tomlkit,
    which keeps every other line as it was.
    """
    data = _parsed(text, path)
    servers = data.get("mcp_servers")
    if not isinstance(servers, dict) or SERVER not in servers:
        return text
    header = f"[mcp_servers.{SERVER}]\n"
    at = text.find(header)
    if at == 0 or (at > 0 and text[at - 1] == "\n"):
        block_end = at + len(header)
        for line in text[block_end:].splitlines(keepends=True):
            if not line.strip() or line.lstrip().startswith(("[", "#")):
                break  # the table's own key lines end here
            block_end += len(line)
        new = text[: max(0, at - 1)] + text[block_end:]
        try:
            if SERVER not in _parsed(new, path).get("mcp_servers", {}):
                return new
        except ValueError:
            pass  # lines were joined that must not be: let tomlkit take the table out
    doc = tomlkit.parse(text)
    table = doc["mcp_servers"]
    del table[SERVER]
    if not table:
        del doc["mcp_servers"]
    return tomlkit.dumps(doc)


def server_registered(text: str, path: Path) -> bool:
    """Whether config.toml's text registers the dreamer MCP server."""
    servers = _parsed(text, path).get("mcp_servers")
    return isinstance(servers, dict) and SERVER in servers


def _parsed(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path} is not valid TOML ({e})") from e
