"""A project-scope install committed by one user works in a teammate's clone.

The teammate's ``dream`` lives somewhere else (a shim on a different PATH); the hook lines of
``.claude/settings.json`` run through a shell and the ``.mcp.json`` server is launched the way
Claude Code launches it (command and args, resolved on PATH). Where the real Claude Code CLI is
at hand (``DREAM_CLAUDE_CLI``), its own sessions in the clone show no hook error either.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from dreamer import Workspace
from dreamer.agents import claude_settings as cs
from dreamer.cli import main

SYSTEM_PATH = "/usr/bin:/bin"


@pytest.fixture
def committed(tmp_path, monkeypatch, runner):
    """A project where the first user ran `dream claude install --scope project`."""
    home, project = tmp_path / "alice", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    result = runner.invoke(main, ["claude", "install", "--scope", "project"])
    assert result.exit_code == 0, result.output
    return project


def teammate(tmp_path: Path) -> tuple[Path, Path]:
    """A second user's clone of the project and a `dream` in a folder of their own."""
    clone = tmp_path / "bob" / "clone"
    shutil.copytree(tmp_path / "project", clone)
    bin_dir = tmp_path / "bob" / "tools" / "bin"
    bin_dir.mkdir(parents=True)
    shim = bin_dir / "dream"
    # Runs this dreamer wherever it is installed, and leaves a trace that it was this one.
    calls = bin_dir / "calls"
    shim.write_text(
        f'#!/bin/sh\necho "$@" >> "{calls}"\nexec "{sys.executable}" -m dreamer.cli "$@"\n'
    )
    shim.chmod(0o755)
    return clone, bin_dir


def hook_commands(settings: Path) -> dict[str, str]:
    data = json.loads(settings.read_text())
    return {
        event: hook["command"]
        for event, groups in data["hooks"].items()
        for group in groups
        for hook in group["hooks"]
        if cs.is_ours(hook)
    }


def run_hook(command: str, clone: Path, path: str, home: Path) -> subprocess.CompletedProcess:
    event = {"session_id": "s1", "cwd": str(clone), "hook_event_name": "SessionStart"}
    env = {"PATH": path, "HOME": str(home), "DREAM_WORKSPACE": str(clone.parent / "ws")}
    return subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=clone,
        env=env,
        timeout=60,
    )


def test_project_install_names_no_path_of_the_installing_machine(committed, tmp_path):
    written = (committed / ".claude" / "settings.json").read_text()
    written += (committed / ".mcp.json").read_text()
    assert str(Path(sys.executable).parent) not in written and str(tmp_path) not in written
    server = json.loads((committed / ".mcp.json").read_text())["mcpServers"]["dreamer"]
    assert server["command"] == "dream" and server["args"] == ["mcp"]


def test_the_hooks_run_the_teammates_dream_found_on_path(committed, tmp_path):
    clone, bin_dir = teammate(tmp_path)
    with Workspace.open(clone.parent / "ws") as ws:
        ws.memory_md.write_text("# Working Memory State\n\n## The Bond\n- Bob likes tea.\n")
    commands = hook_commands(clone / ".claude" / "settings.json")
    assert set(commands) == {"SessionStart", "PreCompact", "SessionEnd"}
    start = run_hook(commands["SessionStart"], clone, f"{bin_dir}:{SYSTEM_PATH}", clone.parent)
    assert start.returncode == 0, start.stderr
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Bob likes tea" in context
    assert (bin_dir / "calls").read_text().startswith("hook session-start")


def test_without_dream_on_path_a_hook_prints_one_hint_and_exits_0(committed, tmp_path):
    clone, _ = teammate(tmp_path)
    commands = hook_commands(clone / ".claude" / "settings.json")
    for event, command in commands.items():
        done = run_hook(command, clone, SYSTEM_PATH, clone.parent)
        assert done.returncode == 0, event
        shown = done.stdout if event == "SessionStart" else done.stderr
        assert shown.strip() == cs.MISSING_HINT, event
        assert (done.stderr if event == "SessionStart" else done.stdout) == ""


def test_the_mcp_server_starts_from_the_teammates_path(committed, tmp_path):
    clone, bin_dir = teammate(tmp_path)
    server = json.loads((clone / ".mcp.json").read_text())["mcpServers"]["dreamer"]
    env = {
        "PATH": f"{bin_dir}:{SYSTEM_PATH}",
        "HOME": str(clone.parent),
        "DREAM_WORKSPACE": str(clone.parent / "ws"),
    }
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env=env, cwd=str(clone)
    )
    names: list[str] = []

    async def scenario() -> None:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                with anyio.fail_after(30):
                    names.extend(tool.name for tool in (await session.list_tools()).tools)

    anyio.run(scenario)
    assert "memory_search" in names
    assert (bin_dir / "calls").read_text().startswith("mcp")


def test_install_allows_the_tools_but_forget_and_can_be_declined(tmp_path, monkeypatch, runner):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    settings = project / ".claude" / "settings.json"
    dry = runner.invoke(main, ["claude", "install", "--dry-run"])
    assert '+      "mcp__dreamer__memory_search"' in dry.output  # the rule is shown in the diff
    declined = runner.invoke(main, ["claude", "install", "--no-permissions"])
    assert declined.exit_code == 0 and "permissions" not in json.loads(settings.read_text())
    runner.invoke(main, ["claude", "install"])
    allow = json.loads(settings.read_text())["permissions"]["allow"]
    assert "mcp__dreamer__memory_search" in allow and "mcp__dreamer__working_memory_note" in allow
    assert not any("forget" in rule for rule in allow)
    runner.invoke(main, ["claude", "uninstall"])
    assert not settings.exists()


def test_a_project_install_refuses_to_pin_this_machines_workspace(tmp_path, monkeypatch, runner):
    (tmp_path / "p" / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path / "p")
    result = runner.invoke(main, ["claude", "install", "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2 and result.output.startswith("Error:")
    assert ".dreamer/workspace" in result.output and not (tmp_path / "p" / ".claude").exists()


def test_user_scope_keeps_this_machines_absolute_command(tmp_path, monkeypatch, runner):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(main, ["claude", "install", "--scope", "user"]).exit_code == 0
    server = json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["dreamer"]
    assert os.path.isabs(server["command"])
