"""Secrets never land and never leave: redaction at the door, in every place a text goes."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from click.testing import CliRunner
from fake_anthropic import FakeAnthropic
from secret_cases import NOTES, SECRETS, assert_no_secret

from dreamer import Workspace, run_dream
from dreamer.agents import tools
from dreamer.agents.bootstrap import bootstrap_block
from dreamer.agents.ingest import ingest
from dreamer.cli import main
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer


def transcript(tmp_path):
    path = tmp_path / "session.jsonl"
    lines = [
        {
            "type": "user",
            "timestamp": "2026-03-11T09:00:00Z",
            "message": {
                "role": "user",
                "content": "Connect with postgres://app:"
                + SECRETS["password"]
                + "@db.internal:5432/app please",
            },
        },
        {
            "type": "assistant",
            "timestamp": "2026-03-11T09:00:05Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Connected to db.internal as app."}],
            },
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def everything_on_disk(root) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file())


@pytest.mark.slow
def test_no_secret_lands_anywhere_and_placeholders_do(tmp_path, now):
    fake = FakeAnthropic()
    with Workspace.open(tmp_path / "ws") as ws:
        for i, text in enumerate(NOTES):
            ws.note(text, at=now - timedelta(hours=6 - i))
        ingest(ws, [transcript(tmp_path)], now)
        ws.search(f"where is password {SECRETS['password']} used", now=now)  # queries are logged
        answer = {
            "bond": "- Maya prefers concise answers, code first.",
            "active_context": "- Deploy bot set up; backups on AWS; CI pushes with a token.",
        }
        fake.tool_use(TOOL_NAME, answer)
        synth = ClaudeSynthesizer(ws.settings, client=fake.client())
        assert run_dream(ws, now=now, force=True, synthesizer=synth).committed
        block = bootstrap_block(ws, context_window=200_000)
        stored = "\n".join(c.text for c in ws.store.crystals.select())
    assert_no_secret(everything_on_disk(tmp_path / "ws"), "the workspace files (WAL included)")
    assert_no_secret(block, "the bootstrap block")
    assert_no_secret(json.dumps(fake.last.json), "the request to the Messages API")
    for kind in SECRETS:
        assert f"[secret:{kind}#" in stored, kind
    assert "[secret:password#" in json.dumps(fake.last.json)
    assert "postgres://app:[secret:password#" in stored  # the rest of the URL stays useful
    log = CliRunner().invoke(main, ["log", "--json", "-w", str(tmp_path / "ws")])
    assert log.exit_code == 0
    assert_no_secret(log.output, "dream log --json")


def test_the_same_secret_gets_the_same_placeholder(ws, now):
    first = ws.get(ws.note(f"the password is {SECRETS['password']}", at=now)).text
    again = ws.get(ws.note(f"reminder: password is {SECRETS['password']} today", at=now)).text
    marker = first.split("[secret:", 1)[1].split("]", 1)[0]
    assert f"[secret:{marker}]" in again


def test_with_redaction_off_storage_is_raw_but_the_request_is_still_redacted(tmp_path, now):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "dreamer.toml").write_text("[memory.secrets]\nredact = false\n")
    fake = FakeAnthropic()
    with Workspace.open(root) as ws:
        for i, text in enumerate(NOTES):
            ws.note(text, at=now - timedelta(hours=6 - i))
        assert SECRETS["password"] in "\n".join(c.text for c in ws.store.crystals.select())
        for _ in range(3):  # a draft and up to two revisions
            fake.tool_use(
                TOOL_NAME,
                {"bond": "- Maya prefers concise answers with the code first, then a short why."},
            )
        run_dream(
            ws,
            now=now,
            force=True,
            synthesizer=ClaudeSynthesizer(ws.settings, client=fake.client()),
        )
    assert_no_secret(json.dumps(fake.last.json), "the request to the Messages API")


def test_dream_note_says_what_it_redacted(tmp_path):
    result = CliRunner().invoke(
        main, ["note", "-w", str(tmp_path / "ws"), NOTES[3]], catch_exceptions=False
    )
    assert result.exit_code == 0
    assert "Redacted 1 secret (password)" in result.output
    assert SECRETS["password"] not in result.output


def test_the_note_tool_tells_the_agent_it_redacted(ws, now):
    result = tools.handle(
        ws, {"id": "t1", "name": "working_memory_note", "input": {"note": NOTES[2]}}, now=now
    )
    assert not result["is_error"]
    assert "1 secret(s) were replaced" in json.loads(result["content"])["redacted"]


def test_a_stimulus_reason_is_redacted_too(ws, now):
    from dreamer.memory import hormones

    hormones.feel(ws, "cortisol", 0.3, f"leaked {SECRETS['github-token']} in a log", now)
    reasons = [row["reason"] for row in hormones.history(ws, 5)]
    assert_no_secret(json.dumps(reasons), "the hormone history")


def test_a_bare_made_up_password_after_the_word_is_caught(ws, now):
    text = ws.get(ws.note(f"the staging db password {SECRETS['password']} expires soon")).text
    assert SECRETS["password"] not in text and "[secret:password#" in text


@pytest.mark.parametrize(
    "text",
    [
        "Commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f fixed the flaky test",
        "Reset the password sha256-hashed in the users table",
        "Password manager v2026 rollout is next week",
        "I forgot my password yesterday, reset it via the admin page",
        "The password is in 1Password under Staging",
    ],
)
def test_ordinary_notes_pass_unchanged(ws, now, text):
    assert ws.get(ws.note(text, at=now)).text == text
