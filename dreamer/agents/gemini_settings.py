"""Gemini CLI settings: dreamer's hooks and MCP server in ``settings.json``.

Where the Gemini CLI keeps them (its docs ``hooks/reference.md`` and
``reference/configuration.md``; checked against Gemini CLI 0.61.0):

- ``~/.gemini/settings.json`` (scope ``user``; ``$GEMINI_CLI_HOME/.gemini`` when that is set)
  or ``<project>/.gemini/settings.json`` (``project``, read only in a folder the person
  trusts). Settings from every layer are merged; hooks from every layer run.
- hooks: ``{"hooks": {"SessionStart": [{"matcher"?, "hooks": [{"type": "command", "command",
  "name", "timeout"}]}]}}``, shaped as Claude Code's but with the timeout in milliseconds and
  the command always run through the shell. The CLI warns once about a project hook it has not
  seen before (by ``name`` and ``command``), then runs it.
- MCP servers: ``{"mcpServers": {"<name>": {"command", "args"}}}``; their tools reach the model
  as ``mcp_<name>_<tool>``. A tool that asks for confirmation is left out of a headless run,
  so install lists dreamer's tools in ``tools.allowed`` (which skips the confirmation) as for
  Claude Code: all but ``memory_forget`` and ``memory_accept``, which a person approves each
  time.

dreamer's hooks are the ones whose command runs ``dream hook`` (as for Claude Code, so the
JSON side reuses :mod:`dreamer.agents.claude_settings`): SessionStart hands over the memory,
AfterAgent stores each finished turn, SessionEnd what is left. Install keeps the file's text
from before it (the same record :mod:`dreamer.agents.codex_settings` keeps, keyed by the
file's path), and uninstall writes it back when the file is still exactly as install left it;
a file edited since gets dreamer's entries taken out of it, in its own layout. A project-scope
install names no path of this machine: each hook is the shell line that finds ``dream`` on
PATH, and the server's command is the bare ``dream``.
"""

from __future__ import annotations

import copy
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dreamer.agents import claude_settings as cs

SCOPES = ("user", "project")
HOOK_EVENTS = {
    "SessionStart": "session-start",
    "AfterAgent": "after-agent",
    "SessionEnd": "session-end",
}
SERVER = cs.SERVER
PORTABLE = cs.PORTABLE
TIMEOUT_MS = 10_000  # the hooks' own budget is 5 s; the CLI's default is 60 s
TRUST_HINT = (
    "Gemini CLI reads a project's .gemini/settings.json only in a trusted folder, and warns "
    "once before it first runs a project hook."
)


def settings_path(
    scope: str, home: Path, project: Path, environ: Mapping[str, str] | None = None
) -> Path:
    """The settings.json of a scope (``$GEMINI_CLI_HOME/.gemini`` for the user when set)."""
    env = os.environ if environ is None else environ
    if scope == "user":
        base = Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else home
        return base / ".gemini" / "settings.json"
    return project / ".gemini" / "settings.json"


def with_hooks(
    settings: dict[str, Any], dream: str, workspace: Path | None = None
) -> dict[str, Any]:
    """Settings with dreamer's hooks (its old ones replaced, the others untouched)."""
    out = cs.without_hooks(settings)
    hooks = out.setdefault("hooks", {})
    pin = f" -w {shlex.quote(str(workspace))}" if workspace else ""
    for event, name in HOOK_EVENTS.items():
        command = f"{shlex.quote(dream)} hook {name}{pin}"
        if dream == PORTABLE:
            command = cs.portable_hook(name, pin)
        hook = {"name": f"dreamer-{name}", "type": "command", "command": command}
        hooks.setdefault(event, []).append({"hooks": [{**hook, "timeout": TIMEOUT_MS}]})
    return out


def with_server(settings: dict[str, Any], dream: str, workspace: Path | None) -> dict[str, Any]:
    """Settings with the dreamer MCP server registered (an older entry replaced)."""
    out = copy.deepcopy(settings)
    args = ["mcp"] + (["-w", str(workspace)] if workspace else [])
    out.setdefault("mcpServers", {})[SERVER] = {"command": dream, "args": args}
    return out


def tool_rules() -> list[str]:
    """The ``tools.allowed`` names that let the Gemini CLI run dreamer's tools unasked."""
    return [f"mcp_{SERVER}_{tool}" for tool in cs.ALLOWED_TOOLS]


def with_tools(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings whose ``tools.allowed`` holds dreamer's tools (the others untouched)."""
    out = copy.deepcopy(settings)
    tools = out.setdefault("tools", {})
    if not isinstance(tools, dict) or not isinstance(tools.setdefault("allowed", []), list):
        return out  # not the CLI's shape: left as it is (the tools then ask in a session)
    tools["allowed"].extend(rule for rule in tool_rules() if rule not in tools["allowed"])
    return out


def without_tools(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings without dreamer's ``tools.allowed`` names, nor containers they alone filled."""
    out = copy.deepcopy(settings)
    tools = out.get("tools")
    if not isinstance(tools, dict) or not isinstance(tools.get("allowed"), list):
        return out
    kept = [rule for rule in tools["allowed"] if rule not in tool_rules()]
    if len(kept) == len(tools["allowed"]):
        return out
    if kept:
        tools["allowed"] = kept
    else:
        del tools["allowed"]
        if not tools:
            del out["tools"]
    return out


def without_server(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings without the dreamer MCP server (and without a container it alone filled)."""
    out = copy.deepcopy(settings)
    servers = out.get("mcpServers")
    if isinstance(servers, dict) and SERVER in servers:
        del servers[SERVER]
        if not servers:
            del out["mcpServers"]
    return out


def server_registered(settings: dict[str, Any]) -> bool:
    """Whether these settings register the dreamer MCP server."""
    servers = settings.get("mcpServers")
    return isinstance(servers, dict) and SERVER in servers


def without(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings without any of dreamer's hooks, its server or its tool names."""
    return without_tools(without_server(cs.without_hooks(settings)))


def with_all(settings: dict[str, Any], dream: str, workspace: Path | None) -> dict[str, Any]:
    """Settings with dreamer's hooks, server and tool names (what install writes)."""
    return with_tools(with_server(with_hooks(settings, dream, workspace), dream, workspace))
