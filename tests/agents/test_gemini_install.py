"""``dream gemini install|status|uninstall``: the person's settings.json kept, given back whole."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dreamer import Workspace
from dreamer.agents import claude_settings as cs
from dreamer.agents import gemini_settings as gs
from dreamer.cli import main

THEIRS = (  # a person's settings, laid out by hand (4 spaces, their own hook and tool rule)
    '{\n    "model": {"name": "gemini-2.5-pro"},\n'
    '    "tools": {"allowed": ["run_shell_command(git)"]},\n'
    '    "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}'
    "\n}\n"
)


def _home(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    return home, project


def test_user_install_shows_the_diff_is_idempotent_and_uninstall_restores_bytes(
    tmp_path, monkeypatch, runner
):
    home, _ = _home(tmp_path, monkeypatch)
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(THEIRS)
    dry = runner.invoke(main, ["gemini", "install", "--scope", "user", "--dry-run"])
    assert dry.exit_code == 0 and "Would install" in dry.output
    assert '"mcp_dreamer_memory_search"' in dry.output and settings.read_text() == THEIRS
    done = runner.invoke(main, ["gemini", "install", "--scope", "user", "-w", str(tmp_path / "ws")])
    assert done.exit_code == 0, done.output
    data = json.loads(settings.read_text())
    assert cs.hooks_installed(data, gs.HOOK_EVENTS) == ["SessionStart", "AfterAgent", "SessionEnd"]
    assert data["hooks"]["AfterAgent"][0]["hooks"][0]["command"] == "notify-send done"
    assert data["mcpServers"]["dreamer"]["args"] == ["mcp", "-w", str(tmp_path / "ws")]
    assert "mcp_dreamer_memory_forget" not in data["tools"]["allowed"]
    assert "mcp_dreamer_memory_accept" not in data["tools"]["allowed"]
    assert "mcp_dreamer_memory_held" in data["tools"]["allowed"]
    assert data["tools"]["allowed"][0] == "run_shell_command(git)"
    again = runner.invoke(
        main, ["gemini", "install", "--scope", "user", "-w", str(tmp_path / "ws")]
    )
    assert "Already installed (user)." in again.output
    shown = json.loads(runner.invoke(main, ["gemini", "status", "--json"]).output)
    assert shown["scopes"]["user"]["mcp"] is True
    assert runner.invoke(main, ["gemini", "uninstall", "--scope", "user"]).exit_code == 0
    assert settings.read_text() == THEIRS


def test_uninstall_of_a_file_install_made_removes_it(tmp_path, monkeypatch, runner):
    home, _ = _home(tmp_path, monkeypatch)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "elsewhere"))
    assert runner.invoke(main, ["gemini", "install", "--scope", "user"]).exit_code == 0
    settings = tmp_path / "elsewhere" / ".gemini" / "settings.json"
    assert settings.is_file() and not (home / ".gemini").exists()
    assert runner.invoke(main, ["gemini", "uninstall", "--scope", "user"]).exit_code == 0
    assert not settings.exists()


def test_uninstall_after_a_hand_edit_takes_out_dreamers_entries_only(tmp_path, monkeypatch, runner):
    home, _ = _home(tmp_path, monkeypatch)
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(THEIRS)
    runner.invoke(main, ["gemini", "install", "--scope", "user"])
    edited = json.loads(settings.read_text())
    edited["ui"] = {"theme": "GitHub"}  # the person changes a setting after install
    settings.write_text(json.dumps(edited, indent=4) + "\n")
    removed = runner.invoke(main, ["gemini", "uninstall", "--scope", "user"])
    assert removed.exit_code == 0 and "Removed from scope user." in removed.output
    left = json.loads(settings.read_text())
    assert left == {**json.loads(THEIRS), "ui": {"theme": "GitHub"}}


def test_project_install_is_portable(tmp_path, monkeypatch, runner):
    _, project = _home(tmp_path, monkeypatch)
    done = runner.invoke(main, ["gemini", "install"])
    assert done.exit_code == 0, done.output
    written = (project / ".gemini" / "settings.json").read_text()
    assert str(tmp_path) not in written and sys.prefix not in written
    data = json.loads(written)
    assert data["mcpServers"]["dreamer"] == {"command": "dream", "args": ["mcp"]}
    start = data["hooks"]["SessionStart"][0]["hooks"][0]
    assert start["command"] == cs.portable_hook("session-start")
    assert start["timeout"] == gs.TIMEOUT_MS  # milliseconds, as the Gemini CLI counts
    assert f"note: {gs.TRUST_HINT}" in runner.invoke(main, ["gemini", "status"]).output
    refused = runner.invoke(main, ["gemini", "install", "-w", str(tmp_path / "ws")])
    assert refused.exit_code == 2 and refused.output.startswith("Error:")
    assert ".dreamer/workspace" in refused.output


def test_a_broken_settings_file_is_named_and_left_alone(tmp_path, monkeypatch, runner):
    home, _ = _home(tmp_path, monkeypatch)
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": ')
    for command in ("install", "uninstall"):
        result = runner.invoke(main, ["gemini", command, "--scope", "user"])
        assert result.exit_code == 2, result.output
        assert result.output.startswith(f"Error: {settings} is not plain JSON")
        assert "docs/guides/gemini-cli.md" in result.output
    assert settings.read_text() == '{"model": '
    shown = runner.invoke(main, ["gemini", "status"])
    assert shown.exit_code == 0 and f"problem: {settings}" in shown.output
    settings.write_text('{"mcpServers": ["not", "an", "object"]}\n')
    result = runner.invoke(main, ["gemini", "install", "--scope", "user"])
    assert result.exit_code == 2 and result.output.startswith(f"Error: {settings}: its hooks")


@pytest.mark.slow
def test_a_teammates_clone_runs_the_hooks_with_the_dream_on_their_path(
    tmp_path, monkeypatch, runner
):
    _, project = _home(tmp_path, monkeypatch)
    assert runner.invoke(main, ["gemini", "install"]).exit_code == 0
    data = json.loads((project / ".gemini" / "settings.json").read_text())
    commands = {event: groups[0]["hooks"][0]["command"] for event, groups in data["hooks"].items()}
    bin_dir = tmp_path / "bob" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "dream").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m dreamer.cli "$@"\n')
    (bin_dir / "dream").chmod(0o755)
    ws = tmp_path / "bob" / "ws"
    with Workspace.open(ws) as opened:
        opened.memory_md.write_text("# Working Memory State\n\n## The Bond\n- Bob likes tea.\n")
    event = json.dumps({"session_id": "s1", "cwd": str(project), "source": "startup"})

    def hook(event_name: str, path: str) -> subprocess.CompletedProcess[str]:
        env = {"PATH": path, "HOME": str(tmp_path / "bob"), "DREAM_WORKSPACE": str(ws)}
        return subprocess.run(
            ["sh", "-c", commands[event_name]],  # as the Gemini CLI runs a hook: bash -c
            input=event,
            capture_output=True,
            text=True,
            cwd=project,
            env=env,
            timeout=120,
        )

    started = hook("SessionStart", f"{bin_dir}:/usr/bin:/bin")
    assert started.returncode == 0, started.stderr
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Bob likes tea" in context
    for event_name in commands:  # without dream on PATH: one hint, exit 0, never a failure
        missing = hook(event_name, "/usr/bin:/bin")
        assert missing.returncode == 0, event_name
        assert cs.MISSING_HINT in missing.stdout + missing.stderr
