"""Reading an OpenCode session's messages: each finished turn once, words and answers only.

tests/opencode_messages.json is what dreamer's plugin handed over from the real OpenCode 1.18.33
(against tests/fake_anthropic.py): a turn that reads a file through a tool (one assistant
message per step), then ``opencode run --session`` and a second turn. The plugin has already
left the tool's output out.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

from dreamer import Workspace
from dreamer.agents import hooks, opencode
from dreamer.agents.ingest import ingest_session

MESSAGES = json.loads((Path(__file__).resolve().parents[1] / "opencode_messages.json").read_text())
SESSION = "ses_dd9de6773ffeztr3nsxsu2BXPT"
FIRST = (
    'User: What does notes.txt say?\nAssistant: [tool: read "/tmp/agx/orec/proj/notes.txt"]\n'
    "The notes say the release is on Friday."
)
SECOND = "User: Thanks. My cat is called Miso.\nAssistant: Noted: your cat is called Miso."


def test_the_recorded_session_gives_each_turn_once():
    exchanges, cursor = opencode.read_messages(MESSAGES)
    assert [x.text() for x in exchanges] == [FIRST, SECOND]
    assert exchanges[0].session_id == SESSION and exchanges[0].uuid == MESSAGES[0]["info"]["id"]
    assert exchanges[0].cwd == "/tmp/agx/orec/proj"
    assert opencode.read_messages(MESSAGES, cursor)[0] == []  # handed over again: nothing new


def test_a_turn_still_running_waits_until_its_answer_is_complete():
    running = copy.deepcopy(MESSAGES[:2])  # the first prompt, and a step that called a tool
    assert running[1]["info"]["finish"] == "tool-calls"
    exchanges, cursor = opencode.read_messages(running)
    assert exchanges == [] and cursor.last_uuid is None
    exchanges, cursor = opencode.read_messages(MESSAGES[:3], cursor)
    assert [x.text() for x in exchanges] == [FIRST]
    exchanges, _ = opencode.read_messages(list(reversed(MESSAGES)), cursor)  # any order
    assert [x.text() for x in exchanges] == [SECOND]


def test_opencodes_own_text_summaries_and_failed_tools():
    messages = copy.deepcopy(MESSAGES[:3])
    messages[0]["parts"].append({"type": "text", "text": "<file contents>", "synthetic": True})
    messages[1]["parts"][1]["state"]["status"] = "error"
    summary = copy.deepcopy(messages[2])
    summary["info"].update(id="msg_zz_summary", summary=True)
    summary["parts"][1]["text"] = "A summary of everything so far."
    exchanges, _ = opencode.read_messages([*messages, summary])
    assert [x.text() for x in exchanges] == [
        'User: What does notes.txt say?\nAssistant: [tool: read "/tmp/agx/orec/proj/notes.txt"]'
        " failed\nThe notes say the release is on Friday."
    ]
    assert opencode.read_messages({"not": "a list"})[0] == []


def test_ingest_session_stores_each_turn_once(tmp_path, now):
    with Workspace.open(tmp_path / "ws") as ws:
        read = lambda cursor: opencode.read_messages(MESSAGES, cursor)  # noqa: E731
        first = ingest_session(ws, "opencode", SESSION, read, now)
        again = ingest_session(ws, "opencode", SESSION, read, now)
        crystals = ws.store.crystals.select()
    assert (first.created, again.created) == (2, 0)
    assert sorted(c.text for c in crystals) == sorted([FIRST, SECOND])
    assert {c.source for c in crystals} == {"sessions"}
    assert all(c.origin.startswith(f"opencode:{SESSION}:msg_") for c in crystals)


def test_the_session_idle_hook_stores_what_the_plugin_hands_over(tmp_path, now):
    payload = {"session_id": SESSION, "cwd": str(tmp_path), "messages": MESSAGES[:3]}
    env = {"DREAM_WORKSPACE": str(tmp_path / "ws")}
    code = hooks.run(
        "session-idle", io.StringIO(json.dumps(payload)), io.StringIO(), now, env, background=True
    )
    assert code == 0
    with Workspace.open(tmp_path / "ws", create=False) as ws:
        texts = [c.text for c in ws.store.crystals.select()]
        log = (tmp_path / "ws" / "memory" / "hooks.log").read_text()
    assert texts == [FIRST]
    assert f"stored 1 new crystals of opencode session {SESSION}" in log
