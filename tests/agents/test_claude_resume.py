"""A resumed Claude Code conversation carries dreamer's memory block once, not once per start."""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest
from claude_cli import cli_path, isolate
from fake_anthropic import FakeAnthropic
from mcp_session import dream_command

from dreamer import Workspace
from dreamer.agents import claude_settings as cs
from dreamer.agents import hooks
from dreamer.agents.bootstrap import bootstrap_block


def test_the_mark_is_in_every_bootstrap_block(tmp_path):
    with Workspace.open(tmp_path / "ws") as ws:
        assert hooks.LOADED_MARK in bootstrap_block(ws, context_window=8_000)


def test_sessionstart_matches_every_source_including_fork():
    settings = cs.with_hooks({}, "dream")
    (entry,) = settings["hooks"]["SessionStart"]
    assert "matcher" not in entry  # no matcher: startup, resume, clear, compact and fork


@pytest.mark.cli
def test_claude_resume_carries_the_memory_block_once(tmp_path, monkeypatch):
    claude = cli_path()
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        ws.memory_md.write_text("# Working Memory State\n\n## The Bond\n- Bob likes tea.\n")
    home = isolate(monkeypatch, tmp_path / "home", None)
    settings = cs.with_hooks({}, dream_command(), root)
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    project = tmp_path / "project"
    project.mkdir()
    fake = FakeAnthropic()
    for _ in range(12):
        fake.text("Noted.")
    session = str(uuid.uuid4())
    with fake.serve() as base_url:
        isolate(monkeypatch, home, base_url)
        for args in (["--session-id", session], ["--resume", session]):
            prompt = f"prompt {len(fake.requests)}"
            before = len(fake.requests)
            done = subprocess.run(
                [claude, "-p", prompt, *args],
                cwd=project,
                capture_output=True,
                text=True,
                timeout=180,
            )
            assert done.returncode == 0, done.stderr
            (asked, *_) = [r.json for r in fake.requests[before:] if prompt in r.text()]
            body = json.dumps(asked)
            assert body.count("Bob likes tea") == 1, args
            assert body.count(hooks.LOADED_MARK) == 1, args
            with Workspace.open(root) as ws:  # the block changes before the resume
                ws.note("Bob's kiln keys are in the blue drawer")
    assert "loaded earlier in this conversation" in body  # the resume's own short line


def test_this_machines_hooks_are_exec_form_and_old_shell_lines_still_ours(tmp_path):
    dream = str(tmp_path / "a folder with 'quotes'" / "bin" / "dream")
    settings = cs.with_hooks({}, dream, tmp_path / "ws")
    (entry,) = settings["hooks"]["SessionEnd"]
    (hook,) = entry["hooks"]
    assert hook["command"] == dream  # no shell: the path needs no quoting
    assert hook["args"] == ["hook", "session-end", "-w", str(tmp_path / "ws")]
    old = {"type": "command", "command": "/usr/local/bin/dream hook session-end"}
    mixed = {"hooks": {"SessionEnd": [{"hooks": [old]}, *settings["hooks"]["SessionEnd"]]}}
    assert cs.without_hooks(mixed) == {}  # an install before exec form is replaced too
    assert not cs.is_ours({"type": "command", "command": "/bin/dreamy", "args": ["hook"]})
