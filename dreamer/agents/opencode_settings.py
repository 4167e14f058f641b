"""OpenCode settings: dreamer's plugin file and its MCP server in ``opencode.json``.

Where OpenCode keeps them (opencode.ai/docs/plugins and /docs/mcp-servers; checked against
OpenCode 1.18.33):

- plugins: every ``.js``/``.ts`` file in ``~/.config/opencode/plugins/`` (scope ``user``;
  ``$XDG_CONFIG_HOME/opencode`` when that is set) or ``<project>/.opencode/plugins/``
  (``project``) is loaded at start. A plugin gets OpenCode's SDK client and returns hooks:
  ``event`` sees every bus event (``session.idle`` once a turn is over), and
  ``experimental.chat.system.transform`` may add to each request's system prompt.
- MCP servers: ``{"mcp": {"<name>": {"type": "local", "command": [...], "enabled": true}}}``
  in ``~/.config/opencode/opencode.json`` or ``<project>/opencode.json``; their tools reach
  the model as ``<name>_<tool>``.

dreamer's plugin is ``plugins/dreamer.js``, made from ``opencode_plugin.js`` beside this
module: the file is dreamer's whole (its first line says so), so install writes it and
uninstall removes it, and a ``dreamer.js`` that is someone else's is never touched. The
server goes into ``opencode.json`` as the Gemini CLI's into settings.json: its text from before
install is kept (the record of :mod:`dreamer.agents.codex_settings`) and given back byte for
byte when the file is still as install left it. A project-scope install names no path of this
machine: the plugin runs the ``dream`` found on PATH (and tells the agent when there is none),
and the server's command is the bare ``dream``.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from dreamer.agents import claude_settings as cs

SCOPES = ("user", "project")
SERVER = cs.SERVER
PORTABLE = cs.PORTABLE
PLUGIN = "dreamer.js"
MARK = "// dreamer: OpenCode plugin written by `dream opencode install`"


def config_dir(home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """OpenCode's user config folder (``$XDG_CONFIG_HOME/opencode``, else ~/.config/opencode)."""
    env = os.environ if environ is None else environ
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return base / "opencode"


def places(
    scope: str, home: Path, project: Path, environ: Mapping[str, str] | None = None
) -> tuple[Path, Path]:
    """(plugin file, opencode.json) of a scope."""
    if scope == "user":
        folder = config_dir(home, environ)
        return folder / "plugins" / PLUGIN, folder / "opencode.json"
    return project / ".opencode" / "plugins" / PLUGIN, project / "opencode.json"


def plugin_text(dream: str, workspace: Path | None) -> str:
    """The plugin file install writes: the template with the command and workspace filled in."""
    template = resources.files("dreamer.agents").joinpath("opencode_plugin.js").read_text("utf-8")
    pin = ["-w", str(workspace)] if workspace else []
    filled = {
        "__DREAM__": json.dumps(dream),
        "__PIN__": json.dumps(pin),
        "__MISSING__": json.dumps(cs.MISSING_HINT),
    }
    for name, value in filled.items():
        template = template.replace(name, value)
    return template


def is_ours(text: str) -> bool:
    """Whether a plugin file is the one dreamer writes."""
    return text.startswith(MARK)


def with_server(config: dict[str, Any], dream: str, workspace: Path | None) -> dict[str, Any]:
    """opencode.json data with the dreamer MCP server (an older entry replaced)."""
    out = copy.deepcopy(config)
    command = [dream, "mcp"] + (["-w", str(workspace)] if workspace else [])
    out.setdefault("mcp", {})[SERVER] = {"type": "local", "command": command, "enabled": True}
    return out


def without_server(config: dict[str, Any]) -> dict[str, Any]:
    """opencode.json data without the dreamer server (nor a container it alone filled)."""
    out = copy.deepcopy(config)
    servers = out.get("mcp")
    if isinstance(servers, dict) and SERVER in servers:
        del servers[SERVER]
        if not servers:
            del out["mcp"]
    return out


def server_registered(config: dict[str, Any]) -> bool:
    """Whether opencode.json data registers the dreamer MCP server."""
    servers = config.get("mcp")
    return isinstance(servers, dict) and SERVER in servers
