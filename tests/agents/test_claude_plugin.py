"""The plugin folder `dream claude install --plugin` writes is a marketplace the real Claude Code
adds and installs from, and the installed plugin's hooks, server and skills work."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from claude_cli import cli_path, isolate
from click.testing import CliRunner
from fake_anthropic import FakeAnthropic
from mcp_session import dream_command

from dreamer import Workspace
from dreamer.cli import main

pytestmark = pytest.mark.cli


def claude(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([cli_path(), *args], capture_output=True, text=True, cwd=cwd, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_written_plugin_installs_from_its_own_marketplace_and_runs(tmp_path, monkeypatch):
    cli_path()  # skip before building anything when the CLI is not here
    out = tmp_path / "dreamer-plugin"
    written = CliRunner().invoke(main, ["claude", "install", "--plugin", "--out", str(out)])
    assert written.exit_code == 0, written.output
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        ws.memory_md.write_text("# Working Memory State\n\n## The Bond\n- Bob likes tea.\n")
    project = tmp_path / "project"
    project.mkdir()
    home = isolate(monkeypatch, tmp_path / "home", None)
    # The hook script finds `dream` on PATH, as on a user's machine.
    monkeypatch.setenv("PATH", f"{Path(dream_command()).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DREAM_WORKSPACE", str(root))
    claude("plugin", "marketplace", "add", str(out), cwd=project)
    claude("plugin", "install", "dreamer@dreamer", cwd=project)
    assert "dreamer@dreamer" in claude("plugin", "list", cwd=project).stdout
    # What the real CLI recorded of the install is what `dream claude status` reads.
    monkeypatch.chdir(project)
    status = CliRunner().invoke(main, ["claude", "status", "--json"])
    assert json.loads(status.output)["scopes"]["user"]["plugin"] == [
        {"plugin": "dreamer@dreamer", "version": "0.1.0", "enabled": True}
    ]
    fake = FakeAnthropic()
    for _ in range(12):
        fake.text("Noted.")
    prompt = "What do you know about Bob?"
    with fake.serve() as base_url:
        isolate(monkeypatch, home, base_url)
        claude("-p", prompt, cwd=project)
    (asked, *_) = [r.json for r in fake.requests if prompt in r.text()]
    body = json.dumps(asked)
    assert "Bob likes tea" in body  # the exec-form SessionStart hook ran `dream hook`
    names = {tool["name"] for tool in asked["tools"]}
    assert any(name.endswith("dreamer__memory_search") for name in names), sorted(names)
    assert "Remember something for good in dreamer" in body  # the skills reach the model
