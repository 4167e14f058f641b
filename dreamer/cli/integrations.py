"""Commands that plug dreamer into other agents: the MCP server."""

from __future__ import annotations

import logging

import click

from dreamer.cli.common import open_workspace, workspace_option


@click.command()
@workspace_option
def mcp(workspace: str | None) -> None:
    """Serve the memory tools to an MCP client over stdio (runs until the client disconnects).

    Tools: working_memory_note, memory_search, memory_get, memory_feel. Resources:
    dreamer://MEMORY.md and dreamer://scratch.md. Prompt: bootstrap (the system-prompt block).
    The workspace is created if it does not exist yet.

    \b
    Examples:
      claude mcp add dreamer -- dream mcp -w ~/agents/ada
      dream mcp -w ~/agents/ada          (started by the MCP client, not by hand)
    """
    from dreamer.agents.mcp import serve

    # stdout carries the protocol; anything else a library logs goes to stderr.
    logging.basicConfig(level=logging.WARNING, format="dream mcp: %(levelname)s %(message)s")
    with open_workspace(workspace) as ws:
        ws.init()
        serve(ws)
