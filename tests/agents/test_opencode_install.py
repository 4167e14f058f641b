"""``dream opencode install|status|uninstall``: the plugin file, and opencode.json given back."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

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


HARNESS = """
const { Dreamer } = await import(process.argv[2])
const hooks = await Dreamer({ client: {}, directory: process.cwd() })
const requests = []
for (const _ of [1, 2]) {  // two requests of one session
  const output = { system: ["OpenCode's own prompt"] }
  await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1" }, output)
  requests.push(output.system)
}
console.log(JSON.stringify(requests))
"""


@pytest.mark.slow
@pytest.mark.parametrize("on_path", [True, False])
def test_the_plugin_gives_the_memory_once_per_session_or_says_dream_is_missing(tmp_path, on_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    if on_path:  # a teammate's dream: answers the session start, and leaves a trace
        block = {"hookSpecificOutput": {"additionalContext": "Ada likes tea."}}
        (bin_dir / "dream").write_text(
            f"#!/bin/sh\ncat > /dev/null\necho \"$@\" >> {calls}\necho '{json.dumps(block)}'\n"
        )
        (bin_dir / "dream").chmod(0o755)
    plugin = tmp_path / "dreamer.mjs"
    plugin.write_text(os_.plugin_text(os_.PORTABLE, None))
    harness = tmp_path / "harness.mjs"
    harness.write_text(HARNESS)
    done = subprocess.run(
        [node, str(harness), str(plugin)],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    requests = json.loads(done.stdout)
    added = "Ada likes tea." if on_path else cs.MISSING_HINT
    assert requests == [["OpenCode's own prompt", added]] * 2
    if on_path:
        assert calls.read_text() == "hook session-start\n"  # asked once for the session
