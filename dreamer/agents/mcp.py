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

import json
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
from dreamer.errors import DreamError, UsageError
from dreamer.memory.workspace import Workspace
from dreamer.store.base import Leasing
from dreamer.support.files import modified, stamp
from dreamer.support.resources import schema
from dreamer.support.version import __version__

SERVER_NAME = "dreamer"
MEMORY_URI = "dreamer://MEMORY.md"
SCRATCH_URI = "dreamer://scratch.md"
BOOTSTRAP_PROMPT = "bootstrap"
CRYSTAL_TEMPLATE = "dreamer://crystal/{id}"
RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for an unknown resource URI
INSTRUCTIONS = """\
dreamer is this agent's long-term memory. It outlives the conversation.
- working_memory_note: write down what will matter later, right away: facts about the user and
  the people around them, preferences and corrections, decisions, deadlines, anything the user
  asks you to remember. One fact per note; importance 0.8+ for what must not be lost.
- memory_search: before asking the user to repeat anything, when they refer to earlier work,
  and to follow a "Past: topic -> search: `keywords`" pointer in the working memory. Read a
  result whole with memory_get (or the resource dreamer://crystal/{id}).
- memory_forget: only when the user asks you to forget something; search first, then forget
  exactly those ids, or give a query: only memories holding every word of it are forgotten.
  To correct a fact, write a new note instead, with replaces (the old note's id or words) and
  about (what it is about).
- The resource dreamer://MEMORY.md is the working memory; the prompt "bootstrap" gives it
  sized for your context window. Notes join it at the next dream (every two hours)."""
# Hints for clients: which tools only read, which may destroy. All act on this memory only.
ANNOTATIONS = {
    "working_memory_note": types.ToolAnnotations(
        title="Write a note to memory",
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
    "memory_search": types.ToolAnnotations(
        title="Search memory", read_only_hint=True, open_world_hint=False
    ),
    "memory_get": types.ToolAnnotations(
        title="Read one memory", read_only_hint=True, open_world_hint=False
    ),
    "memory_feel": types.ToolAnnotations(
        title="Register a feeling",
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=False,
        open_world_hint=False,
    ),
    "memory_forget": types.ToolAnnotations(
        title="Forget memories for good",
        read_only_hint=False,
        destructive_hint=True,
        idempotent_hint=True,
        open_world_hint=False,
    ),
}


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


def _state_row(ws: Workspace) -> tuple[str, int, str] | None:
    """A shared store's committed state row (the truth there), if any."""
    store = ws.store
    return store.read_state() if isinstance(store, Leasing) else None


def _memory_modified(ws: Workspace) -> str | None:
    row = _state_row(ws)
    return row[2] if row is not None else modified(ws.memory_md)


def _stamps(ws: Workspace) -> dict[str, object]:
    """What changes when MEMORY.md or the scratch does (a file, or a shared store's rows)."""
    try:
        row = _state_row(ws)
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
        outputs = schema("tools/outputs")
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=d["name"],
                    title=ANNOTATIONS[d["name"]].title if d["name"] in ANNOTATIONS else None,
                    description=d["description"],
                    input_schema=d["input_schema"],
                    output_schema=outputs.get(d["name"]),
                    annotations=ANNOTATIONS.get(d["name"]),
                )
                for d in tools.tool_definitions()
            ]
        )

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
            resources=[
                types.Resource(
                    name="MEMORY.md",
                    uri=MEMORY_URI,
                    mime_type="text/markdown",
                    description="Working memory: who the user is, what is happening now, and "
                    "pointers to deeper memories. Rewritten by each dream.",
                    annotations=types.Annotations(last_modified=_memory_modified(ws)),
                ),
                types.Resource(
                    name="scratch.md",
                    uri=SCRATCH_URI,
                    mime_type="text/markdown",
                    description="Notes written since the last dream, oldest first.",
                    annotations=types.Annotations(last_modified=ws.scratch.modified()),
                ),
            ]
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
            resource_templates=[
                types.ResourceTemplate(
                    name="crystal",
                    uri_template=CRYSTAL_TEMPLATE,
                    mime_type="application/json",
                    description="One memory, whole, by the id memory_search returned.",
                )
            ]
        )

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=BOOTSTRAP_PROMPT,
                    description="Long-term memory for the system prompt: working memory and how "
                    "to use the memory tools, sized to the context window.",
                    arguments=[
                        types.PromptArgument(
                            name="context_window",
                            required=False,
                            description="Context window in tokens, e.g. 200000 or 128k.",
                        )
                    ],
                )
            ]
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


async def serve_stdio(ws: Workspace) -> None:
    """Serve ws over stdin/stdout until the client closes the connection."""
    changes = Changes()
    server = build_server(ws, changes)
    options = server.create_initialization_options(NotificationOptions(resources_changed=True))
    async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as group:
        group.start_soon(watch, ws, changes)
        await server.run(read_stream, write_stream, options)
        group.cancel_scope.cancel()  # the client is gone: stop watching


def serve(ws: Workspace) -> None:
    """Run the stdio server to completion (blocking)."""
    anyio.run(serve_stdio, ws)
