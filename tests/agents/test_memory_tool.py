"""The memory-tool backend, driven by the SDK's own tool runner against the fake Messages API."""

from __future__ import annotations

import json

import pytest
from anthropic.lib.tools import ToolError
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool
from anthropic.types.beta import (
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818ViewCommand,
)
from fake_anthropic import FakeAnthropic, Recorded, Scripted, message_body

from dreamer import Workspace
from dreamer.agents.memory_tool import FILES_KEY, DreamerMemoryTool

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

STATE = "# Working Memory State\n\n## The Bond\n- Ada prefers short answers.\n"
NOTE = "Ada drinks her coffee black, no sugar."


def tool_result(request: Recorded) -> dict:
    """The one tool_result block the runner sent back in this request."""
    (block,) = [b for b in request.json["messages"][-1]["content"] if b["type"] == "tool_result"]
    return block


def text_of(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


@pytest.mark.slow
def test_the_sdk_tool_runner_drives_view_create_str_replace_and_delete(ws, now):
    ws.memory_md.write_text(STATE, encoding="utf-8")
    fake = FakeAnthropic()
    calls = iter(range(100))

    def use(make_input):
        def answer(request: Recorded) -> Scripted:
            body = message_body(
                [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{next(calls)}",
                        "name": "memory",
                        "input": make_input(),
                    }
                ],
                stop_reason="tool_use",
            )
            return Scripted(200, body)

        return answer

    newest = ws.store.crystals.max_crystal_id
    fake.push(use(lambda: {"command": "view", "path": "/memories"}))
    fake.push(
        use(lambda: {"command": "create", "path": "/memories/notes/coffee.md", "file_text": NOTE})
    )
    fake.push(use(lambda: {"command": "view", "path": f"/memories/crystals/{newest()}.md"}))
    fake.push(
        use(
            lambda: {
                "command": "str_replace",
                "path": "/memories/MEMORY.md",
                "old_str": "short",
                "new_str": "long",
            }
        )
    )
    fake.push(
        use(
            lambda: {
                "command": "str_replace",
                "path": "/memories/notes/coffee.md",
                "old_str": "black, no sugar",
                "new_str": "with oat milk",
            }
        )
    )
    fake.push(use(lambda: {"command": "view", "path": "/memories/../secrets.txt"}))
    fake.push(use(lambda: {"command": "delete", "path": "/memories/notes/coffee.md"}))
    fake.text("Done.")

    client = fake.client()
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-5-5",
        max_tokens=1024,
        messages=[{"role": "user", "content": "Remember how I take my coffee."}],
        tools=[DreamerMemoryTool(ws, clock=lambda: now)],
    )
    final = runner.until_done()
    assert final.content[0].text == "Done."
    assert fake.requests[0].json["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    results = [tool_result(r) for r in fake.requests[1:]]
    listing, created, crystal, refused, replaced, escaped, deleted = results

    assert "/memories/MEMORY.md" in text_of(listing) and not listing.get("is_error")
    assert "File created successfully" in text_of(created)
    assert NOTE in text_of(crystal)
    assert refused["is_error"] and "/memories/notes/" in text_of(refused)
    assert ws.memory_md.read_text(encoding="utf-8") == STATE  # dreams own it
    assert "note" in text_of(replaced) and not replaced.get("is_error")
    assert escaped["is_error"] and "escape" in text_of(escaped)
    assert "forgotten" in text_of(deleted)
    # The first note was replaced (forgotten), the correction deleted (forgotten): no text left.
    assert ws.store.forgetting.tombstone_count() == 2
    assert ws.search("coffee", now=now) == []
    assert json.loads(ws.store.records.get_meta(FILES_KEY)) == {}


def test_notes_are_real_notes_and_insert_keeps_the_files_order(ws, now):
    tool = DreamerMemoryTool(ws, clock=lambda: now)
    tool.call({"command": "create", "path": "/memories/notes/ada.md", "file_text": "first fact"})
    tool.call(
        {
            "command": "insert",
            "path": "/memories/notes/ada.md",
            "insert_line": 0,
            "insert_text": "zeroth fact",
        }
    )
    tool.call(
        {
            "command": "insert",
            "path": "/memories/notes/ada.md",
            "insert_line": 2,
            "insert_text": "last fact",
        }
    )
    shown = tool.view(
        BetaMemoryTool20250818ViewCommand(command="view", path="/memories/notes/ada.md")
    )
    assert [line.split("\t")[1] for line in shown.splitlines()[1:]] == [
        "zeroth fact",
        "first fact",
        "last fact",
    ]
    assert [n.text for n in ws.scratch.notes()][-3:] == ["first fact", "zeroth fact", "last fact"]
    assert ws.search("zeroth fact", now=now)[0].text == "zeroth fact"
    tool.rename(
        BetaMemoryTool20250818RenameCommand(
            command="rename", old_path="/memories/notes/ada.md", new_path="/memories/notes/b.md"
        )
    )
    assert "/memories/notes/b.md" in tool.call({"command": "view", "path": "/memories/notes"})
    with pytest.raises(ToolError, match="range"):
        tool.insert(
            BetaMemoryTool20250818InsertCommand(
                command="insert", path="/memories/notes/b.md", insert_line=9, insert_text="x"
            )
        )


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "memories/x.md",
        "/memories/../x",
        "/memories/notes/../../x",
        "/memories/notes/../../../etc/passwd",
        "/other/memories/x",
    ],
)
def test_paths_the_sdks_own_backend_refuses_are_refused(ws, tmp_path, path):
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
    with pytest.raises(ToolError):
        sdk.view(BetaMemoryTool20250818ViewCommand(command="view", path=path))
    with pytest.raises(ToolError, match="/memories"):
        DreamerMemoryTool(ws).call({"command": "create", "path": path, "file_text": "x"})
    assert ws.store.crystals.crystal_count() == 0


def test_memory_md_and_crystals_cannot_be_written(ws, now):
    ws.memory_md.write_text(STATE, encoding="utf-8")
    crystal_id = ws.note("Ada lives in Lyon.", at=now)
    tool = DreamerMemoryTool(ws, clock=lambda: now)
    for command in (
        {"command": "create", "path": "/memories/MEMORY.md", "file_text": "x"},
        {"command": "insert", "path": "/memories/MEMORY.md", "insert_line": 0, "insert_text": "x"},
        {"command": "delete", "path": "/memories/MEMORY.md"},
        {"command": "create", "path": f"/memories/crystals/{crystal_id}.md", "file_text": "x"},
        {"command": "delete", "path": "/memories/notes"},
    ):
        with pytest.raises(ToolError):
            tool.call(command)
    assert ws.memory_md.read_text(encoding="utf-8") == STATE
    assert "Lyon" in tool.call({"command": "view", "path": f"/memories/crystals/{crystal_id}.md"})
    tool.call({"command": "delete", "path": f"/memories/crystals/{crystal_id}.md"})
    assert ws.store.forgetting.tombstone_count() == 1


def test_the_backend_works_on_a_postgresql_workspace(tmp_path, now, pg_database):
    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}) as ws:
        tool = DreamerMemoryTool(ws, clock=lambda: now)
        tool.call({"command": "create", "path": "/memories/notes/a.md", "file_text": NOTE})
        assert NOTE in tool.call({"command": "view", "path": "/memories/notes/a.md"})
        assert "/memories/notes/a.md" in tool.call({"command": "view", "path": "/memories"})
        tool.call({"command": "delete", "path": "/memories/notes/a.md"})
        assert ws.store.forgetting.tombstone_count() == 1 and ws.search("coffee", now=now) == []


@pytest.mark.parametrize(
    "path",
    ["/memories/notes/a\\b.md", "/memories/notes/a\x00.md", "/memories/notes/a\ud800.md"],
)
def test_a_backslash_a_nul_or_a_lone_surrogate_in_a_path_is_refused(ws, now, path):
    tool = DreamerMemoryTool(ws, clock=lambda: now)
    for command in (
        {"command": "create", "path": path, "file_text": "Mira likes whales."},
        {"command": "view", "path": path},
    ):
        with pytest.raises(ToolError, match="cannot hold"):
            tool.call(command)
    assert ws.store.crystals.crystal_count() == 0
    assert ws.store.records.get_meta(FILES_KEY) is None
