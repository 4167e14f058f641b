"""Commands that plug dreamer into other agents: the MCP server."""

from __future__ import annotations

import logging
import sys

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


@click.command()
@click.argument(
    "event",
    type=click.Choice(["session-start", "pre-compact", "session-end", "user-prompt-submit"]),
)
@click.option(
    "--budget",
    type=float,
    default=5.0,
    show_default=True,
    help="Seconds the hook may take; past them it gives up (logged) and exits 0.",
)
@workspace_option
def hook(event: str, budget: float, workspace: str | None) -> None:
    """Handle a Claude Code hook: its JSON on stdin, memory for the agent on stdout.

    Always exits 0, even on bad input: failures go to memory/hooks.log. SessionStart prints
    the memory as additionalContext; PreCompact and SessionEnd store the transcript's new
    exchanges, then consolidate in the background. UserPromptSubmit recalls up to 3 memories
    only with DREAM_HOOK_RECALL=1.

    \b
    Example (what Claude Code runs):
      echo '{"hook_event_name":"SessionStart","source":"startup","cwd":"."}' \\
        | dream hook session-start
    """
    import os
    import signal

    from dreamer.agents import hooks
    from dreamer.support.times import utc_now

    if workspace:
        os.environ["DREAM_WORKSPACE"] = workspace
    if hasattr(signal, "SIGALRM") and budget > 0:

        def give_up(signum: int, frame: object) -> None:
            raise TimeoutError(f"the hook took over {budget:g} s; stopped")

        signal.signal(signal.SIGALRM, give_up)
        signal.setitimer(signal.ITIMER_REAL, budget)
    sys.exit(hooks.run(event, sys.stdin, sys.stdout, utc_now()))
