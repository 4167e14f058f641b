"""The agent tools over the Model Context Protocol: ``dream mcp`` serves one workspace on stdio.

What the server offers (official MCP Python SDK, low-level ``Server``):

- instructions: when to note, search and forget;
- tools: the agent tools of ``dreamer.agents.tools`` (same schemas, same handler), with titles,
  read-only/destructive hints and output schemas; bad input is an ``isError`` tool result
  the model can read and fix, and the server keeps serving;
- resource template ``dreamer://crystal/{id}``: one crystal as JSON;
- resources: ``dreamer://MEMORY.md`` (the committed state; empty before the first dream) and
  ``dreamer://scratch.md`` (the notes waiting for the next dream);
- prompts: ``bootstrap`` (argument ``context_window``, in tokens): the block an agent puts in
  its system prompt, from ``dreamer.bootstrap``;
- change notifications: when a dream (in any process) rewrites MEMORY.md, or a note lands in
  scratch.md, the server says so: ``notifications/resources/list_changed`` (MEMORY.md's entry
  carries its ``lastModified``) and ``notifications/resources/updated`` for a subscribed URI
  (``resources/subscribe`` on 2025-era connections, a ``subscriptions/listen`` stream on
  2026-07-28 ones). A watcher polls the two files' metadata every second: a dream happens in
  another process, so there is nothing to hook into here.

Requests are handled one at a time on the event loop: the work is a few milliseconds of
SQLite, and one connection must not be shared across threads mid-transaction.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS

from dreamer.agents import tools
from dreamer.agents.bootstrap import bootstrap_block, parse_window
from dreamer.agents.mcp_front import (
    BOOTSTRAP_PROMPT,
    INSTRUCTIONS,
    MEMORY_URI,
    REPLAY_ID,
    SCRATCH_URI,
    SEEN_ID,
    SERVER_NAME,
    Wire,
    lines,
    prompt_list,
    resource_list,
    state_row,
    template_list,
    tool_list,
)
from dreamer.errors import DreamError, UsageError
from dreamer.memory.workspace import Workspace
from dreamer.support.files import stamp
from dreamer.support.version import __version__

RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for an unknown resource URI


WATCH_SECONDS = 1.0  # how often the watcher looks at MEMORY.md and scratch.md


class Changes:
    """Who hears about changed resources, and how.

    2026-07-28 clients open ``subscriptions/listen`` streams, fed by ``bus``. 2025-era clients
    get notifications on their session (remembered at their first request) and
    ``resources/updated`` only for the URIs they subscribed to.
    """

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.sessions: list[ServerSession] = []
        self.subscribed: set[str] = set()

    def seen(self, ctx: Any) -> None:
        session = getattr(ctx, "session", None)
        if session is not None and all(s is not session for s in self.sessions):
            self.sessions.append(session)

    async def changed(self, uris: list[str]) -> None:
        """Tell every client that the resource list and these resources changed."""
        await self.bus.publish(ResourcesListChanged())
        for uri in uris:
            await self.bus.publish(ResourceUpdated(uri))
        for session in self.sessions:  # on a 2026-era connection these are dropped
            await session.send_resource_list_changed()
            for uri in uris:
                if uri in self.subscribed:
                    await session.send_resource_updated(uri)


def _stamps(ws: Workspace) -> dict[str, object]:
    """What changes when MEMORY.md or the scratch does (a file, or a shared store's rows)."""
    try:
        row = state_row(ws)
        return {
            MEMORY_URI: (row[1], row[2], hash(row[0])) if row else stamp(ws.memory_md),
            SCRATCH_URI: ws.scratch.stamp(),
        }
    except DreamError:  # the store is unreachable for now: look again at the next beat
        return {}


async def watch(ws: Workspace, changes: Changes, every: float = WATCH_SECONDS) -> None:
    """Notify the clients whenever MEMORY.md or the scratch changes (in any process, on any
    machine sharing the store), until cancelled."""
    last = _stamps(ws)
    while True:
        await anyio.sleep(every)
        now = _stamps(ws)
        if not now:
            continue
        moved = [uri for uri in (MEMORY_URI, SCRATCH_URI) if last and now[uri] != last[uri]]
        last = now
        if moved:
            await changes.changed(moved)


def build_server(ws: Workspace, changes: Changes | None = None) -> Server[Any]:
    """An MCP server (not yet running) whose tools, resources and prompt act on ws."""
    changes = changes or Changes()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        changes.seen(ctx)
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tool_list()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        changes.seen(ctx)
        call = {
            "type": "tool_use",
            "id": str(ctx.request_id or ""),
            "name": params.name,
            "input": params.arguments if params.arguments is not None else {},
        }
        result = tools.handle(ws, call)
        structured = None if result["is_error"] else json.loads(result["content"])
        return types.CallToolResult(
            content=[types.TextContent(text=result["content"])],
            structured_content=structured,
            is_error=result["is_error"],
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        changes.seen(ctx)
        return types.ListResourcesResult(
            resources=[types.Resource.model_validate(r) for r in resource_list(ws)]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        changes.seen(ctx)
        uri = str(params.uri)
        if uri.startswith("dreamer://crystal/"):
            return _crystal(ws, uri)
        if uri not in (MEMORY_URI, SCRATCH_URI):
            raise MCPError(
                RESOURCE_NOT_FOUND, f"no resource {uri!r}; read {MEMORY_URI} or {SCRATCH_URI}"
            )
        try:
            text = ws.read_memory(errors="replace") if uri == MEMORY_URI else ws.scratch.text()
        except DreamError as e:
            raise MCPError(INTERNAL_ERROR, str(e)) from e
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        changes.seen(ctx)
        changes.subscribed.add(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        changes.subscribed.discard(str(params.uri))
        return types.EmptyResult()

    async def list_resource_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[types.ResourceTemplate.model_validate(t) for t in template_list()]
        )

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[types.Prompt.model_validate(p) for p in prompt_list()]
        )

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != BOOTSTRAP_PROMPT:
            raise MCPError(
                INVALID_PARAMS, f"no prompt {params.name!r}; the prompt is {BOOTSTRAP_PROMPT!r}"
            )
        window = (params.arguments or {}).get("context_window") or None
        try:
            block = bootstrap_block(ws, context_window=parse_window(window))
        except UsageError as e:
            raise MCPError(INVALID_PARAMS, str(e)) from e
        except DreamError as e:
            raise MCPError(INTERNAL_ERROR, str(e)) from e
        return types.GetPromptResult(
            description="dreamer bootstrap block",
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=block))],
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_list_resource_templates=list_resource_templates,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_subscriptions_listen=ListenHandler(changes.bus),
    )


def _crystal(ws: Workspace, uri: str) -> types.ReadResourceResult:
    """A dreamer://crystal/{id} resource: the crystal as JSON, as memory_get gives it."""
    result = tools.handle(
        ws, {"id": "resource", "name": "memory_get", "input": {"id": _id_of(uri)}}
    )
    if result["is_error"]:
        raise MCPError(RESOURCE_NOT_FOUND, result["content"].removeprefix("Error: "))
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(
                uri=uri, mime_type="application/json", text=result["content"]
            )
        ]
    )


def _id_of(uri: str) -> int:
    tail = uri.removeprefix("dreamer://crystal/")
    if not tail.isdigit() or int(tail) < 1:
        raise MCPError(
            RESOURCE_NOT_FOUND, f"no resource {uri!r}; use dreamer://crystal/<id>, e.g. /42"
        )
    return int(tail)


class _Input:
    """The server's input: the lines the front read and did not answer, then the wire's."""

    def __init__(self, first: list[bytes], rest: anyio.AsyncFile[str]) -> None:
        self.first = list(lines(first))
        self.rest = rest

    async def __aiter__(self) -> AsyncIterator[str]:
        for line in self.first:
            yield line
        async for line in self.rest:
            yield line


class _Output:
    """The server's output, less its answers to the requests the front replayed to it."""

    def __init__(self, out: anyio.AsyncFile[str], replayed: set[str]) -> None:
        self.out = out
        self.pending = replayed

    async def write(self, text: str) -> None:
        if self.pending:
            ident = json.loads(text).get("id")
            if ident in self.pending:
                self.pending.discard(ident)
                return
        await self.out.write(text)

    async def flush(self) -> None:
        await self.out.flush()


async def serve_stdio(ws: Workspace, wire: Wire | None = None, first: Sequence[bytes] = ()) -> None:
    """Serve ws until the client closes the connection: on stdin/stdout, or on the wire the
    front (dreamer.agents.mcp_front) took, after showing the server the lines in first."""
    changes = Changes()
    server = build_server(ws, changes)
    options = server.create_initialization_options(NotificationOptions(resources_changed=True))
    streams: dict[str, Any] = {}
    if wire is not None:
        shown, replayed = list(first), set()
        if any(REPLAY_ID.encode() in line for line in shown):
            # The front answered this client's listings: a tools/list of the server's own makes
            # it note the client's session, for change notifications (the answer is dropped).
            seen = {"jsonrpc": "2.0", "id": SEEN_ID, "method": "tools/list"}
            shown.append(json.dumps(seen).encode())
            replayed = {REPLAY_ID, SEEN_ID}
        reader = io.TextIOWrapper(wire.reader(), encoding="utf-8", errors="replace")
        writer = io.TextIOWrapper(wire.out, encoding="utf-8")
        streams = {
            "stdin": _Input(shown, anyio.wrap_file(reader)),
            "stdout": _Output(anyio.wrap_file(writer), replayed),
        }
    async with (
        stdio_server(**streams) as (read_stream, write_stream),
        anyio.create_task_group() as group,
    ):
        group.start_soon(watch, ws, changes)
        await server.run(read_stream, write_stream, options)
        group.cancel_scope.cancel()  # the client is gone: stop watching


def serve(ws: Workspace, wire: Wire | None = None, first: Sequence[bytes] = ()) -> None:
    """Run the server to completion (blocking)."""
    anyio.run(serve_stdio, ws, wire, list(first))
