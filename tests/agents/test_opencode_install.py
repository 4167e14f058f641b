"""``dream opencode install|status|uninstall``: the plugin file, and opencode.json given back."""

from __future__ import annotations

import json
import sys

from dreamer.agents import claude_settings as cs
from dreamer.agents import opencode_settings as os_
from dreamer.cli import main

THEIRS = '{\n  "model": "anthropic/claude-sonnet-4-5",\n  "mcp": {"docs": {"type": "remote", "url": "https://example.test/mcp"}}\n}'


def _home(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    return home, project


def test_user_install_writes_the_plugin_and_uninstall_gives_the_config_back(
    tmp_path, monkeypatch, runner
):
    home, _ = _home(tmp_path, monkeypatch)
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    (folder / "opencode.json").write_text(THEIRS)  # no final newline, servers on one line
    ws = tmp_path / "ws"
    dry = runner.invoke(
        main, ["opencode", "install", "--scope", "user", "-w", str(ws), "--dry-run"]
    )
    assert dry.exit_code == 0 and "Would install" in dry.output
    assert not (folder / "plugins").exists() and (folder / "opencode.json").read_text() == THEIRS
    done = runner.invoke(main, ["opencode", "install", "--scope", "user", "-w", str(ws)])
    assert done.exit_code == 0, done.output
    plugin = (folder / "plugins" / "dreamer.js").read_text()
    assert os_.is_ours(plugin) and "__DREAM__" not in plugin and "__PIN__" not in plugin
    assert json.dumps(["-w", str(ws)]) in plugin and json.dumps(cs.MISSING_HINT) in plugin
    config = json.loads((folder / "opencode.json").read_text())
    assert config["mcp"]["docs"]["url"] == "https://example.test/mcp"
    assert config["mcp"]["dreamer"]["command"][1:] == ["mcp", "-w", str(ws)]
    again = runner.invoke(main, ["opencode", "install", "--scope", "user", "-w", str(ws)])
    assert "Already installed (user)." in again.output
    shown = json.loads(runner.invoke(main, ["opencode", "status", "--json"]).output)
    assert shown["scopes"]["user"] == {
        "plugin_file": str(folder / "plugins" / "dreamer.js"),
        "plugin": True,
        "mcp": True,
    }
    removed = runner.invoke(main, ["opencode", "uninstall", "--scope", "user"])
    assert removed.exit_code == 0 and "Removed from scope user." in removed.output
    assert (folder / "opencode.json").read_text() == THEIRS  # byte for byte
    assert not (folder / "plugins" / "dreamer.js").exists()
    assert (
        "Nothing to remove"
        in runner.invoke(main, ["opencode", "uninstall", "--scope", "user"]).output
    )


def test_a_plugin_file_of_someone_else_is_never_touched(tmp_path, monkeypatch, runner):
    _, project = _home(tmp_path, monkeypatch)
    theirs = project / ".opencode" / "plugins" / "dreamer.js"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("export const Mine = async () => ({})\n")
    for command in ("install", "uninstall"):
        result = runner.invoke(main, ["opencode", command])
        assert result.exit_code == 2 and result.output.startswith(f"Error: {theirs}")
    assert theirs.read_text() == "export const Mine = async () => ({})\n"
    assert not (project / "opencode.json").exists()


def test_project_install_is_portable_and_removed_whole(tmp_path, monkeypatch, runner):
    _, project = _home(tmp_path, monkeypatch)
    assert runner.invoke(main, ["opencode", "install"]).exit_code == 0
    plugin = (project / ".opencode" / "plugins" / "dreamer.js").read_text()
    config = (project / "opencode.json").read_text()
    for written in (plugin, config):
        assert str(tmp_path) not in written and sys.prefix not in written
    assert 'const DREAM = "dream"' in plugin and "const PIN = []" in plugin
    assert json.loads(config)["mcp"]["dreamer"]["command"] == ["dream", "mcp"]
    refused = runner.invoke(main, ["opencode", "install", "-w", str(tmp_path / "ws")])
    assert refused.exit_code == 2 and ".dreamer/workspace" in refused.output
    assert runner.invoke(main, ["opencode", "uninstall"]).exit_code == 0
    assert not (project / "opencode.json").exists()
    assert not (project / ".opencode" / "plugins" / "dreamer.js").exists()


def test_a_config_with_comments_is_named_and_left_alone(tmp_path, monkeypatch, runner):
    _, project = _home(tmp_path, monkeypatch)
    (project / "opencode.json").write_text('{\n  // mine\n  "model": "x"\n}\n')
    result = runner.invoke(main, ["opencode", "install"])
    assert result.exit_code == 2 and "is not plain JSON" in result.output
    assert not (project / ".opencode").exists()
