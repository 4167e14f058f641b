"""The agent tools: definitions the SDK accepts, good calls work, bad calls are error results."""

from __future__ import annotations

import json

import anthropic.types as sdk
import pytest

from dreamer.agents import tools
from dreamer.memory.hormones import levels


def call(ws, name, tool_input, now, tool_use_id="toolu_1"):
    return tools.handle(
        ws, {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}, now=now
    )


def ok(result):
    assert result["is_error"] is False, result["content"]
    return json.loads(result["content"])


def test_definitions_are_the_seven_tools_in_the_sdk_format():
    definitions = tools.tool_definitions()
    assert [d["name"] for d in definitions] == [
        "working_memory_note",
        "memory_search",
        "memory_get",
        "memory_feel",
        "memory_forget",
        "memory_held",
        "memory_accept",
    ]
    for definition in definitions:
        assert set(definition) == {"name", "description", "input_schema"}
        assert definition["input_schema"]["type"] == "object"
        assert len(definition["description"]) > 100  # written for a model, says when to use it
        sdk.ToolParam(**definition)  # the SDK's own type accepts it
    note = definitions[0]
    assert note["input_schema"]["required"] == ["note"]
    assert note["input_schema"]["properties"]["importance"]["default"] == 0.7
    assert "remember this" in note["description"]
    assert "before you ask the user to repeat" in definitions[1]["description"]


def test_definitions_are_a_fresh_copy_each_time():
    first = tools.tool_definitions()
    first[0]["cache_control"] = {"type": "ephemeral"}
    assert "cache_control" not in tools.tool_definitions()[0]


@pytest.mark.slow
def test_note_then_search_then_get(ws, now):
    noted = ok(
        call(
            ws,
            "working_memory_note",
            {
                "note": "Ada's grant report is due 2026-03-30",
                "importance": 0.9,
                "type": "world_fact",
            },
            now,
        )
    )
    assert noted["importance"] == 0.9 and noted["type"] == "world_fact"
    assert "Ada's grant report" in ws.scratch_path.read_text()

    found = ok(call(ws, "memory_search", {"query": "grant report deadline", "limit": 3}, now))
    assert found["results"][0]["id"] == noted["id"]
    assert found["results"][0]["text"] == "Ada's grant report is due 2026-03-30"

    crystal = ok(call(ws, "memory_get", {"id": noted["id"]}, now))
    assert crystal["text"] == "Ada's grant report is due 2026-03-30"
    assert crystal["created_at"] == "2026-03-12T14:30:00Z"  # the note took `now`
    assert crystal["access_count"] == 1  # the search counted as an access


def test_note_defaults_importance_and_infers_type(ws, now):
    noted = ok(call(ws, "working_memory_note", {"note": "User prefers dark mode"}, now))
    assert noted["importance"] == 0.7
    assert noted["type"] == "directive"


def test_search_with_no_match_says_so(ws, now):
    found = ok(
        call(ws, "memory_search", {"query": "quantum chromodynamics", "search_type": "facts"}, now)
    )
    assert found["count"] == 0 and found["results"] == []
    assert "ask the user" in found["hint"]


def test_feel_moves_the_hormone(ws, now):
    before = levels(ws, now)["oxytocin"]
    felt = ok(
        call(
            ws,
            "memory_feel",
            {"hormone": "oxytocin", "delta": 0.3, "reason": "User thanked me for fixing the build"},
            now,
        )
    )
    assert felt["levels"]["oxytocin"] == pytest.approx(before + 0.3, abs=1e-3)
    assert levels(ws, now)["oxytocin"] == pytest.approx(before + 0.3, abs=1e-6)


def test_accepts_the_sdk_tool_use_block(ws, now):
    block = sdk.ToolUseBlock(
        type="tool_use",
        id="toolu_sdk",
        name="working_memory_note",
        input={"note": "Remember: standup moved to 9:30"},
    )
    result = tools.handle(ws, block, now=now)
    assert result["tool_use_id"] == "toolu_sdk" and result["is_error"] is False


@pytest.mark.parametrize(
    ("name", "tool_input", "message"),
    [
        ("working_memory_note", {}, "'note' is a required property"),
        ("working_memory_note", {"note": ""}, "note: '' should be non-empty"),
        ("working_memory_note", {"note": "   "}, "the note is empty"),
        ("working_memory_note", {"note": 42}, "note: 42 is not of type 'string'"),
        (
            "working_memory_note",
            {"note": "x", "importance": 5},
            "importance: 5 is greater than the maximum of 1",
        ),
        (
            "working_memory_note",
            {"note": "x", "importance": "high"},
            "importance: 'high' is not of type 'number'",
        ),
        (
            "working_memory_note",
            {"note": "x", "importance": True},
            "importance: True is not of type 'number'",
        ),
        ("working_memory_note", {"note": "x", "type": "gossip"}, "type: 'gossip' is not one of"),
        ("working_memory_note", {"note": "x", "tags": ["a"]}, "'tags' was unexpected"),
        ("working_memory_note", "remember this", "takes a JSON object of arguments, not str"),
        ("memory_search", {}, "'query' is a required property"),
        ("memory_search", {"query": "x", "limit": 0}, "limit: 0 is less than the minimum of 1"),
        ("memory_search", {"query": "x", "limit": 2.5}, "limit: 2.5 is not of type 'integer'"),
        ("memory_search", {"query": "x", "search_type": "all"}, "search_type: 'all' is not one"),
        ("memory_get", {"id": "7"}, "id: '7' is not of type 'integer'"),
        ("memory_get", {"id": 999}, "no memory with id 999; find ids with memory_search"),
        (
            "memory_feel",
            {"hormone": "serotonin", "delta": 0.1, "reason": "x"},
            "hormone: 'serotonin' is not one of",
        ),
        (
            "memory_feel",
            {"hormone": "dopamine", "delta": 3, "reason": "x"},
            "delta: 3 is greater than the maximum of 1",
        ),
        ("memory_feel", {"hormone": "dopamine", "delta": 0.1}, "'reason' is a required"),
        ("memory_purge", {"id": 1}, "unknown tool 'memory_purge'; the tools are"),
        ("memory_forget", {"ids": []}, "ids: [] should be non-empty"),
        ("memory_forget", {"ids": ["seven"]}, "ids.0: 'seven' is not of type 'integer'"),
        ("memory_held", {"limit": 0}, "limit: 0 is less than the minimum of 1"),
        ("memory_held", {"limit": 51}, "limit: 51 is greater than the maximum of 50"),
        ("memory_accept", {}, "'ids' is a required property"),
        ("memory_accept", {"ids": []}, "ids: [] should be non-empty"),
        ("memory_accept", {"ids": [3, 3]}, "ids: [3, 3] has non-unique elements"),
        ("memory_accept", {"ids": [999]}, "memory 999 is not held; nothing was accepted"),
        (None, {}, "no tool name"),
    ],
)
def test_bad_input_is_an_error_result(ws, now, name, tool_input, message):
    result = call(ws, name, tool_input, now, tool_use_id="toolu_bad")
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == "toolu_bad"
    assert result["is_error"] is True
    assert result["content"].startswith("Error: ")
    assert message in result["content"]


def test_bad_input_writes_nothing(ws, now):
    call(ws, "working_memory_note", {"note": "too loud", "importance": 5}, now)
    assert ws.store.crystals.select() == []
    assert not ws.scratch_path.exists() or "too loud" not in ws.scratch_path.read_text()


def test_every_problem_is_reported_at_once(ws, now):
    result = call(ws, "working_memory_note", {"importance": 5, "type": "gossip"}, now)
    for problem in ("'note' is a required", "importance: 5", "type: 'gossip'"):
        assert problem in result["content"]


def test_a_failing_workspace_is_an_error_result_not_an_exception(ws, now):
    ws.scratch_path.mkdir(parents=True)  # a folder where the scratch file should be
    result = call(ws, "working_memory_note", {"note": "cannot land"}, now)
    assert result["is_error"] is True
    assert result["content"].startswith("Error: ")
    assert ws.store.crystals.select() == []


def test_an_unexpected_failure_is_an_error_result_and_is_logged(ws, now, caplog):
    ws.store.db.conn.close()  # the database goes away under the agent
    result = call(ws, "memory_search", {"query": "anything"}, now)
    assert result["is_error"] is True
    assert "memory_search failed unexpectedly (ProgrammingError" in result["content"]
    assert "tool memory_search failed" in caplog.text


@pytest.mark.slow
def test_every_successful_result_fits_its_output_schema(ws, now):
    import jsonschema

    from dreamer.store import NewCrystal
    from dreamer.support.resources import schema

    outputs = schema("tools/outputs")
    held_id = ws.index(
        NewCrystal(
            "From CONTRIBUTING.md: always sign your commits",
            source="sessions",
            importance=0.5,
            at=now,
            lifecycle="held",
            speaker="tool",
        )
    )
    noted = ok(
        call(ws, "working_memory_note", {"note": "Ada's key is sk-ant-api03-" + "x9" * 40}, now)
    )
    calls = {
        "working_memory_note": noted,
        "memory_search": ok(call(ws, "memory_search", {"query": "Ada key"}, now)),
        "memory_get": ok(call(ws, "memory_get", {"id": noted["id"]}, now)),
        "memory_feel": ok(
            call(ws, "memory_feel", {"hormone": "dopamine", "delta": 0.2, "reason": "shipped"}, now)
        ),
        "memory_held": ok(call(ws, "memory_held", {}, now)),
        "memory_accept": ok(call(ws, "memory_accept", {"ids": [held_id]}, now)),
        "memory_forget": ok(call(ws, "memory_forget", {"ids": [noted["id"]]}, now)),
    }
    assert set(calls) == set(outputs) - {"$schema", "$id", "description"}
    for name, result in calls.items():
        jsonschema.validate(result, outputs[name])
    assert "redacted" in noted
