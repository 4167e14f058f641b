"""`dream claude install|status|uninstall` in a temporary HOME and project."""

from __future__ import annotations

import json

import pytest

from dreamer.agents import claude_settings as cs
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
    # theirs kept first, dreamer's tool rules after them
    assert data["permissions"]["allow"] == OTHER["permissions"]["allow"] + cs.tool_rules()
    assert data["hooks"]["SessionStart"][0] == OTHER["hooks"]["SessionStart"][0]  # theirs first
    ours = [
        h["command"]
        for e in ("SessionStart", "PreCompact", "SessionEnd")
        for g in data["hooks"][e]
        for h in g["hooks"]
        if "hook" in h["command"]
    ]
    events = [c.split(" hook ", 1)[1].split()[0] for c in ours]
    assert events == ["session-start", "pre-compact", "session-end"]
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
    original = json.dumps({"numStartups": 3, "mcpServers": {"git": {"command": "x"}}})
    claude_json.write_text(original)  # one line, no final newline
    assert runner.invoke(main, ["claude", "install", "--scope", "user"]).exit_code == 0
    assert runner.invoke(main, ["claude", "install", "--scope", "local"]).exit_code == 0
    data = json.loads(claude_json.read_text())
    assert set(data["mcpServers"]) == {"git", "dreamer"}
    assert "dreamer" in data["projects"][str(project)]["mcpServers"]
    assert (home / ".claude" / "settings.json").exists()
    assert (project / ".claude" / "settings.local.json").exists()
    for scope in ("user", "local"):
        assert runner.invoke(main, ["claude", "uninstall", "--scope", scope]).exit_code == 0
    assert claude_json.read_text() == original  # byte for byte, in its own layout


@pytest.mark.parametrize(
    "layout",
    [
        {"separators": (",", ":")},
        {"indent": 4},
        {"indent": "\t"},
        {"indent": 2},
    ],
)
def test_uninstall_gives_the_settings_file_back_in_its_own_layout(place, runner, layout):
    _, project = place
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    before = json.dumps(OTHER, **layout)
    settings.write_text(before)
    assert runner.invoke(main, ["claude", "install", "--scope", "project"]).exit_code == 0
    assert settings.read_text() != before
    assert runner.invoke(main, ["claude", "uninstall", "--scope", "project"]).exit_code == 0
    assert settings.read_text() == before


def test_a_broken_settings_file_is_an_error_and_left_alone(place, runner):
    _, project = place
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    result = runner.invoke(main, ["claude", "install"])
    assert result.exit_code == 2 and result.output.startswith("Error:")
    assert "fix the file" in result.output and settings.read_text() == "{ not json"


def test_the_shipped_plugin_is_complete_and_install_writes_it(tmp_path, runner):
    import os
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    plugin = root / "plugin" / "dreamer"
    manifest = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "dreamer"
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "PreCompact", "SessionEnd"}
    entries = [h for groups in hooks.values() for g in groups for h in g["hooks"]]
    # Exec form (no shell): the script's path is one argument, whatever characters it holds.
    assert all(h["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/dream-hook" for h in entries)
    assert [h["args"] for h in entries] == [["session-start"], ["pre-compact"], ["session-end"]]
    assert os.access(plugin / "bin" / "dream-hook", os.X_OK)
    assert json.loads((plugin / ".mcp.json").read_text())["mcpServers"]["dreamer"]["args"] == [
        "mcp"
    ]
    # Skills, not the older commands/ folder: skills/<name>/SKILL.md with name and description.
    assert not (plugin / "commands").exists()
    skills = sorted(p.parent.name for p in (plugin / "skills").glob("*/SKILL.md"))
    assert skills == ["dream", "dream-diff", "dream-log", "dream-restore", "remember"]
    for page in (plugin / "skills").glob("*/SKILL.md"):
        text = page.read_text()
        assert re.match(rf"---\nname: {page.parent.name}\ndescription: .+\n", text), page
    market = json.loads((root / ".claude-plugin" / "marketplace.json").read_text())
    assert (root / market["plugins"][0]["source"]).resolve() == plugin.resolve()

    out = tmp_path / "dreamer-plugin"
    dry = runner.invoke(main, ["claude", "install", "--plugin", "--out", str(out), "--dry-run"])
    assert dry.exit_code == 0 and "would write" in dry.output and not out.exists()
    done = runner.invoke(main, ["claude", "install", "--plugin", "--out", str(out)])
    assert done.exit_code == 0, done.output
    written = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    shipped = [p.relative_to(plugin) for p in plugin.rglob("*") if p.is_file()]
    assert written == sorted([*shipped, Path(".claude-plugin/marketplace.json")])
    own = json.loads((out / ".claude-plugin" / "marketplace.json").read_text())
    assert own["plugins"][0]["name"] == "dreamer" and own["plugins"][0]["source"] == "./"
    assert os.access(out / "bin" / "dream-hook", os.X_OK)
    again = runner.invoke(main, ["claude", "install", "--plugin", "--out", str(out)])
    assert again.exit_code == 2 and "exists already" in again.output
