"""memory/hooks.log stays quiet, timestamped and bounded."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from claude_code_fixture import build_project
from test_hooks import hook, wait_for

from dreamer import Workspace
from dreamer.agents import hook_log

LINE = re.compile(r"^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] [a-z-]+: ")


@pytest.mark.slow
def test_a_first_session_then_a_catch_up_log_one_line_and_no_error(tmp_path):
    ws_root = tmp_path / "ws"
    Workspace.open(ws_root).close()
    env = {**os.environ, "DREAM_WORKSPACE": str(ws_root)}
    projects = tmp_path / "projects"
    start = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(tmp_path)}
    # A new project's first session: Claude Code has not made its folder yet.
    first = projects / "-home-ada-new" / "s0.jsonl"
    assert hook("session-start", {**start, "transcript_path": str(first)}, env).returncode == 0
    # A project with transcripts (two sessions and a subagent): the catch-up logs one line.
    project = build_project(projects)
    later = {**start, "transcript_path": str(project["folder"] / "s9.jsonl")}
    assert hook("session-start", later, env).returncode == 0
    log = hook_log.path(ws_root)
    wait_for(lambda: log.exists() and "Ingested" in log.read_text())
    lines = log.read_text().splitlines()
    assert len(lines) == 1, lines
    assert LINE.match(lines[0]) and "session-start: Ingested 3 of 3 files" in lines[0]
    assert "Error" not in log.read_text()


def test_a_failed_job_logs_its_error_with_time_and_event(tmp_path):
    ws_root = tmp_path / "ws"
    Workspace.open(ws_root).close()
    missing = tmp_path / "gone.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "dreamer.agents.hook_log", "session-end", str(ws_root)]
        + ["ingest", str(missing), "-w", str(ws_root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == ""
    lines = hook_log.path(ws_root).read_text().splitlines()
    assert lines and all(LINE.match(line) for line in lines)
    assert any("session-end: Error:" in line and "gone.jsonl" in line for line in lines)


def test_the_log_is_bounded(tmp_path):
    ws_root = tmp_path / "ws"
    Workspace.open(ws_root).close()
    now = datetime(2026, 11, 25, 15, 40, tzinfo=UTC)
    entry = "x" * 1000
    for _ in range(3 * hook_log.MAX_BYTES // 1000):
        hook_log.write(ws_root, "session-start", entry, now)
    log = hook_log.path(ws_root)
    older = log.with_name("hooks.log.1")
    assert log.stat().st_size <= hook_log.MAX_BYTES + 2000
    assert older.stat().st_size <= hook_log.MAX_BYTES + 2000
    assert sorted(p.name for p in log.parent.glob("hooks.log*")) == ["hooks.log", "hooks.log.1"]
    assert log.read_text().splitlines()[-1] == f"[2026-11-25T15:40:00Z] session-start: {entry}"


@pytest.mark.slow
def test_session_end_stores_the_sessions_subagents_once_linked_to_it(tmp_path):
    from claude_code_fixture import SESSION

    project = build_project(tmp_path / "projects")
    ws_root = tmp_path / "ws"
    Workspace.open(ws_root).close()
    env = {**os.environ, "DREAM_WORKSPACE": str(ws_root)}
    payload = {
        "hook_event_name": "SessionEnd",
        "cwd": str(tmp_path),
        "session_id": SESSION,
        "transcript_path": str(project["main"]),
    }

    def subagent_crystals() -> list[tuple[str, str | None]]:
        with Workspace.open(ws_root, create=False) as ws:
            found = ws.store.crystals.select(sources=["sessions"])
        return [(c.text, c.origin) for c in found if c.speaker == "subagent"]

    log = hook_log.path(ws_root)
    for run in (1, 2):  # the second SessionEnd (or a catch-up) adds nothing
        assert hook("session-end", payload, env).returncode == 0
        wait_for(lambda run=run: log.exists() and log.read_text().count("stored") == run)
    stored = subagent_crystals()
    assert stored
    assert all(origin and origin.startswith(f"claude-code:{SESSION}:") for _, origin in stored)
    assert len({text for text, _ in stored}) == len(stored)
    assert "session-end: stored 0 new crystals" in log.read_text()
