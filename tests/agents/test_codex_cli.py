"""The real Codex CLI with dreamer installed: memory in, each exchange stored once, clean removal.

Codex talks to the loopback fake of the Responses API (tests/fake_openai.py). Hooks run with
``--dangerously-bypass-hook-trust``: a person trusts them once in the TUI (``/hooks``), which a
headless test cannot do, and the flag changes nothing else.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from codex_cli import cli_path, config, isolate
from fake_openai import FakeOpenAI

from dreamer import Workspace
from dreamer.cli import main

pytestmark = pytest.mark.cli

NOTE = "The user's cat is called Miso and hates Mondays."
FIRST = "Which editor should the release notes be written in?"
ANSWER = "Write them in Helix, as the team agreed."
SECOND = "And who reviews them?"
SECOND_ANSWER = "Priya reviews the release notes."


def _codex(cli: str, project: Path, prompt: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [cli, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"]
        + ["-C", str(project), prompt],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def _stored(ws_path: Path, count: int, timeout: float = 90.0) -> list[str]:
    """The codex crystals in the workspace as ``speaker: text``, once there are ``count`` of
    them (Stop's ingest runs detached after the CLI exits); whatever is there when the time is
    up. Each exchange is two: the person's words and the answer."""
    deadline = time.monotonic() + timeout
    while True:
        with Workspace.open(ws_path, create=False) as ws:
            texts = [
                f"{c.speaker}: {c.text}"
                for c in ws.store.crystals.select()
                if (c.origin or "").startswith("codex:")
            ]
        if len(texts) >= count or time.monotonic() > deadline:
            return texts
        time.sleep(0.5)


def test_real_codex_remembers_and_uninstall_restores_the_config(tmp_path, runner, monkeypatch):
    cli = cli_path()
    codex_home = isolate(monkeypatch, tmp_path / "home")
    project = tmp_path / "project"
    project.mkdir()
    ws_path = tmp_path / "ws"
    with Workspace.open(ws_path) as ws:
        ws.init()
        ws.note(NOTE)
    fake = FakeOpenAI()
    fake.response(ANSWER).response(SECOND_ANSWER)
    with fake.serve() as base_url:
        before = config(base_url)
        (codex_home / "config.toml").write_text(before)
        marker = tmp_path / "their-hook-ran"
        theirs = (  # the person's own hook, laid out by hand: it keeps running, and comes back
            '{"hooks": {\n  "Stop": [{"hooks": [{"type": "command", '
            f'"command": "touch {marker}"}}]}}]\n}}}}\n'
        )
        (codex_home / "hooks.json").write_text(theirs)
        installed = runner.invoke(main, ["codex", "install", "--scope", "user", "-w", str(ws_path)])
        assert installed.exit_code == 0, installed.output
        listed = subprocess.run(
            [cli, "mcp", "list", "--json"], capture_output=True, text=True, timeout=60
        )
        servers = {server["name"]: server for server in json.loads(listed.stdout)}
        assert servers["dreamer"]["enabled"] is True  # Codex reads the table install wrote
        assert servers["dreamer"]["transport"]["args"] == ["mcp", "-w", str(ws_path)]

        first = _codex(cli, project, FIRST)
        assert first.returncode == 0, first.stderr[-3000:]
        assert ANSWER in first.stdout
        stored = _stored(ws_path, 2)
        assert stored == [f"user: {FIRST}", f"assistant: {ANSWER}"]

        second = _codex(cli, project, SECOND)
        assert second.returncode == 0, second.stderr[-3000:]
        stored = _stored(ws_path, 4)

    assert len(fake.requests) == 2
    opening = fake.requests[1].json  # the second session's first request
    developer = [
        part["text"]
        for item in opening["input"]
        if item.get("role") == "developer"
        for part in item["content"]
    ]
    assert any(NOTE in text for text in developer), "the memory block did not reach the model"
    # The MCP server registered in config.toml started, and its tools reached the model.
    for request in fake.requests:
        namespaces = [tool for tool in request.json["tools"] if tool.get("name") == "mcp__dreamer"]
        assert namespaces and "memory_search" in json.dumps(namespaces[0])
    # Each exchange once, and neither the memory block nor harness text was captured.
    assert stored == [
        f"user: {FIRST}",
        f"assistant: {ANSWER}",
        f"user: {SECOND}",
        f"assistant: {SECOND_ANSWER}",
    ]
    log = (ws_path / "memory" / "hooks.log").read_text()
    assert "Traceback" not in log, log

    removed = runner.invoke(main, ["codex", "uninstall", "--scope", "user"])
    assert removed.exit_code == 0, removed.output
    assert (codex_home / "config.toml").read_text() == before  # byte for byte
    assert (codex_home / "hooks.json").read_text() == theirs
    assert marker.exists()
    assert json.loads(runner.invoke(main, ["codex", "status", "--json"]).output)["scopes"][
        "user"
    ] == {"hooks_file": str(codex_home / "hooks.json"), "hooks": [], "mcp": False}
