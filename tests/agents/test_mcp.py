"""`dream mcp` as a subprocess, driven by the official MCP client over stdio."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
from mcp import Client, ClientSession
from mcp.shared.exceptions import MCPError
from mcp_session import run_session, text_of

from dreamer import Workspace
from dreamer.agents import tools
from dreamer.agents.bootstrap import bootstrap_block

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

STATE = "# Working Memory State\n\n## The Bond\n- Ada prefers short answers.\n"


@pytest.mark.slow
def test_tools_note_search_and_memory_md_over_stdio(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "MEMORY.md").write_text(STATE, encoding="utf-8")
    seen: dict = {}

    async def scenario(session: ClientSession) -> None:
        seen["instructions"] = session.initialize_result.instructions
        listed = await session.list_tools()
        seen["tools"] = {tool.name: tool.input_schema for tool in listed.tools}
        seen["annotations"] = {tool.name: tool.annotations for tool in listed.tools}
        seen["outputs"] = {tool.name: tool.output_schema for tool in listed.tools}
        templates = await session.list_resource_templates()
        seen["templates"] = [t.uri_template for t in templates.resource_templates]

        noted = await session.call_tool(
            "working_memory_note",
            {"note": "Ada's grant report is due 2026-03-30", "importance": 0.9},
        )
        assert not noted.is_error, text_of(noted)
        seen["note"] = json.loads(text_of(noted))

        found = await session.call_tool("memory_search", {"query": "grant report deadline"})
        assert not found.is_error, text_of(found)
        seen["search"] = json.loads(text_of(found))
        seen["structured"] = found.structured_content

        got = await session.call_tool("memory_get", {"id": seen["note"]["id"]})
        seen["get"] = json.loads(text_of(got))
        crystal = await session.read_resource(f"dreamer://crystal/{seen['note']['id']}")
        seen["crystal"] = json.loads(crystal.contents[0].text)
        with pytest.raises(MCPError, match="no memory with id 999"):
            await session.read_resource("dreamer://crystal/999")

        memory = await session.read_resource("dreamer://MEMORY.md")
        seen["memory_md"] = memory.contents[0].text
        scratch = await session.read_resource("dreamer://scratch.md")
        seen["scratch"] = scratch.contents[0].text

        prompts = await session.list_prompts()
        seen["prompts"] = [prompt.name for prompt in prompts.prompts]
        prompt = await session.get_prompt("bootstrap", {"context_window": "32k"})
        seen["bootstrap"] = prompt.messages[0].content.text
        with pytest.raises(MCPError, match="not a size"):
            await session.get_prompt("bootstrap", {"context_window": "lots"})

    run_session(tmp_path, root, scenario)

    assert seen["tools"] == {d["name"]: d["input_schema"] for d in tools.tool_definitions()}
    assert "memory_search" in seen["instructions"] and "memory_forget" in seen["instructions"]
    notes = seen["annotations"]
    assert notes["memory_search"].read_only_hint and notes["memory_get"].read_only_hint
    assert notes["memory_forget"].destructive_hint and not notes["memory_forget"].read_only_hint
    assert all(a.title and a.open_world_hint is False for a in notes.values())
    assert all(schema and schema["type"] == "object" for schema in seen["outputs"].values())
    assert seen["templates"] == ["dreamer://crystal/{id}"]
    assert seen["crystal"] == seen["get"]
    import jsonschema

    for name, result in (
        ("memory_search", seen["search"]),
        ("memory_get", seen["get"]),
        ("working_memory_note", seen["note"]),
    ):
        jsonschema.validate(result, seen["outputs"][name])  # the results keep their promise
    hits = seen["search"]["results"]
    assert hits[0]["id"] == seen["note"]["id"]
    assert hits[0]["text"] == "Ada's grant report is due 2026-03-30"
    assert seen["structured"] == seen["search"]
    assert seen["get"]["importance"] == 0.9
    assert seen["memory_md"] == STATE
    assert "(importance: 0.9) Ada's grant report is due 2026-03-30" in seen["scratch"]
    # The note landed in the workspace itself, not just in the server's answer.
    assert seen["prompts"] == ["bootstrap"]
    assert "Ada prefers short answers." in seen["bootstrap"]
    assert "Ada's grant report is due 2026-03-30" in seen["bootstrap"]  # a pending note
    with Workspace.open(root, create=False) as ws:
        assert ws.get(seen["note"]["id"]).text == "Ada's grant report is due 2026-03-30"
        assert seen["bootstrap"] == bootstrap_block(ws, context_window=32_000)


BAD_CALLS = [
    ("working_memory_note", {}, "'note' is a required property"),
    ("working_memory_note", {"note": 7}, "note: 7 is not of type 'string'"),
    (
        "working_memory_note",
        {"note": "x", "importance": 5},
        "importance: 5 is greater than the maximum of 1",
    ),
    ("memory_search", {"query": "x", "limit": "ten"}, "limit: 'ten' is not of type 'integer'"),
    ("memory_get", {"id": 4242}, "no memory with id 4242"),
    ("memory_feel", {"hormone": "dopamine"}, "'delta' is a required property"),
    ("memory_delete", {"id": 1}, "unknown tool 'memory_delete'"),
]


@pytest.mark.slow
def test_bad_input_is_an_error_result_and_the_server_keeps_serving(tmp_path):
    root = tmp_path / "fresh" / "ws"  # the server creates a workspace that does not exist yet
    outcomes: list[tuple[bool, str]] = []
    after: dict = {}

    async def scenario(session: Client) -> None:
        for name, arguments, _ in BAD_CALLS:
            result = await session.call_tool(name, arguments)
            outcomes.append((result.is_error, text_of(result)))
            # Every bad call is followed by a good one on the same connection.
            good = await session.call_tool("memory_search", {"query": "anything"})
            assert not good.is_error, text_of(good)
        with pytest.raises(MCPError, match="no resource 'dreamer://secrets'"):
            await session.read_resource("dreamer://secrets")
        noted = await session.call_tool("working_memory_note", {"note": "still serving"})
        after["note"] = (noted.is_error, json.loads(text_of(noted)))
        after["empty_memory_md"] = (await session.read_resource("dreamer://MEMORY.md")).contents

    run_session(tmp_path, root, scenario, era="modern")

    for (name, _, message), (is_error, text) in zip(BAD_CALLS, outcomes, strict=True):
        assert is_error, f"{name} should have failed: {text}"
        assert message in text
    is_error, noted = after["note"]
    assert not is_error and noted["id"] == 1  # nothing before it was written
    assert after["empty_memory_md"][0].text == ""  # no dream yet: the state is empty
    with Workspace.open(root, create=False) as ws:
        assert [c.text for c in ws.store.crystals.select()] == ["still serving"]


@pytest.mark.parametrize("document", ["README.md", "docs/guides/mcp.md"])
def test_the_documented_registrations_run_dream_mcp_with_a_workspace(document):
    docs = (Path(__file__).resolve().parents[2] / document).read_text()
    config = json.loads(re.search(r"<!-- mcp-config -->\s*```json\n(.*?)```", docs, re.S)[1])
    desktop = config["mcpServers"]["dreamer"]
    claude_code = re.search(r"^claude mcp add dreamer -- (dream .*)$", docs, re.M)[1].split()
    assert desktop["command"].endswith("/dream") and claude_code[0] == "dream"
    # The same invocation the tests above start: dream mcp -w PATH.
    assert desktop["args"][:2] == claude_code[1:3] == ["mcp", "-w"]
    assert len(desktop["args"]) == len(claude_code) - 1 == 3


def dream_elsewhere(root: Path) -> None:
    """A dream in this (test) process, as `dream run` in another would: the server must notice."""
    from dreamer.dream import cycle
    from dreamer.support.times import utc_now

    with Workspace.open(root, create=False) as ws:
        ws.note("Ada moved the grant report deadline to April 2")
        assert cycle.run(ws, now=utc_now(), force=True).outcome == "committed"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_a_dream_elsewhere_is_announced_to_the_client(tmp_path, era):
    root = tmp_path / "ws"
    Workspace.open(root).close()
    heard: list[str] = []

    async def handshake(session: ClientSession) -> None:
        resources = session.initialize_result.capabilities.resources
        assert resources.list_changed and resources.subscribe
        await session.subscribe_resource("dreamer://MEMORY.md")
        before = await session.list_resources()
        assert before.resources[0].annotations.last_modified is None  # no dream yet
        await anyio.to_thread.run_sync(dream_elsewhere, root)
        while "updated dreamer://MEMORY.md" not in heard or "list_changed" not in heard:
            await anyio.sleep(0.1)
        after = await session.list_resources()
        assert after.resources[0].annotations.last_modified  # the new state's time

    async def modern(client) -> None:
        async with client.listen(
            resources_list_changed=True, resource_subscriptions=["dreamer://MEMORY.md"]
        ) as events:
            await anyio.to_thread.run_sync(dream_elsewhere, root)
            async for event in events:
                heard.append(f"updated {event.uri}" if hasattr(event, "uri") else "list_changed")
                if "updated dreamer://MEMORY.md" in heard and "list_changed" in heard:
                    break

    async def collect(message) -> None:
        method = getattr(message, "method", "")
        if method == "notifications/resources/updated":
            heard.append(f"updated {message.params.uri}")
        elif method == "notifications/resources/list_changed":
            heard.append("list_changed")

    run_session(
        tmp_path, root, handshake if era == "handshake" else modern, era=era, on_message=collect
    )
    assert "updated dreamer://MEMORY.md" in heard and "list_changed" in heard


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
@pytest.mark.postgres
def test_on_postgres_the_server_serves_and_watches_the_store_not_the_folder(tmp_path, request):
    """A fleet: the dream ran on another machine, so this folder's MEMORY.md never changed and
    there is no scratch file; the state row and the scratch rows are what the client sees."""
    url = request.getfixturevalue("pg_database")
    environ = {"DREAM_STORE_URL": url}
    root = tmp_path / "ws"
    Workspace.open(root, environ=environ).close()
    heard: list[str] = []

    def dream_on_another_machine() -> None:
        from dreamer.dream import cycle
        from dreamer.support.times import utc_now

        with Workspace.open(root, create=False, environ=environ) as ws:
            before = ws.memory_md.read_bytes() if ws.memory_md.exists() else None
            assert cycle.run(ws, now=utc_now(), force=True).outcome == "committed"
            if before is None:  # that machine's file, not this one's
                ws.memory_md.unlink()
            else:
                ws.memory_md.write_bytes(before)

    async def scenario(session: ClientSession) -> None:
        await session.subscribe_resource("dreamer://MEMORY.md")
        await session.subscribe_resource("dreamer://scratch.md")
        noted = await session.call_tool(
            "working_memory_note", {"note": "Ada moved the grant report deadline to April 2"}
        )
        assert not noted.is_error
        scratch_md = await session.read_resource("dreamer://scratch.md")
        assert "grant report deadline" in scratch_md.contents[0].text
        assert not (root / "memory" / "scratch.md").exists()
        while "updated dreamer://scratch.md" not in heard:
            await anyio.sleep(0.1)
        await anyio.to_thread.run_sync(dream_on_another_machine)
        while "updated dreamer://MEMORY.md" not in heard:
            await anyio.sleep(0.1)
        memory_md = await session.read_resource("dreamer://MEMORY.md")
        assert "April 2" in memory_md.contents[0].text
        assert not (root / "MEMORY.md").exists()  # served from the state row
        listed = await session.list_resources()
        assert listed.resources[0].annotations.last_modified  # the state row's time

    async def collect(message) -> None:
        if getattr(message, "method", "") == "notifications/resources/updated":
            heard.append(f"updated {message.params.uri}")

    run_session(tmp_path, root, scenario, on_message=collect, env=environ)
