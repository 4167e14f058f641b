"""Issue 23: dreams written by the user's own Claude Code CLI (a subscription, no API key).

The real ``claude`` (2.1.197 from npm) in an isolated home, against the fake Messages API on
127.0.0.1: ``dream run --force`` with ``synthesizer = "claude-code"`` commits; the request holds
the working-memory schema as the ``StructuredOutput`` tool and dreamer's prompt as the system
prompt, with the data redacted; dreamer's hooks, installed into that Claude config, capture
nothing of the dream; a revision works; ``dream log`` names the backend with tokens and cost.
A missing or logged-out CLI fails the dream in one line, never as an offline dream.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from claude_cli import cli_path, isolate
from fake_anthropic import FakeAnthropic
from test_dream_claude import COLLAPSED, GOOD, LATER_NOTES, dreamt, fake, scratch_texts  # noqa: F401

from dreamer.agents import hooks
from dreamer.cli import main
from dreamer.dream.synth.claude_code import HOOKS_DISABLED
from dreamer.dream.synth.prompt import input_schema

GITHUB_TOKEN = "ghp_" + "R8kD2mQ7vX4bN9cL1tY6wH3sJ5pF0gZa8eUq"


@pytest.fixture
def api() -> FakeAnthropic:
    """The fake Messages API the CLI talks to."""
    return FakeAnthropic()


def dream(runner, ws, monkeypatch, *extra: str):
    """`dream run --force` with synthesizer = "claude-code" set in the workspace's dreamer.toml."""
    toml = ws.root / "dreamer.toml"
    toml.write_text('[memory.dream]\nsynthesizer = "claude-code"\n', encoding="utf-8")
    return runner.invoke(main, ["run", "--force", "-w", str(ws.root), *extra])


def one_error(output: str) -> str:
    """The single Error: line of a command's output (fails on none, two, or a traceback)."""
    lines = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


def last_entry(ws) -> dict:
    """The newest journal entry, every field."""
    return ws.store.journal.get_dream(ws.store.journal.dream_entries(1)[0]["id"])


def install_hooks(runner, ws, home: Path) -> Path:
    """dreamer's hooks in the isolated Claude config, as `dream claude install --scope user`."""
    result = runner.invoke(main, ["claude", "install", "--scope", "user", "-w", str(ws.root)])
    assert result.exit_code == 0, result.output
    settings = home / ".claude" / "settings.json"
    assert "dream" in settings.read_text() and "session-end" in settings.read_text()
    return ws.root / "memory" / "hooks.log"


@pytest.mark.cli
def test_a_dream_commits_through_the_real_cli_and_is_never_captured(
    dreamt,  # noqa: F811
    api,
    runner,
    monkeypatch,
    tmp_path,
):
    monkeypatch.setenv("DREAM_CLAUDE_CLI", cli_path())
    monkeypatch.setenv("DREAM_REDACT_SECRETS", "false")  # stored raw: the request must redact
    dreamt.note(f"CI pushes with the token {GITHUB_TOKEN} for now", importance=0.6)
    api.structured_output(GOOD, usage={"input_tokens": 4000, "output_tokens": 900})
    with api.serve() as base_url:
        home = isolate(monkeypatch, tmp_path / "home", base_url)
        hooks_log = install_hooks(runner, dreamt, home)
        result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 0, result.output
    assert "claude-code/sonnet" in result.output
    assert "Lisbon" in dreamt.memory_md.read_text()
    (request,) = api.requests
    body = request.json
    (tool,) = body["tools"]
    assert tool["name"] == "StructuredOutput"
    assert tool["input_schema"]["properties"].keys() == input_schema()["properties"].keys()
    assert body["thinking"] == {"type": "disabled"}  # as the API backend's request
    system = " ".join(block["text"] for block in body["system"])
    assert "dream worker" in system and len(system) < 20_000  # dreamer's, not Claude Code's
    sent = request.text()
    assert GITHUB_TOKEN not in sent and "[secret:github-token#" in sent
    assert "Maya moved the Acme report deadline" in sent
    assert request.headers["authorization"] == "Bearer sk-ant-oat-test-0000"  # its login
    # Nothing of the dream was captured: no hook ran, no transcript was written.
    assert not hooks_log.exists()
    assert not list((home / ".claude").glob("projects/**/*.jsonl"))
    assert not list(dreamt.store.records.meta_items("ingest.claude-code:"))  # no session ingested
    entry = last_entry(dreamt)
    assert (entry["synthesizer"], entry["model"]) == ("claude-code", "sonnet")
    assert (entry["input_tokens"], entry["output_tokens"]) == (4000, 900)
    assert entry["cost_usd"] > 0
    assert entry["inputs"]["synthesis"]["tries"] == 1
    log = runner.invoke(main, ["log", "-w", str(dreamt.root)]).output
    row = next(line for line in log.splitlines() if line.startswith(f"#{entry['id']} "))
    assert "claude-code" in row and "4000/900 tok" in row and f"${entry['cost_usd']:.4f}" in row


@pytest.mark.cli
def test_the_same_hooks_do_capture_an_ordinary_claude_run(
    dreamt,  # noqa: F811
    api,
    runner,
    monkeypatch,
    tmp_path,
):
    """The control: without dreamer's protections the installed hooks fire (the test can see)."""
    api.text("hi")
    with api.serve() as base_url:
        home = isolate(monkeypatch, tmp_path / "home", base_url)
        hooks_log = install_hooks(runner, dreamt, home)
        done = subprocess.run(
            [cli_path(), "-p", "--output-format", "json", "--tools", ""],
            input="say hi",
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert hooks_log.exists()  # SessionEnd ran `dream hook session-end` for this workspace


@pytest.mark.cli
def test_a_revision_round_goes_through_the_cli(dreamt, api, runner, monkeypatch, tmp_path):  # noqa: F811
    monkeypatch.setenv("DREAM_CLAUDE_CLI", cli_path())
    api.structured_output(COLLAPSED)
    api.structured_output(GOOD)
    with api.serve() as base_url:
        isolate(monkeypatch, tmp_path / "home", base_url)
        result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 0, result.output
    assert len(api.requests) == 2
    revision = api.requests[1].text()
    assert "<previous_draft>" in revision and "guards rejected" in revision
    entry = last_entry(dreamt)
    assert entry["outcome"] == "committed" and len(entry["critiques"]) == 1
    assert "Lisbon" in dreamt.memory_md.read_text()


@pytest.mark.slow
def test_a_missing_cli_fails_in_one_line_and_never_dreams_offline(dreamt, runner, monkeypatch):  # noqa: F811
    before = dreamt.memory_md.read_bytes()
    monkeypatch.setenv("DREAM_CLAUDE_CLI", "/nonexistent/bin/claude")
    result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 1
    line = one_error(result.output)
    assert "Claude Code's CLI" in line and "DREAM_CLAUDE_CLI" in line
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
    assert (last_entry(dreamt)["synthesizer"], last_entry(dreamt)["outcome"]) == (
        "claude-code",
        "failed",
    )


@pytest.mark.cli
def test_a_cli_without_a_login_fails_in_one_line(dreamt, runner, monkeypatch, tmp_path):  # noqa: F811
    monkeypatch.setenv("DREAM_CLAUDE_CLI", cli_path())
    isolate(monkeypatch, tmp_path / "home", None)  # no token, no login in the fresh home
    monkeypatch.setenv("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "1")
    before = dreamt.memory_md.read_bytes()
    result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 1
    line = one_error(result.output)
    assert "Claude Code cannot log in" in line and "/login" in line
    assert "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB" in line
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES


@pytest.mark.cli
def test_a_slow_answer_times_out_and_says_so(dreamt, api, runner, monkeypatch, tmp_path):  # noqa: F811
    monkeypatch.setenv("DREAM_CLAUDE_CLI", cli_path())
    monkeypatch.setenv("DREAM_TIMEOUT_SECONDS", "4")
    monkeypatch.setenv("DREAM_RETRIES", "0")
    api.timeout(delay=8)
    before = dreamt.memory_md.read_bytes()
    with api.serve() as base_url:
        isolate(monkeypatch, tmp_path / "home", base_url)
        result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 1
    line = one_error(result.output)
    assert "did not answer within 4 s" in line
    assert re.search(r"1 try took [45] s in all", line)
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES


@pytest.mark.slow
def test_a_cli_answer_that_is_not_json_fails_in_one_line(dreamt, runner, monkeypatch, tmp_path):  # noqa: F811
    fake_cli = tmp_path / "claude"
    fake_cli.write_text('#!/bin/sh\ncat > /dev/null\necho \'{"type": "result", "subt\'\n')
    fake_cli.chmod(0o755)
    monkeypatch.setenv("DREAM_CLAUDE_CLI", str(fake_cli))
    before = dreamt.memory_md.read_bytes()
    result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 1
    assert "not with a JSON result" in one_error(result.output)
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
    assert '"subt' in last_entry(dreamt)["raw"]


def test_dreamer_s_hook_does_nothing_inside_a_dream(tmp_path):
    ws_root = tmp_path / "ws"
    payload = json.dumps({"cwd": str(tmp_path), "transcript_path": str(tmp_path / "t.jsonl")})
    out = io.StringIO()
    code = hooks.run(
        "session-end",
        io.StringIO(payload),
        out,
        now=datetime(2026, 3, 12, tzinfo=UTC),
        environ={HOOKS_DISABLED: "1", "DREAM_WORKSPACE": str(ws_root)},
    )
    assert code == 0 and out.getvalue() == ""
    assert not ws_root.exists()  # not even the workspace a session-end would create


@pytest.mark.slow
def test_an_old_cli_without_the_options_says_to_update(dreamt, runner, monkeypatch, tmp_path):  # noqa: F811
    old_cli = tmp_path / "claude"
    old_cli.write_text("#!/bin/sh\necho \"error: unknown option '--json-schema'\" >&2\nexit 1\n")
    old_cli.chmod(0o755)
    monkeypatch.setenv("DREAM_CLAUDE_CLI", str(old_cli))
    result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 1
    line = one_error(result.output)
    assert "unknown option '--json-schema'" in line and "claude update" in line
    assert scratch_texts(dreamt) == LATER_NOTES


def _plain(blocks: list[dict]) -> list[dict]:
    """Content blocks without their cache marks."""
    return [
        {key: value for key, value in block.items() if key != "cache_control"} for block in blocks
    ]


@pytest.mark.cli
def test_a_revision_sends_the_first_call_s_prefix_for_the_prompt_cache(
    dreamt,  # noqa: F811
    api,
    runner,
    monkeypatch,
    tmp_path,
):
    monkeypatch.setenv("DREAM_CLAUDE_CLI", cli_path())
    api.structured_output(COLLAPSED)
    api.structured_output(GOOD)
    with api.serve() as base_url:
        isolate(monkeypatch, tmp_path / "home", base_url)
        result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 0, result.output
    first, revision = (request.json for request in api.requests)
    assert (first["system"], first["tools"]) == (revision["system"], revision["tools"])
    # One user message each (the CLI adds its budget line after it, past the cached prefix).
    [asked], [again] = (
        [m for m in r["messages"] if m["role"] == "user"] for r in (first, revision)
    )
    sent, resent = asked["content"], again["content"]
    # The first call's cache is written at the end of its message ...
    assert sent[-1]["cache_control"] == {"type": "ephemeral"}
    assert "Dream time:" in sent[-1]["text"]
    # ... and the revision's message holds those blocks byte for byte, ending where they
    # ended, so that prefix is read from the cache; only the draft and critiques are new.
    assert _plain(resent[: len(sent)]) == _plain(sent)
    assert len(resent) == len(sent) + 1
    assert "<previous_draft>" in resent[-1]["text"] and "Dream time:" not in resent[-1]["text"]
    assert resent[-1]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.cli
def test_an_unreachable_api_is_named_as_such_not_as_a_timeout(
    dreamt,  # noqa: F811
    runner,
    monkeypatch,
    tmp_path,
):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("DREAM_CLAUDE_CLI", cli_path())
    monkeypatch.setenv("DREAM_TIMEOUT_SECONDS", "6")
    monkeypatch.setenv("DREAM_RETRIES", "2")  # not retried: it is no timeout
    before = dreamt.memory_md.read_bytes()
    isolate(monkeypatch, tmp_path / "home", closed)
    result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 1
    line = one_error(result.output)
    assert f"the claude CLI could not reach {closed} (" in line
    assert "a refused connection or an unreachable host" in line
    assert "did not answer within" not in line
    assert last_entry(dreamt)["inputs"]["synthesis"]["tries"] == 1
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES


@pytest.mark.slow
def test_a_cli_that_crashes_is_reported_by_its_exception(dreamt, runner, monkeypatch, tmp_path):  # noqa: F811
    crashing = tmp_path / "claude"
    crashing.write_text(
        "#!/bin/sh\ncat > /dev/null\n"
        "echo 'Traceback (most recent call last):' >&2\n"
        "echo '  File \"/opt/claude/cli.py\", line 12, in <module>' >&2\n"
        "echo \"KeyError: 'oauthAccount'\" >&2\nexit 1\n"
    )
    crashing.chmod(0o755)
    monkeypatch.setenv("DREAM_CLAUDE_CLI", str(crashing))
    result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 1
    line = one_error(result.output)
    assert "the claude CLI failed (exit 1: KeyError: 'oauthAccount')" in line
    assert "Traceback" not in line


@pytest.mark.slow
def test_a_50_mb_cli_answer_fails_in_one_line_and_the_journal_keeps_a_bounded_head(
    dreamt,  # noqa: F811
    runner,
    monkeypatch,
    tmp_path,
):
    from dreamer.dream.synth.answer import KEPT_CHARS, MAX_BYTES

    finished = tmp_path / "finished"
    runaway = tmp_path / "claude"
    runaway.write_text(
        "#!/bin/sh\ncat > /dev/null\n"
        "yes 'the same words again and again, forty bytes' | head -c 50000000\n"
        f"touch {finished}\n"
    )
    runaway.chmod(0o755)
    monkeypatch.setenv("DREAM_CLAUDE_CLI", str(runaway))
    before = dreamt.memory_md.read_bytes()
    result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 1
    line = one_error(result.output)
    assert f"the claude CLI answered more than {MAX_BYTES / 1e6:g} MB" in line
    assert not finished.exists()  # the CLI was stopped, not read to its end
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
    raw = last_entry(dreamt)["raw"]
    assert raw.startswith("the same words again") and len(raw) < KEPT_CHARS + 100
    assert raw.endswith("more characters of the answer not kept]")


@pytest.mark.slow
def test_the_cli_runs_with_dreamer_s_hooks_disabled(dreamt, runner, monkeypatch, tmp_path):  # noqa: F811
    seen = tmp_path / "environment"
    probe = tmp_path / "claude"
    probe.write_text(
        f'#!/bin/sh\ncat > /dev/null\necho "hooks=$DREAM_HOOKS_DISABLED" > {seen}\necho nope\n'
    )
    probe.chmod(0o755)
    monkeypatch.setenv("DREAM_CLAUDE_CLI", str(probe))
    monkeypatch.delenv("DREAM_HOOKS_DISABLED", raising=False)
    result = dream(runner, dreamt, monkeypatch)
    assert result.exit_code == 1  # "nope" is no JSON result: the dream fails as it should
    assert seen.read_text() == "hooks=1\n"
