"""The real OpenCode CLI with dreamer installed: a fact told in one session reaches the next.

OpenCode talks to the loopback fake of the Messages API (tests/fake_anthropic.py) from an
isolated home. Session 1 states a fact; dreamer's plugin hands the session over when it goes
idle and the turn is stored once; ``dream run`` dreams it into the working memory; session 2's
request to the model carries it in its system prompt. Uninstall removes the plugin and gives
the person's opencode.json back byte for byte.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic, Recorded, Scripted, message_body
from opencode_cli import cli_path, config, environment, run

from dreamer import Workspace
from dreamer.cli import main

pytestmark = pytest.mark.cli

FACT = "Remember this: my cat is called Miso and she hates Mondays."
# The offline dream keeps what a reply established (dreamer/dream/rules/session_exchanges.py).
ANSWER = "Noted: your cat Miso hates Mondays, so no vet visits on a Monday."
SECOND = "What should I buy for my cat?"
SECOND_ANSWER = "A new scratching post."


def _stored(ws_path: Path, count: int, timeout: float = 120.0) -> list[tuple[str, str]]:
    """The opencode exchanges in the workspace once there are ``count`` (the plugin's hand-over
    is stored by a detached process); whatever is there when the time is up."""
    deadline = time.monotonic() + timeout
    while True:
        with Workspace.open(ws_path, create=False) as ws:
            texts = [
                (c.speaker, c.text)
                for c in ws.store.crystals.select()
                if (c.origin or "").startswith("opencode:")
            ]
        if len(texts) >= count or time.monotonic() > deadline:
            return texts
        time.sleep(0.5)


class Turns:
    """Answers OpenCode's requests: the scripted answers for the agent's turns, a title for
    the small model's title requests (which run beside them)."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.turns: list[Recorded] = []

    def __call__(self, recorded: Recorded) -> Scripted:
        body = recorded.json or {}
        if "haiku" in str(body.get("model")):
            text = "A session title"
        else:
            self.turns.append(recorded)
            text = self.answers.pop(0) if self.answers else "no scripted answer left"
        return Scripted(200, message_body([{"type": "text", "text": text}]))


def test_real_opencode_remembers_across_sessions_and_uninstall_restores(
    tmp_path, runner, monkeypatch
):
    cli = cli_path()
    home, project, ws_path = tmp_path / "home", tmp_path / "project", tmp_path / "ws"
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    with Workspace.open(ws_path) as ws:
        ws.init()
    fake = FakeAnthropic()
    turns = Turns(ANSWER, SECOND_ANSWER)
    for _ in range(20):
        fake.push(turns)
    with fake.serve() as base_url:
        before = config(base_url)
        (folder / "opencode.json").write_text(before)
        installed = runner.invoke(
            main, ["opencode", "install", "--scope", "user", "-w", str(ws_path)]
        )
        assert installed.exit_code == 0, installed.output
        assert "+// dreamer: OpenCode plugin" in installed.output  # the diff was shown

        env = environment(home)
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

    assert len(turns.turns) == 2
    system = json.dumps(turns.turns[1].json.get("system"))  # the second session's request
    assert "Miso" in system and "hates Mondays" in system, "the memory did not reach the model"
    # The MCP server registered in opencode.json started, and its tools reached the model.
    for turn in turns.turns:
        names = [tool.get("name") for tool in turn.json.get("tools") or []]
        assert "dreamer_memory_search" in names, names
    # Each turn once, with the person's words and the answer only, each with who said it.
    assert stored == [
        ("user", FACT),
        ("assistant", ANSWER),
        ("user", SECOND),
        ("assistant", SECOND_ANSWER),
    ]
    log = (ws_path / "memory" / "hooks.log").read_text()
    assert "Traceback" not in log, log

    shown = json.loads(runner.invoke(main, ["opencode", "status", "--json"]).output)
    assert shown["scopes"]["user"]["plugin"] is True and shown["scopes"]["user"]["mcp"] is True
    removed = runner.invoke(main, ["opencode", "uninstall", "--scope", "user"])
    assert removed.exit_code == 0, removed.output
    assert (folder / "opencode.json").read_text() == before  # byte for byte
    assert not (folder / "plugins" / "dreamer.js").exists()


def test_a_subagents_session_is_not_stored_as_the_persons_words(tmp_path, runner, monkeypatch):
    cli = cli_path()
    home, project, ws_path = tmp_path / "home", tmp_path / "project", tmp_path / "ws"
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    with Workspace.open(ws_path) as ws:
        ws.init()
    task = {
        "description": "Look around",
        "prompt": "List the files here.",
        "subagent_type": "general",
    }
    scripted = [  # the main agent calls a subagent, which answers; then the main agent
        Scripted(
            200,
            message_body(
                [{"type": "tool_use", "id": "toolu_fake_1", "name": "task", "input": task}],
                stop_reason="tool_use",
            ),
        ),
        Scripted(200, message_body([{"type": "text", "text": "There are no files at all."}])),
        Scripted(200, message_body([{"type": "text", "text": "The folder is empty for now."}])),
    ]

    def answer(recorded: Recorded) -> Scripted:
        if "haiku" in str((recorded.json or {}).get("model")):
            return Scripted(200, message_body([{"type": "text", "text": "A title"}]))
        return scripted.pop(0)

    fake = FakeAnthropic()
    for _ in range(12):
        fake.push(answer)
    with fake.serve() as base_url:
        (folder / "opencode.json").write_text(config(base_url))
        installed = runner.invoke(
            main, ["opencode", "install", "--scope", "user", "-w", str(ws_path)]
        )
        assert installed.exit_code == 0, installed.output
        done = run(cli, project, environment(home), "What is in this folder?")
        assert done.returncode == 0, done.stderr[-3000:]
        assert "The folder is empty for now." in done.stdout
        _stored(ws_path, 2)
        time.sleep(5)  # a subagent's hand-over, were there one, would have landed by now
        stored = _stored(ws_path, 2)
    assert scripted == []  # the subagent ran: its turn went to the model
    assert stored == [
        ("user", "What is in this folder?"),
        ("assistant", "The folder is empty for now."),
    ]
