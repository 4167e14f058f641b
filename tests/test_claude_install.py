"""`dream claude install|status|uninstall` in a temporary HOME and project."""

from __future__ import annotations

import json

import pytest

from dreamer.cli import main


@pytest.fixture
def place(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    return home, project


OTHER = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}
        ]
    },
}


def test_install_status_uninstall_round_trip_in_project_scope(place, runner):
    home, project = place
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    before = json.dumps(OTHER, indent=2) + "\n"
    settings.write_text(before)

    dry = runner.invoke(main, ["claude", "install", "--dry-run"], catch_exceptions=False)
    assert dry.exit_code == 0 and "+" in dry.output and "Would install" in dry.output
    assert settings.read_text() == before and not (project / ".mcp.json").exists()

    done = runner.invoke(main, ["claude", "install", "--scope", "project"])
    assert done.exit_code == 0, done.output
    data = json.loads(settings.read_text())
    assert data["permissions"] == OTHER["permissions"]
    assert data["hooks"]["SessionStart"][0] == OTHER["hooks"]["SessionStart"][0]  # theirs first
    ours = [
        h["command"]
        for e in ("SessionStart", "PreCompact", "SessionEnd")
        for g in data["hooks"][e]
        for h in g["hooks"]
        if "hook" in h["command"]
    ]
    assert [c.split()[-1] for c in ours] == ["session-start", "pre-compact", "session-end"]
    mcp = json.loads((project / ".mcp.json").read_text())
    assert mcp["mcpServers"]["dreamer"]["args"] == ["mcp"]

    again = runner.invoke(main, ["claude", "install", "--scope", "project"])
    assert "Already installed" in again.output  # idempotent
    assert json.loads(settings.read_text()) == data

    status = runner.invoke(main, ["claude", "status", "--json"])
    report = json.loads(status.output)
    assert report["scopes"]["project"]["hooks"] == ["SessionStart", "PreCompact", "SessionEnd"]
    assert report["scopes"]["project"]["mcp"] is True
    assert report["scopes"]["user"] == {
        "settings": str(home / ".claude" / "settings.json"),
        "hooks": [],
        "mcp": False,
    }
    assert report["workspace"]["chosen_by"] == "default"

    gone = runner.invoke(main, ["claude", "uninstall", "--scope", "project"])
    assert gone.exit_code == 0, gone.output
    assert settings.read_text() == before  # as it was before install, byte for byte
    assert not (project / ".mcp.json").exists()  # install made it, uninstall took it away


def test_user_and_local_scopes_register_the_server_in_claude_json(place, runner):
    home, project = place
    claude_json = home / ".claude.json"
    claude_json.write_text(json.dumps({"numStartups": 3, "mcpServers": {"git": {"command": "x"}}}))
    assert runner.invoke(main, ["claude", "install", "--scope", "user"]).exit_code == 0
    assert runner.invoke(main, ["claude", "install", "--scope", "local"]).exit_code == 0
    data = json.loads(claude_json.read_text())
    assert set(data["mcpServers"]) == {"git", "dreamer"}
    assert "dreamer" in data["projects"][str(project)]["mcpServers"]
    assert (home / ".claude" / "settings.json").exists()
    assert (project / ".claude" / "settings.local.json").exists()
    for scope in ("user", "local"):
        assert runner.invoke(main, ["claude", "uninstall", "--scope", scope]).exit_code == 0
    assert json.loads(claude_json.read_text()) == {
        "numStartups": 3,
        "mcpServers": {"git": {"command": "x"}},
    }


def test_a_broken_settings_file_is_an_error_and_left_alone(place, runner):
    _, project = place
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    result = runner.invoke(main, ["claude", "install"])
    assert result.exit_code == 2 and result.output.startswith("Error:")
    assert "fix the file" in result.output and settings.read_text() == "{ not json"
