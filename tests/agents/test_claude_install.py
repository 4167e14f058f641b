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
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)  # Claude Code's folder is HOME's
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
    # Listing what is held runs unasked; accepting it, like forgetting, waits for a person.
    assert "mcp__dreamer__memory_held" in data["permissions"]["allow"]
    for asked in ("memory_accept", "memory_forget"):
        assert not any(asked in rule for rule in data["permissions"]["allow"])
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
        "plugin": [],
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


# --- malformed input: one Error line naming the file and the key, nothing written ----------


def _snapshot(*roots):
    return {path: path.read_bytes() for root in roots for path in root.rglob("*") if path.is_file()}


def _one_error(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and "Traceback" not in output, output
    return lines[0]


@pytest.mark.parametrize(
    ("scope", "file", "content", "named"),
    [
        ("project", ".claude/settings.json", {"hooks": "SessionStart"}, '"hooks" is a string'),
        (
            "project",
            ".claude/settings.json",
            {"hooks": {"SessionStart": {"hooks": []}}},
            '"hooks.SessionStart" is an object',
        ),
        (
            "project",
            ".claude/settings.json",
            {"permissions": {"allow": "Bash(npm test)"}},
            '"permissions.allow" is a string',
        ),
        ("project", ".mcp.json", {"mcpServers": 3}, '"mcpServers" is a number (3)'),
        ("user", "~/.claude.json", {"mcpServers": [1]}, '"mcpServers" is an array'),
        ("local", "~/.claude.json", {"projects": 7}, '"projects" is a number (7)'),
    ],
)
def test_a_settings_file_of_the_wrong_shape_is_one_error_and_nothing_changes(
    place, runner, scope, file, content, named
):
    home, project = place
    path = home / file[2:] if file.startswith("~/") else project / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))
    before = _snapshot(home, project)
    result = runner.invoke(main, ["claude", "install", "--scope", scope])
    assert result.exit_code == 2
    line = _one_error(result.output)
    assert str(path) in line and named in line and "fix the file" in line
    assert _snapshot(home, project) == before
    gone = runner.invoke(main, ["claude", "uninstall", "--scope", scope])
    # Nothing of dreamer's can sit under a key of the wrong shape: nothing to remove, or the
    # same one line where the key uninstall reads is the broken one.
    assert gone.exit_code in (0, 2) and "Traceback" not in gone.output, gone.output
    assert gone.exit_code == 0 or named in _one_error(gone.output)
    assert _snapshot(home, project) == before


@pytest.mark.parametrize("scope", cs.SCOPES)
def test_home_that_is_a_file_is_named_as_home(place, runner, monkeypatch, tmp_path, scope):
    _, project = place
    not_a_folder = tmp_path / "home-file"
    not_a_folder.write_text("x")
    monkeypatch.setenv("HOME", str(not_a_folder))
    before = _snapshot(project)
    result = runner.invoke(main, ["claude", "install", "--scope", scope])
    assert result.exit_code == 2
    line = _one_error(result.output)
    assert f"HOME is {not_a_folder}, a file" in line
    assert _snapshot(project) == before and not_a_folder.read_text() == "x"


def test_dream_status_answers_right_after_a_user_scope_install(place, runner):
    done = runner.invoke(main, ["claude", "install", "--scope", "user"])
    assert done.exit_code == 0, done.output
    shown = runner.invoke(main, ["status"])
    assert shown.exit_code == 0, shown.output
    assert "claude-code" in shown.output  # the synthesizer install set, read back


def test_a_project_install_with_dream_workspace_exported_names_the_variable(
    place, runner, monkeypatch, tmp_path
):
    home, project = place
    monkeypatch.setenv("DREAM_WORKSPACE", str(tmp_path / "ws"))
    result = runner.invoke(main, ["claude", "install", "--scope", "project"])
    assert result.exit_code == 2
    line = _one_error(result.output)
    assert "DREAM_WORKSPACE is set" in line and "env -u DREAM_WORKSPACE" in line
    assert not (project / ".claude").exists() and not (project / ".mcp.json").exists()
    assert not (tmp_path / "ws").exists()


# --- the plugin, as Claude Code 2.1.197 records `claude plugin install` ------------------------


def _record_plugin(home, project, scope: str, enabled: bool) -> None:
    """The files `claude plugin install dreamer@dreamer --scope SCOPE` writes (2.1.197)."""
    plugins = home / ".claude" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    install = {"scope": scope, "installPath": str(plugins / "cache"), "version": "0.1.0"}
    if scope != "user":
        install["projectPath"] = str(project)
    (plugins / "installed_plugins.json").write_text(
        json.dumps({"version": 2, "plugins": {"dreamer@dreamer": [install]}})
    )
    settings = cs.settings_path(scope, home, project)
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledPlugins": {"dreamer@dreamer": enabled}}))


def test_status_shows_a_plugin_install_and_whether_it_is_on(place, runner):
    home, project = place
    _record_plugin(home, project, "project", enabled=False)
    report = json.loads(runner.invoke(main, ["claude", "status", "--json"]).output)
    assert report["scopes"]["project"]["plugin"] == [
        {"plugin": "dreamer@dreamer", "version": "0.1.0", "enabled": False}
    ]
    assert report["scopes"]["user"]["plugin"] == []
    _record_plugin(home, project, "user", enabled=True)
    assert runner.invoke(main, ["claude", "install", "--scope", "local"]).exit_code == 0
    shown = runner.invoke(main, ["claude", "status"]).output
    assert "user     hooks: none; MCP server: no; plugin dreamer@dreamer 0.1.0" in shown
    assert "both run here" in shown  # the plugin and the local hooks would double the memory


def test_claude_config_dir_moves_the_user_and_local_scopes(place, runner, monkeypatch, tmp_path):
    """Claude Code reads the user's settings and .claude.json from $CLAUDE_CONFIG_DIR when it is
    set (2.1.197 writes both there): an install into ~/.claude would never run."""
    home, project = place
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert runner.invoke(main, ["claude", "install", "--scope", "user"]).exit_code == 0
    assert runner.invoke(main, ["claude", "install", "--scope", "local"]).exit_code == 0
    assert cs.hooks_installed(json.loads((config / "settings.json").read_text()))
    data = json.loads((config / ".claude.json").read_text())
    assert (
        "dreamer" in data["mcpServers"]
        and "dreamer" in data["projects"][str(project)]["mcpServers"]
    )
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()
    report = json.loads(runner.invoke(main, ["claude", "status", "--json"]).output)
    assert report["scopes"]["user"]["settings"] == str(config / "settings.json")
    assert report["scopes"]["user"]["mcp"] and report["scopes"]["local"]["mcp"]
    for scope in ("user", "local"):
        assert runner.invoke(main, ["claude", "uninstall", "--scope", scope]).exit_code == 0
    assert not (config / "settings.json").exists() and not (config / ".claude.json").exists()


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_workspace_that_cannot_be_made_stops_the_install_before_any_file_changes(
    place, runner, tmp_path, agent
):
    home, project = place
    not_a_folder = tmp_path / "ws-file"
    not_a_folder.write_text("x")
    result = runner.invoke(main, [agent, "install", "--scope", "user", "-w", str(not_a_folder)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    line = _one_error(result.output)
    assert str(not_a_folder) in line and "a file, not a folder" in line
    assert _snapshot(home, project) == {}  # no settings, no server, no dreamer.toml
