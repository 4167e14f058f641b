"""`dream ingest` of a real-shaped Claude Code project folder: what lands, and only once."""

from __future__ import annotations

import os
import time

import pytest
from claude_code_fixture import build_project

from dreamer.agents.ingest import ingest
from dreamer.cli import main


@pytest.fixture
def project(tmp_path):
    built = build_project(tmp_path / "projects")
    settled = time.time() - 3600  # an old session: its last turn is over
    for path in built["folder"].rglob("*"):
        os.utime(path, (settled, settled))
    return built


def texts(ws) -> list[str]:
    return [crystal.text for crystal in ws.store.crystals.select()]


def test_the_project_folder_ingests_cleanly(tmp_path, runner, project):
    ws = tmp_path / "ws"
    result = runner.invoke(
        main, ["ingest", str(project["folder"]), "-w", str(ws)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    from dreamer import Workspace

    with Workspace.open(ws) as opened:
        stored = texts(opened)
        origins = [crystal.origin for crystal in opened.store.crystals.select()]
        sources = {crystal.source for crystal in opened.store.crystals.select()}
    everything = "\n".join(stored)
    for phrase in (expected["phrase"] for expected in project["expected"]):
        assert phrase in everything, phrase
    for bad in project["forbidden"]:
        assert bad not in everything, bad  # markup, API errors, compaction, dumps, thinking
    assert sources == {"sessions"}
    assert all(origin.startswith("claude-code:") for origin in origins)
    # The session, the exchange, the branch and the folder it happened in are kept.
    assert any(origin.endswith(f"@{project['branch']} in {project['cwd']}") for origin in origins)
    # A delegated prompt is not the user speaking: the main agent's task, the subagent's answer.
    with Workspace.open(ws) as opened:
        said = {c.speaker for c in opened.store.crystals.select()}
    assert {"user", "assistant", "subagent"} <= said


def test_a_growing_session_stores_each_exchange_exactly_once(ws, now, project):
    path = project["main"]
    lines = path.read_bytes().splitlines(keepends=True)
    growing = path.parent / "growing.jsonl"
    for count in (8, 10, 14, 24, len(lines)):
        growing.write_bytes(b"".join(lines[:count]))
        ingest(ws, [growing], now, live=True)  # as a hook does, turn after turn
    # Once more, after the session settled: the last turn comes in, nothing twice.
    settled = now.timestamp() - 3600
    os.utime(growing, (settled, settled))
    ingest(ws, [growing], now, live=True)
    stored = texts(ws)
    assert len(stored) == len(set(stored))
    firsts = [text.split("\n", 1)[0] for text in stored]
    assert len(firsts) == len(set(firsts))  # no exchange stored in two versions
    whole = type(ws).open(ws.root.parent / "whole")
    ingest(whole, [path], now)
    assert sorted(texts(whole)) == sorted(stored)  # the same as reading it in one go
    whole.close()


@pytest.mark.slow
def test_two_ingests_of_one_session_take_turns(tmp_path, project):
    """A hook and a catch-up must not read the same cursor at once: the second one waits."""
    import subprocess
    import sys

    from dreamer import Workspace
    from dreamer.support.locks import hold

    root = tmp_path / "ws"
    Workspace.open(root).close()
    command = [sys.executable, "-m", "dreamer.cli", "ingest", "--live", str(project["main"])]
    with hold(root / "memory" / "ingest.lock"):
        waiting = subprocess.Popen(
            [*command, "-w", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        time.sleep(1.5)
        assert waiting.poll() is None  # still waiting for the lock
        with Workspace.open(root) as ws:
            assert texts(ws) == []
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    with Workspace.open(root) as ws:
        assert any("flaky retry test" in text for text in texts(ws))
