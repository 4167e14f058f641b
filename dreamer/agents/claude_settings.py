"""Claude Code settings: dreamer's hooks and MCP registration, added and removed cleanly.

Where Claude Code keeps them (its settings documentation):

- hooks: ``~/.claude/settings.json`` (scope ``user``), ``<project>/.claude/settings.json``
  (``project``, shared through git), ``<project>/.claude/settings.local.json`` (``local``),
  as ``{"hooks": {"SessionStart": [{"matcher": ..., "hooks": [{"type": "command",
  "command": ...}]}]}}``;
- MCP servers: ``<project>/.mcp.json`` (``project``), ``~/.claude.json`` top-level
  ``mcpServers`` (``user``) or under ``projects.<path>.mcpServers`` (``local``).

dreamer's entries are the ones whose command runs ``dream hook`` (or ``dream mcp``), and the
``permissions.allow`` rules for its MCP tools, so installing twice changes nothing and
uninstalling removes those and nothing else: the other hooks, servers, rules and keys of the
file stay as they were, in their order.

A project-scope install is committed and pulled by teammates whose ``dream`` lives elsewhere,
so it names no path of this machine: each hook is a POSIX shell line that looks ``dream`` up on
PATH and, when it is missing, prints one hint and exits 0 (Claude Code runs hook commands in a
shell, Git Bash on Windows); the MCP server's command is the bare ``dream``, which Claude Code
resolves on PATH. User and local scopes are this machine's own and keep the absolute path, in
Claude Code's exec form (``command`` plus ``args``, no shell).
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SCOPES = ("user", "project", "local")
HOOK_EVENTS = {
    "SessionStart": "session-start",
    "PreCompact": "pre-compact",
    "SessionEnd": "session-end",
}
SERVER = "dreamer"
PORTABLE = "dream"  # the command a project-scope install writes: resolved on each machine's PATH
# The MCP tools Claude Code may run without asking (rule ``mcp__<server>__<tool>``). Forgetting
# is left out on purpose: it erases memory for good, so a person approves each one.
ALLOWED_TOOLS = ("working_memory_note", "memory_search", "memory_get", "memory_feel")
MISSING_HINT = (
    "dreamer: the 'dream' command is not on PATH, so this session has no long-term memory; "
    "install it (pip install dreamer-memory) or add its folder to PATH, then start a new session"
)
_OURS = re.compile(r"(^|[/\\\s\"'])dream(\.exe)?[\"']?\s+hook\s")
_DREAM = re.compile(r"(^|[/\\])dream(\.exe)?$")


def settings_path(scope: str, home: Path, project: Path) -> Path:
    """The settings file that holds hooks for a scope."""
    if scope == "user":
        return home / ".claude" / "settings.json"
    name = "settings.json" if scope == "project" else "settings.local.json"
    return project / ".claude" / name


def mcp_path(scope: str, home: Path, project: Path) -> Path:
    """The file that registers MCP servers for a scope."""
    return project / ".mcp.json" if scope == "project" else home / ".claude.json"


def is_ours(hook: Any) -> bool:
    """Whether a hook entry runs ``dream hook`` (a shell line, or the exec form: ``dream`` as
    the command and ``hook ...`` as its args)."""
    if not isinstance(hook, dict):
        return False
    args = hook.get("args")
    if isinstance(args, list) and args[:1] == ["hook"]:
        return bool(_DREAM.search(str(hook.get("command", ""))))
    return bool(_OURS.search(" " + str(hook.get("command", ""))))


def with_hooks(
    settings: dict[str, Any], dream: str, workspace: Path | None = None
) -> dict[str, Any]:
    """Settings with dreamer's hooks (the old ones of dreamer replaced, others untouched)."""
    out = without_hooks(settings)
    hooks = out.setdefault("hooks", {})
    pin = f" -w {json.dumps(str(workspace))}" if workspace else ""
    for event, name in HOOK_EVENTS.items():
        hook: dict[str, Any] = {"type": "command", "command": portable_hook(name, pin)}
        if dream != PORTABLE:
            # This machine's own path, in exec form: no shell between it and Claude Code, so
            # a path with spaces or quotes runs as it is.
            pinned = ["-w", str(workspace)] if workspace else []
            hook = {"type": "command", "command": dream, "args": ["hook", name, *pinned]}
        hooks.setdefault(event, []).append({"hooks": [{**hook, "timeout": 10}]})
    return out


def portable_hook(name: str, pin: str = "") -> str:
    """A hook line that runs ``dream hook NAME`` found on PATH, or prints the hint and exits 0.

    The SessionStart hint goes to stdout, which Claude Code hands to the model, so the agent can
    tell the person why it remembers nothing; the others go to stderr.
    """
    to = "" if name == "session-start" else " >&2"
    return (
        f"command -v dream >/dev/null 2>&1 && exec dream hook {name}{pin} "
        f"|| echo {json.dumps(MISSING_HINT)}{to}"
    )


def tool_rules() -> list[str]:
    """The ``permissions.allow`` rules that let Claude Code run dreamer's tools unasked."""
    return [f"mcp__{SERVER}__{tool}" for tool in ALLOWED_TOOLS]


def with_permissions(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings whose ``permissions.allow`` holds dreamer's tool rules (others untouched)."""
    out = copy.deepcopy(settings)
    permissions = out.setdefault("permissions", {})
    allow = permissions.setdefault("allow", [])
    allow.extend(rule for rule in tool_rules() if rule not in allow)
    return out


def without_permissions(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings without dreamer's tool rules, and without containers they alone filled."""
    out = copy.deepcopy(settings)
    permissions = out.get("permissions")
    if not isinstance(permissions, dict) or not isinstance(permissions.get("allow"), list):
        return out
    ours = set(tool_rules())
    kept = [rule for rule in permissions["allow"] if rule not in ours]
    if len(kept) == len(permissions["allow"]):
        return out
    if kept:
        permissions["allow"] = kept
    else:
        del permissions["allow"]
        if not permissions:
            del out["permissions"]
    return out


def without_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings with dreamer's hooks removed, and containers they alone filled."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                inner = [hook for hook in group["hooks"] if not is_ours(hook)]
                if not inner and group["hooks"]:
                    continue  # the group held only dreamer's hook
                group = {**group, "hooks": inner}
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def hooks_installed(settings: dict[str, Any], events: Mapping[str, str] = HOOK_EVENTS) -> list[str]:
    """The events for which dreamer's hook is in these settings (Claude Code's ``settings.json``
    or Codex's ``hooks.json``, which share a shape; each agent passes its ``HOOK_EVENTS``)."""
    hooks = settings.get("hooks")
    found = []
    for event in events:
        groups = hooks.get(event, []) if isinstance(hooks, dict) else []
        groups = groups if isinstance(groups, list) else []
        if any(is_ours(h) for g in groups if isinstance(g, dict) for h in g.get("hooks") or []):
            found.append(event)
    return found


def _servers(data: dict[str, Any], scope: str, project: Path) -> dict[str, Any] | None:
    if scope == "local":
        return data.get("projects", {}).get(str(project), {}).get("mcpServers")
    return data.get("mcpServers")


def with_server(
    data: dict[str, Any], scope: str, project: Path, dream: str, workspace: Path | None
) -> dict[str, Any]:
    """The MCP file with the dreamer server registered for a scope."""
    out = copy.deepcopy(data)
    holder = out
    if scope == "local":
        holder = out.setdefault("projects", {}).setdefault(str(project), {})
    args = ["mcp"] + (["-w", str(workspace)] if workspace else [])
    holder.setdefault("mcpServers", {})[SERVER] = {"type": "stdio", "command": dream, "args": args}
    return out


def without_server(data: dict[str, Any], scope: str, project: Path) -> dict[str, Any]:
    """The MCP file without the dreamer server (and without containers it alone filled)."""
    out = copy.deepcopy(data)
    holder = out.get("projects", {}).get(str(project), {}) if scope == "local" else out
    servers = holder.get("mcpServers") if isinstance(holder, dict) else None
    if isinstance(servers, dict) and SERVER in servers:
        del servers[SERVER]
        if not servers:
            del holder["mcpServers"]
        if scope == "local" and not holder:
            del out["projects"][str(project)]
            if not out["projects"]:
                del out["projects"]
    return out


def server_registered(data: dict[str, Any], scope: str, project: Path) -> bool:
    """Whether the dreamer server is registered in this MCP file for a scope."""
    servers = _servers(data, scope, project)
    return isinstance(servers, dict) and SERVER in servers


def load(path: Path) -> dict[str, Any]:
    """A JSON settings file ({} when it does not exist); ValueError names a broken one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    data = json.loads(text) if text.strip() else {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data


def dump(data: dict[str, Any], like: str = "") -> str:
    """JSON in the layout of ``like`` (the file's text before), else as Claude Code writes it.

    Keeping the file's own layout (one line or indented, its indent and separators, a final
    newline or none) means install shows a diff of its own lines only, and uninstall gives the
    file back byte for byte whenever it was written by a JSON serializer in the first place.
    """
    body = like.strip()
    if not body:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    end = "\n" if like.endswith("\n") else ""
    if "\n" not in body:  # all on one line
        items = ", " if re.search(r'[\]}"\d],\s', body) else ","
        keys = ": " if re.search(r'":\s', body) else ":"
        return json.dumps(data, separators=(items, keys), ensure_ascii=False) + end
    second = body.splitlines()[1]
    indent: str | int = second[: len(second) - len(second.lstrip())] or 2
    if isinstance(indent, str) and set(indent) == {" "}:
        indent = len(indent)
    return json.dumps(data, indent=indent, ensure_ascii=False) + end


# --- the synthesizer offer (the workspace's dreamer.toml) ---------------------------------------

SYNTH_LINE = 'synthesizer = "claude-code"'
_TABLE = "[memory.dream]"


def with_synthesizer(text: str) -> str | None:
    """dreamer.toml's text with ``memory.dream.synthesizer = "claude-code"`` added.

    None when the file already names a synthesizer (the user's choice stands). ValueError when
    the file is not TOML, or is written so the line cannot be added safely (say, an inline
    ``dream = {...}`` table): then the user adds it by hand.
    """
    table = _parsed(text)
    dream = table.get("memory", {}).get("dream", {}) if isinstance(table, dict) else {}
    if isinstance(dream, dict) and "synthesizer" in dream:
        return None
    lines = text.splitlines(keepends=True)
    heads = [i for i, line in enumerate(lines) if line.strip() == _TABLE]
    if heads:
        lines.insert(heads[0] + 1, SYNTH_LINE + "\n")
        new = "".join(lines)
    else:
        gap = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        new = f"{text}{gap}{_TABLE}\n{SYNTH_LINE}\n"
    after = _parsed(new)
    if after.get("memory", {}).get("dream", {}).get("synthesizer") != "claude-code":
        raise ValueError("the line could not be added safely")
    return new


def without_synthesizer(text: str) -> str:
    """dreamer.toml's text without the line the offer added ('' when nothing else was left)."""
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if line.strip() != SYNTH_LINE]
    new = "".join(kept)
    return "" if new.strip() == _TABLE else new


def _parsed(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"it is not valid TOML ({e})") from e
