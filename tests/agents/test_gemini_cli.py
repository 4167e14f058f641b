"""The real Gemini CLI with dreamer installed: a fact told in one session reaches the next.

The CLI talks to the loopback fake of the Gemini API (tests/fake_gemini.py) from an isolated
home. Session 1 states a fact; its AfterAgent hook stores the turn (once, without the memory
block the SessionStart hook put in front of the prompt); ``dream run`` dreams it into the
working memory; session 2's request to the model carries it. Uninstall gives the person's
settings.json back byte for byte.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_gemini import FakeGemini, request_text
from gemini_cli import cli_path, environment, run, settings

from dreamer import Workspace
from dreamer.cli import main

pytestmark = pytest.mark.cli

FACT = "Remember this: my cat is called Miso and she hates Mondays."
# The offline dream keeps what a reply established (dreamer/dream/rules/session_exchanges.py).
ANSWER = "Noted: your cat Miso hates Mondays, so no vet visits on a Monday."
SECOND = "What should I buy for my cat?"
SECOND_ANSWER = "A new scratching post."


def _stored(ws_path: Path, count: int, timeout: float = 120.0) -> list[tuple[str, str]]:
    """The gemini exchanges in the workspace once there are ``count`` (AfterAgent's ingest runs
    detached after the CLI exits); whatever is there when the time is up."""
    deadline = time.monotonic() + timeout
    while True:
        with Workspace.open(ws_path, create=False) as ws:
            texts = [
                (c.speaker, c.text)
                for c in ws.store.crystals.select()
                if (c.origin or "").startswith("gemini:")
            ]
        if len(texts) >= count or time.monotonic() > deadline:
            return texts
        time.sleep(0.5)


def test_real_gemini_remembers_across_sessions_and_uninstall_restores(
    tmp_path, runner, monkeypatch
):
    cli = cli_path()
    home, project, ws_path = tmp_path / "home", tmp_path / "project", tmp_path / "ws"
    (home / ".gemini").mkdir(parents=True)
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    before = settings()
    settings_file = home / ".gemini" / "settings.json"
    settings_file.write_text(before)
    with Workspace.open(ws_path) as ws:
        ws.init()
    installed = runner.invoke(main, ["gemini", "install", "--scope", "user", "-w", str(ws_path)])
    assert installed.exit_code == 0, installed.output
    assert '+  "hooks": {' in installed.output.replace("    ", "  ")  # the diff was shown

    fake = FakeGemini()
    fake.text(ANSWER).text(SECOND_ANSWER)
    with fake.serve() as base_url:
        env = environment(home, base_url)
        first = run(cli, project, env, FACT)
        assert first.returncode == 0, first.stderr[-3000:]
        assert ANSWER in first.stdout
        stored = _stored(ws_path, 2)
        assert stored == [("user", FACT), ("assistant", ANSWER)]  # no memory block, no markup

        dreamt = runner.invoke(main, ["run", "-w", str(ws_path), "--force"])
        assert dreamt.exit_code == 0, dreamt.output
        assert "Miso" in (ws_path / "MEMORY.md").read_text()

        second = run(cli, project, env, SECOND)
        assert second.returncode == 0, second.stderr[-3000:]
        assert SECOND_ANSWER in second.stdout
        stored = _stored(ws_path, 4)

    assert len(fake.turns) == 2
    sent = request_text(fake.turns[1])  # the second session's request to the model
    assert "Miso" in sent and "hates Mondays" in sent, "the memory did not reach the model"
    # The MCP server registered in settings.json started, and its tools reached the model.
    for turn in fake.turns:
        names = [
            declaration["name"]
            for tool in turn.json.get("tools") or []
            for declaration in tool.get("functionDeclarations") or []
        ]
        assert any(name.endswith("memory_search") and "dreamer" in name for name in names), names
    # Each turn once, with the person's words and the answer only, each with who said it.
    assert stored == [
        ("user", FACT),
        ("assistant", ANSWER),
        ("user", SECOND),
        ("assistant", SECOND_ANSWER),
    ]
    log = (ws_path / "memory" / "hooks.log").read_text()
    assert "Traceback" not in log, log

    shown = runner.invoke(main, ["gemini", "status", "--json"])
    assert json.loads(shown.output)["scopes"]["user"]["hooks"] == [
        "SessionStart",
        "AfterAgent",
        "SessionEnd",
    ]
    removed = runner.invoke(main, ["gemini", "uninstall", "--scope", "user"])
    assert removed.exit_code == 0, removed.output
    assert settings_file.read_text() == before  # byte for byte
