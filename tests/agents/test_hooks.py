"""`dream hook EVENT`: Claude Code's hook JSON in, memory out, never a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from claude_code_fixture import build_project
from import_probe import modules_loaded

from dreamer import Workspace

pytestmark = pytest.mark.slow

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
    result = hook("session-start", payload, env)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    context = out["additionalContext"]
    assert "Ada prefers short answers" in context and len(context) < 10_000
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
        texts = [crystal.text for crystal in ws.store.crystals.select(sources=["sessions"])]
    assert texts and len(texts) == len(set(texts))
    assert any("flaky retry test" in text for text in texts)


def wait_for(check, timeout: float = 60.0):
    """Poll check() until it returns something truthy (the detached half of a hook)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("the background work did not finish in time")


def session_texts(root, speaker: str | None = None) -> list[str]:
    """The texts of the captured crystals (only those ``speaker`` said, when given)."""
    if not (root / "memory" / "crystals.db").exists():
        return []
    with Workspace.open(root, create=False) as ws:
        return [
            crystal.text
            for crystal in ws.store.crystals.select(sources=["sessions"])
            if speaker is None or crystal.speaker == speaker
        ]


def test_session_end_answers_at_once_and_stores_the_session_in_the_background(tmp_path):
    # Claude Code kills a SessionEnd hook after about 1.5 s: the work must not be in it.
    project = build_project(tmp_path / "projects")
    ws_root = tmp_path / "ws"
    env = {**os.environ, "DREAM_WORKSPACE": str(ws_root)}
    payload = {
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
        "cwd": str(tmp_path),
        "session_id": project["session_id"],
        "transcript_path": str(project["main"]),
    }
    done = hook("session-end", payload, env)
    assert done.returncode == 0 and done.stdout == ""
    stored = wait_for(lambda: [t for t in session_texts(ws_root) if "flaky retry test" in t])
    assert stored
    # Taken whole at the end: a second SessionEnd (or a later catch-up) adds nothing.
    before = sorted(session_texts(ws_root))
    assert hook("session-end", payload, env).returncode == 0
    log = ws_root / "memory" / "hooks.log"
    wait_for(lambda: log.read_text().count("session-end: stored") == 2)  # the second is done
    assert "session-end: stored 0 new crystals" in log.read_text()
    assert sorted(session_texts(ws_root)) == before and len(before) == len(set(before))
    # The hook itself loads neither ingest nor numpy: the storing is another process's.
    modules = modules_loaded("hook", "session-end", "-w", str(ws_root), stdin=json.dumps(payload))
    assert "dreamer.agents.hooks" in modules
    assert [m for m in ("dreamer.agents.ingest", "numpy") if m in modules] == []


def test_session_start_catches_up_on_the_projects_other_sessions(tmp_path):
    project = build_project(tmp_path / "projects")
    ws_root = tmp_path / "ws"
    Workspace.open(ws_root).close()
    env = {**os.environ, "DREAM_WORKSPACE": str(ws_root)}
    fresh = project["folder"] / "0a0a0a0a-new-session.jsonl"  # not written yet at startup
    an_hour_ago = time.time() - 3600  # the project's other sessions ended earlier
    for old in project["folder"].rglob("*.jsonl"):
        os.utime(old, (an_hour_ago, an_hour_ago))
    payload = {
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(tmp_path),
        "session_id": "0a0a0a0a-new-session",
        "transcript_path": str(fresh),
        "model": "claude-opus-4-1",
    }
    assert hook("session-start", payload, env).returncode == 0
    texts = wait_for(lambda: session_texts(ws_root, speaker="subagent"))
    assert texts  # the subagent's transcript came in with the main session's
    wait_for(lambda: any("flaky retry test" in t for t in session_texts(ws_root)))


def test_a_hook_past_its_budget_gives_up_logs_and_exits_0(tmp_path):
    project = build_project(tmp_path / "projects")
    ws_root = tmp_path / "ws"
    Workspace.open(ws_root).close()
    env = {**os.environ, "DREAM_WORKSPACE": str(ws_root)}
    payload = {"cwd": str(tmp_path), "session_id": "x", "transcript_path": str(project["main"])}
    data = json.dumps(payload)
    result = subprocess.run(
        [*DREAM, "hook", "pre-compact", "--budget", "0.1"],
        input=data,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0 and result.stdout == ""
    assert "gave up after 0.1 s" in (ws_root / "memory" / "hooks.log").read_text()


def test_user_prompt_submit_recalls_only_when_asked(tmp_path, now):
    ws_root = tmp_path / "ws"
    with Workspace.open(ws_root) as ws:
        ws.note("Ada's grant report is due on March 30", importance=0.9, at=now)
        for i in range(5):
            ws.note(f"Unrelated note {i} about the office plants", at=now)
    env = {**os.environ, "DREAM_WORKSPACE": str(ws_root)}
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(tmp_path),
        "session_id": "s",
        "prompt": "when is the grant report due?",
    }
    assert hook("user-prompt-submit", payload, env).stdout == ""  # off by default
    for args, extra in ((["--recall"], {}), ([], {"DREAM_HOOK_RECALL": "1"})):
        result = subprocess.run(
            [*DREAM, "hook", "user-prompt-submit", *args],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env={**env, **extra},
            timeout=60,
        )
        context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "grant report is due on March 30" in context
        assert context.count("\n- #") <= 3 and "office plants" not in context


def test_session_start_catches_up_only_in_a_folder_of_sessions(tmp_path, monkeypatch):
    from dreamer.agents import hooks

    project = build_project(tmp_path / "projects")
    folder = project["main"].parent
    # A new session's transcript is written later: its folder's other sessions are caught up.
    fresh = {"transcript_path": str(folder / "new-session.jsonl")}
    assert hooks._project_folders(fresh) == [str(folder)]
    # A transcript path that leads nowhere names no project: never '/', '.' or a plain folder.
    monkeypatch.chdir("/")
    for missing in ("/missing.jsonl", "missing.jsonl", str(tmp_path / "missing.jsonl")):
        assert hooks._project_folders({"transcript_path": missing}) == [], missing
