"""Commands that plug dreamer into other agents: the MCP server and the hooks."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from dreamer.cli.common import open_workspace, workspace_option

if TYPE_CHECKING:
    from dreamer.memory.workspace import Workspace


@click.command()
@workspace_option
def mcp(workspace: str | None) -> None:
    """Serve the memory tools to an MCP client over stdio (runs until the client disconnects).

    Tools: working_memory_note, memory_search, memory_get, memory_feel, memory_forget,
    memory_held, memory_accept. Resources: dreamer://MEMORY.md and dreamer://scratch.md.
    Prompt: bootstrap (the system-prompt block). The workspace is created if it does not exist
    yet (noted in its memory/hooks.log: only errors go to stderr). The handshake and the
    listings are answered at once, before the MCP SDK has loaded; Ctrl-C ends the server at
    once (exit status 130).

    \b
    Examples:
      claude mcp add dreamer -- dream mcp -w ~/agents/ada
      dream mcp -w ~/agents/ada          (started by the MCP client, not by hand)
    """
    import logging  # here: `dream hook` logs nothing through it

    from dreamer.agents import hook_log, mcp_front
    from dreamer.memory import location
    from dreamer.support.times import utc_now
    from dreamer.support.version import __version__

    # stdout carries the protocol; anything else a library logs goes to stderr.
    logging.basicConfig(level=logging.WARNING, format="dream mcp: %(levelname)s %(message)s")
    # Answer the handshake and the listings at once, while the MCP SDK loads in a thread.
    wire = mcp_front.take_wire()
    mcp_front.end_on_interrupt()
    loader = mcp_front.Loader()

    def opened() -> Workspace:
        # MCP clients log whatever a server writes to stderr as an error (Claude Code shows
        # "[ERROR]"): a new workspace is noted in its memory/hooks.log instead.
        root = location.resolve(workspace)[0]
        fresh = not (root / "memory").is_dir()
        ws = open_workspace(workspace, announce=False)
        ws.init()
        if fresh:
            made = f"created a new dreamer workspace at {ws.root}"
            hook_log.write(ws.root, "mcp", made, utc_now())
        return ws

    first, ws = mcp_front.front(wire, loader, opened, __version__)
    if wire.closed and not wire.buffer.strip() and not mcp_front.left_for_server(first):
        if ws is not None:
            ws.close()
        return  # the client left with every request answered: the SDK is not waited for
    server = loader.wait()
    with ws or opened() as ws:
        server.serve(ws, wire, first)


@click.command()
@click.argument(
    "event",
    type=click.Choice(
        (
            "session-start",
            "pre-compact",
            "session-end",
            "stop",
            "after-agent",
            "session-idle",
            "user-prompt-submit",
        )
    ),
)
@click.option(
    "--budget",
    type=click.FloatRange(min=0.1, max=600),
    default=5.0,
    show_default=True,
    help="Seconds the hook may take; past them it gives up (logged) and exits 0.",
)
@click.option(
    "--recall",
    is_flag=True,
    help="user-prompt-submit: add up to 3 strong memories for the prompt as context "
    "(also on with DREAM_HOOK_RECALL=1).",
)
@click.option("--in-background", "background", is_flag=True, hidden=True)
@workspace_option
def hook(event: str, budget: float, recall: bool, background: bool, workspace: str | None) -> None:
    """Handle a coding agent's hook event: its JSON on stdin, memory on stdout.

    Always exits 0, even on bad input: failures go to memory/hooks.log. SessionStart prints
    the memory as additionalContext and catches up on the project's transcripts in the
    background; PreCompact stores the transcript's new exchanges, SessionEnd does so in the
    background, and both then consolidate in the background. UserPromptSubmit recalls up to
    3 memories only with --recall (or DREAM_HOOK_RECALL=1). Stop (Codex) stores the turn
    that just ended, in the background, once Codex has written it to the rollout file;
    AfterAgent (Gemini CLI) likewise from the chat file, and session-idle (OpenCode's plugin)
    from the session's messages on stdin. 'dream claude install', 'dream codex install',
    'dream gemini install' and 'dream opencode install' set these up. With
    DREAM_HOOKS_DISABLED=1 (set for the claude CLI a dream runs) it does nothing, so a dream
    is never captured as a session.

    \b
    Example (what Claude Code runs):
      echo '{"hook_event_name":"SessionStart","source":"startup","cwd":"."}' \\
        | dream hook session-start
    """
    from dreamer.agents import hooks
    from dreamer.support.times import utc_now

    if workspace:
        os.environ["DREAM_WORKSPACE"] = workspace
    code = hooks.run(
        event,
        sys.stdin,
        sys.stdout,
        utc_now(),
        budget=None if background else budget,
        recall=recall,
        background=background,
    )
    sys.exit(code)
