"""`dream hook EVENT`: Claude Code's hook JSON in, memory out, never a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from claude_code_fixture import build_project

from dreamer import Workspace

DREAM = [sys.executable, "-m", "dreamer.cli"]


def hook(event: str, payload: dict | str, env: dict) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [*DREAM, "hook", event], input=data, capture_output=True, text=True, env=env, timeout=60
    )


def test_session_start_prints_the_memory_within_limits(tmp_path, now):
    ws_root = tmp_path / "ws"
    with Workspace.open(ws_root) as ws:
        for i in range(400):  # far more than 10,000 characters of pending notes
            ws.note(f"Routine note {i}: reviewed pull request {i} for the billing service", at=now)
        ws.note("Ada prefers short answers with the code first", at=now)  # the newest
    env = {**os.environ, "DREAM_WORKSPACE": str(ws_root)}
    payload = {
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(tmp_path),
        "session_id": "s1",
        "transcript_path": str(tmp_path / "none.jsonl"),
        "model": "claude-sonnet-5-5",
    }
    started = time.monotonic()
    result = hook("session-start", payload, env)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    context = out["additionalContext"]
    assert "Ada prefers short answers" in context and len(context) < 10_000
    assert elapsed < 2.0 + 3.0  # the issue asks 2 s; slack for a loaded CI machine
    compact = hook("session-start", {**payload, "source": "compact"}, env)
    assert "memory_search" in json.loads(compact.stdout)["hookSpecificOutput"]["additionalContext"]


def test_bad_input_exits_0_and_is_logged_and_reads_never_create(tmp_path):
    ws_root = tmp_path / "ws"
    Workspace.open(ws_root).close()
    env = {**os.environ, "DREAM_WORKSPACE": str(ws_root)}
    broken = hook("session-start", "{not json", env)
    assert broken.returncode == 0 and broken.stdout == ""
    assert "JSONDecodeError" in (ws_root / "memory" / "hooks.log").read_text()
    nowhere = tmp_path / "never-made"
    quiet = hook("session-start", {"cwd": str(tmp_path)}, {**env, "DREAM_WORKSPACE": str(nowhere)})
    assert quiet.returncode == 0 and quiet.stdout == "" and not nowhere.exists()


def test_pre_compact_and_session_end_store_the_transcript_once(tmp_path):
    project = build_project(tmp_path / "projects")
    ws_root = tmp_path / "ws"
    env = {**os.environ, "DREAM_WORKSPACE": str(ws_root)}
    payload = {"cwd": str(tmp_path), "session_id": "x", "transcript_path": str(project["main"])}
    assert hook("pre-compact", {**payload, "trigger": "auto"}, env).returncode == 0
    assert hook("session-end", {**payload, "reason": "exit"}, env).returncode == 0
    with Workspace.open(ws_root) as ws:
        texts = [crystal.text for crystal in ws.store.crystals(sources=["sessions"])]
    assert texts and len(texts) == len(set(texts))
    assert any("flaky retry test" in text for text in texts)
