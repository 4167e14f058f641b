"""Session captures: an exchange ingested from a transcript enters MEMORY.md only as what it
established, never as raw dialogue or tool markers."""

from __future__ import annotations

import os
import re
import time
from datetime import timedelta

from claude_code_fixture import build_project
from dreams import offline_dream

from dreamer.agents.ingest import ingest
from dreamer.dream.rules.session_exchanges import established


def test_an_ingested_claude_code_session_leaves_no_dialogue_or_tool_marker(ws, tmp_path, now):
    project = build_project(tmp_path / "projects")
    settled = time.time() - 3600  # an old session: its last turn is over
    for path in project["folder"].rglob("*"):
        os.utime(path, (settled, settled))
    ingest(ws, [project["folder"]], now)
    captured = [c.text for c in ws.store.crystals.select(sources=["sessions"])]
    assert captured and not any("[tool:" in text for text in captured)  # kept as outcomes
    offline_dream(ws, now + timedelta(hours=1))
    memory = ws.memory_md.read_text(encoding="utf-8")
    assert not re.search(r"(?m)\b(User|Assistant|Subagent \w+):", memory), memory
    assert "[tool:" not in memory


def test_an_exchange_becomes_what_it_established():
    text = (
        "User: the retry test is flaky on CI, can you make the backoff deterministic?\n"
        'Assistant: Looking at it.\n[tool: Read "src/retry.py"]\n[tool: Edit "src/retry.py"]\n'
        "Fixed: the backoff now takes a seeded jitter, and the retry test passes 50 runs in a row."
    )
    line = established(text)
    assert line is not None
    assert "[tool:" not in line and "User:" not in line and "Assistant:" not in line
    assert "seeded jitter" in line


def test_an_exchange_that_established_nothing_stays_out():
    assert established("User: hi\nAssistant: Hello! How can I help?") is None


def test_ordinary_notes_are_not_captures():
    assert established("The billing deadline is March 27.") == "The billing deadline is March 27."
