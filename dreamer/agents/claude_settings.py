"""Claude Code settings: dreamer's hooks and MCP registration, added and removed cleanly.

Where Claude Code keeps them (its settings documentation):

- hooks: ``~/.claude/settings.json`` (scope ``user``; ``$CLAUDE_CONFIG_DIR/settings.json``
  when that is set), ``<project>/.claude/settings.json``
  (``project``, shared through git), ``<project>/.claude/settings.local.json`` (``local``),
  as ``{"hooks": {"SessionStart": [{"matcher": ..., "hooks": [{"type": "command",
  "command": ...}]}]}}``;
- MCP servers: ``<project>/.mcp.json`` (``project``), ``~/.claude.json`` (or
  ``$CLAUDE_CONFIG_DIR/.claude.json``) top-level ``mcpServers`` (``user``) or under
  ``projects.<path>.mcpServers`` (``local``).

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
# is left out on purpose: it erases memory for good, so a person approves each one. So is
# accepting a held item: words a page or tool said would become the user's rule, so a person
# approves that too, not an agent a page may have steered.
ALLOWED_TOOLS = ("working_memory_note", "memory_search", "memory_get", "memory_feel", "memory_held")
MISSING_HINT = (
    "dreamer: the 'dream' command is not on PATH, so this session has no long-term memory; "
    "install it (pip install dreamer-memory) or add its folder to PATH, then start a new session"
)
_OURS = re.compile(r"(^|[/\\\s\"'])dream(\.exe)?[\"']?\s+hook\s")
_DREAM = re.compile(r"(^|[/\\])dream(\.exe)?$")


def settings_path(
    scope: str, home: Path, project: Path, environ: Mapping[str, str] | None = None
) -> Path:
    """The settings file that holds hooks for a scope (the user's in ``$CLAUDE_CONFIG_DIR``
    when ``environ`` sets it, as Claude Code reads it)."""
    if scope == "user":
        return config_dir(home, environ or {}) / "settings.json"
    name = "settings.json" if scope == "project" else "settings.local.json"
    return project / ".claude" / name


def mcp_path(
    scope: str, home: Path, project: Path, environ: Mapping[str, str] | None = None
) -> Path:
    """The file that registers MCP servers for a scope: ``.mcp.json``, else Claude Code's
    global ``.claude.json`` (in ``$CLAUDE_CONFIG_DIR`` when set, else in HOME)."""
    if scope == "project":
        return project / ".mcp.json"
    named = (environ or {}).get("CLAUDE_CONFIG_DIR")
    return (Path(named).expanduser() if named else home) / ".claude.json"


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
    check_hooks(settings, HOOK_EVENTS)
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


def check_hooks(settings: dict[str, Any], events: Mapping[str, str]) -> None:
    """ValueError naming the key when ``hooks`` (or one of dreamer's events in it) is not the
    shape Claude Code and Codex read: an object of event names to arrays."""
    hooks = settings.get("hooks")
    shape(hooks, dict, "hooks")
    for event in events:
        shape((hooks or {}).get(event), list, f"hooks.{event}")


def shape(value: Any, kind: type, key: str) -> None:
    """ValueError naming ``key`` when value is there and is not a JSON object (dict) or array."""
    if value is None or isinstance(value, kind):
        return
    wanted = "an object" if kind is dict else "an array"
    raise ValueError(f'"{key}" is {_json_kind(value)}, where {wanted} belongs')


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"{json.dumps(value)}"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def tool_rules() -> list[str]:
    """The ``permissions.allow`` rules that let Claude Code run dreamer's tools unasked."""
    return [f"mcp__{SERVER}__{tool}" for tool in ALLOWED_TOOLS]


def with_permissions(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings whose ``permissions.allow`` holds dreamer's tool rules (others untouched)."""
    shape(settings.get("permissions"), dict, "permissions")
    shape((settings.get("permissions") or {}).get("allow"), list, "permissions.allow")
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
    """The ``mcpServers`` object of a scope; ValueError naming a key of the wrong shape."""
    holder: Any = data
    where = ""
    if scope == "local":
        shape(data.get("projects"), dict, "projects")
        where = f"projects.{project}."
        holder = (data.get("projects") or {}).get(str(project))
        shape(holder, dict, where.rstrip("."))
        holder = holder or {}
    servers = holder.get("mcpServers")
    shape(servers, dict, f"{where}mcpServers")
    return servers


def with_server(
    data: dict[str, Any], scope: str, project: Path, dream: str, workspace: Path | None
) -> dict[str, Any]:
    """The MCP file with the dreamer server registered for a scope."""
    _servers(data, scope, project)  # the shape checked before anything changes
    out = copy.deepcopy(data)
    holder = out
    if scope == "local":
        holder = out.setdefault("projects", {}).setdefault(str(project), {})
    args = ["mcp"] + (["-w", str(workspace)] if workspace else [])
    holder.setdefault("mcpServers", {})[SERVER] = {"type": "stdio", "command": dream, "args": args}
    return out


def without_server(data: dict[str, Any], scope: str, project: Path) -> dict[str, Any]:
    """The MCP file without the dreamer server (and without containers it alone filled)."""
    _servers(data, scope, project)
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


# --- the plugin (what Claude Code records of ``claude plugin install``) ------------------------


def config_dir(home: Path, environ: Mapping[str, str]) -> Path:
    """Claude Code's own folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    named = environ.get("CLAUDE_CONFIG_DIR")
    return Path(named).expanduser() if named else home / ".claude"


def plugin_installs(config: Path, project: Path) -> dict[str, list[dict[str, Any]]]:
    """dreamer's plugin as Claude Code recorded its installs, per scope that reaches this
    project: ``plugins/installed_plugins.json`` lists each ``name@marketplace`` with its scope
    (``user``; ``project`` and ``local`` with a ``projectPath``) and version, and each scope's
    settings say under ``enabledPlugins`` whether it is on. ValueError names a broken file."""
    data = load(config / "plugins" / "installed_plugins.json")
    plugins = data.get("plugins")
    shape(plugins, dict, "plugins")
    found: dict[str, list[dict[str, Any]]] = {}
    for key, installs in (plugins or {}).items():
        if key.split("@", 1)[0] != SERVER or not isinstance(installs, list):
            continue
        for install in installs:
            if not isinstance(install, dict) or install.get("scope") not in SCOPES:
                continue
            scope = install["scope"]
            if scope != "user" and install.get("projectPath") != str(project):
                continue
            found.setdefault(scope, []).append({"plugin": key, "version": install.get("version")})
    for scope, entries in found.items():
        settings = config / "settings.json" if scope == "user" else None
        enabled = load(settings or settings_path(scope, config.parent, project))
        switches = enabled.get("enabledPlugins")
        for entry in entries:
            on = switches.get(entry["plugin"]) if isinstance(switches, dict) else None
            entry["enabled"] = on is not False  # Claude Code turns an installed plugin on
    return found


def load(path: Path) -> dict[str, Any]:
    """A JSON settings file ({} when it does not exist); ValueError names the file and what
    is wrong with it (not JSON, not an object, not readable, under a file where a folder
    belongs)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not UTF-8 text (byte {e.start})") from e
    except OSError as e:
        raise ValueError(f"cannot read {path} ({e.strerror})") from e
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as e:
        raise ValueError(f"{path} is not valid JSON ({e})") from e
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


def with_synthesizer(text: str, name: str = "claude-code") -> str | None:
    """dreamer.toml's text with ``memory.dream.synthesizer = NAME`` added.

    None when the file already names a synthesizer (the user's choice stands). ValueError when
    the file is not TOML, or is written so the line cannot be added safely (say, an inline
    ``dream = {...}`` table): then the user adds it by hand.
    """
    table = _parsed(text)
    dream = table.get("memory", {}).get("dream", {}) if isinstance(table, dict) else {}
    if isinstance(dream, dict) and "synthesizer" in dream:
        return None
    line = f"synthesizer = {json.dumps(name)}"
    lines = text.splitlines(keepends=True)
    heads = [i for i, text_line in enumerate(lines) if text_line.strip() == _TABLE]
    if heads:
        lines.insert(heads[0] + 1, line + "\n")
        new = "".join(lines)
    else:
        gap = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        new = f"{text}{gap}{_TABLE}\n{line}\n"
    after = _parsed(new)
    if after.get("memory", {}).get("dream", {}).get("synthesizer") != name:
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
