"""The minimal agent loop of the README, run as written through the real anthropic SDK.

The Messages API is the scripted fake of tests/fake_anthropic.py (an httpx transport), which
answers with tool_use blocks the way Claude would and records every request the SDK sends.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic

from dreamer.agents import tools

DOCS = Path(__file__).resolve().parents[2] / "README.md"
NOTE = "Ada's grant report is due 2026-03-30; she wants a draft by the 25th"


@pytest.fixture(scope="module")
def docs_loop() -> dict:
    """The namespace the docs' agent-loop code block defines (executed, not imported)."""
    text = DOCS.read_text(encoding="utf-8")
    block = re.search(r"<!-- agent-loop -->\s*```python\n(.*?)```", text, re.S)
    assert block, "README.md lost its agent-loop block"
    namespace: dict = {"__name__": "agent"}  # not __main__: main() would wait for input
    exec(compile(block.group(1), f"{DOCS}#agent-loop", "exec"), namespace)
    return namespace


def tool_results(request) -> list[dict]:
    """The tool_result blocks of the last (user) message of a recorded request."""
    last = request.json["messages"][-1]
    assert last["role"] == "user"
    return [block for block in last["content"] if block["type"] == "tool_result"]


@pytest.mark.slow
def test_note_lands_and_search_result_reaches_the_model(docs_loop, ws):
    fake = FakeAnthropic()
    fake.tool_use(
        "working_memory_note", {"note": NOTE, "importance": 0.9}, text="I'll remember that."
    )
    fake.tool_use("memory_search", {"query": "grant report deadline", "limit": 3})
    fake.text("Noted: the grant report is due March 30, draft by the 25th.")
    messages: list = []

    answer = docs_loop["run_agent_turn"](
        fake.client(), ws, messages, "Remember: my grant report is due March 30."
    )

    assert answer == "Noted: the grant report is due March 30, draft by the 25th."
    fake.assert_all_used()
    first, second, third = fake.requests
    # The model was offered the tools and the bootstrap block.
    assert first.json["tools"] == tools.tool_definitions()
    assert "# Your Memory" in first.json["system"]
    assert first.json["messages"] == [
        {"role": "user", "content": "Remember: my grant report is due March 30."}
    ]
    # The note landed in the workspace: scratch and crystals.
    crystals = ws.store.crystals.select()
    assert [(c.text, c.importance) for c in crystals] == [(NOTE, 0.9)]
    assert NOTE in ws.scratch_path.read_text(encoding="utf-8")
    # The note's result went back with the id of the tool_use it answers.
    said, asked = second.json["messages"][1]["content"]  # the model's answer, sent back whole
    assert said == {"type": "text", "text": "I'll remember that."}
    tool_use_id = asked["id"]
    (noted,) = tool_results(second)
    assert noted["tool_use_id"] == tool_use_id and noted["is_error"] is False
    assert json.loads(noted["content"])["id"] == crystals[0].id
    # The search result reached the model in the next request.
    (found,) = tool_results(third)
    assert found["is_error"] is False
    hits = json.loads(found["content"])["results"]
    assert hits[0]["id"] == crystals[0].id and hits[0]["text"] == NOTE
    # The conversation is kept whole for the next turn.
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]


def test_bad_tool_input_goes_back_to_the_model_and_the_loop_goes_on(docs_loop, ws):
    fake = FakeAnthropic()
    fake.tool_use("working_memory_note", {"note": NOTE, "importance": 5})
    fake.tool_use("memory_get", {"id": 77})
    fake.tool_use("memory_recall", {"query": "grant"})
    fake.tool_use("working_memory_note", {"note": NOTE, "importance": 0.9})
    fake.text("Saved.")

    answer = docs_loop["run_agent_turn"](fake.client(), ws, [], "My grant report is due soon.")

    assert answer == "Saved."
    errors = [tool_results(request)[0] for request in fake.requests[1:4]]
    assert [e["is_error"] for e in errors] == [True, True, True]
    assert "importance: 5 is greater than the maximum of 1" in errors[0]["content"]
    assert "no memory with id 77" in errors[1]["content"]
    assert "unknown tool 'memory_recall'" in errors[2]["content"]
    assert tool_results(fake.requests[4])[0]["is_error"] is False
    assert [c.text for c in ws.store.crystals.select()] == [NOTE]  # only the good call wrote


def test_the_next_turn_sees_the_note_in_its_bootstrap_block(docs_loop, ws):
    fake = FakeAnthropic()
    fake.tool_use("working_memory_note", {"note": NOTE})
    fake.text("Got it.")
    fake.text("March 30.")
    client, messages = fake.client(), []

    docs_loop["run_agent_turn"](client, ws, messages, "The grant report is due March 30.")
    docs_loop["run_agent_turn"](client, ws, messages, "When is the report due?")

    assert NOTE not in fake.requests[0].json["system"]
    assert NOTE in fake.requests[2].json["system"]  # pending note, before any dream


@pytest.mark.slow
def test_a_model_that_never_stops_calling_tools_is_cut_off(docs_loop, ws):
    fake = FakeAnthropic()
    for _ in range(3):
        fake.tool_use("memory_search", {"query": "grant"})

    with pytest.raises(RuntimeError, match="no answer after 3 rounds"):
        docs_loop["run_agent_turn"](fake.client(), ws, [], "hi", max_rounds=3)
