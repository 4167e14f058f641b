"""The captured sessions the quality bench writes: the real CLIs' fields, read back by dreamer.

``recorded/`` holds sessions the real Claude Code 2.1.197 wrote against the tests' fake API (a
Bash call; an Agent call with its subagent's file, an API error and a slash command), unchanged;
tests/codex_rollout.jsonl is a real Codex 0.169.0 rollout. The writer's lines must carry the
same fields as the recorded lines of the same kind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from dreamer_bench.transcripts import check_session, lines_of, write_session

from dreamer.agents import claude_code, codex
from dreamer.errors import UsageError

RECORDED = Path(__file__).resolve().parent / "recorded"
ROLLOUT = Path(__file__).resolve().parents[2] / "tests" / "codex_rollout.jsonl"
AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# Written only by `claude -p` (the recordings): an interactive session has no promptSource.
PRINT_MODE_ONLY = {"promptSource"}

SESSION = {
    "agent": "claude-code",
    "project": "webshop",
    "branch": "feat/coupons",
    "turns": [
        {
            "user": "Run the checkout tests",
            "ide_file": "src/checkout.ts",
            "reminder": "The user opened {home}/code/webshop/src/checkout.ts.",
            "tools": [{"name": "Bash", "input": {"command": "pnpm test"}, "output": "3 failed"}],
            "assistant": "Three checkout tests fail.",
        },
        {"command": "/review src", "assistant": "Two issues in src."},
        {"bash": {"command": "git status", "output": "clean"}},
        {"user": "Deploy to staging", "api_error": "API Error: 529 Overloaded"},
        {
            "user": "Run everything",
            "tools": [{"name": "Bash", "input": {"command": "pnpm test"}}],
            "interrupted": True,
        },
        {
            "compact": "We worked on coupons.",
            "user": "Where are the routes?",
            "subagent": {"type": "Explore", "task": "Find routes", "answer": "In src/routes."},
            "assistant": "The routes are in src/routes.",
        },
    ],
}


def _kind(line: dict[str, Any]) -> str | None:
    """A Claude Code line's kind, for comparing like with like."""
    if line.get("type") == "assistant":
        if line.get("isApiErrorMessage"):
            return "api_error"
        return "sub_assistant" if line.get("isSidechain") else "assistant"
    if line.get("type") != "user":
        return None
    if line.get("isSidechain"):
        return "sub_prompt"
    if line.get("isMeta"):
        return "meta"
    if line.get("isCompactSummary"):
        return None  # not recorded (a -p session cannot compact against the fake): see README
    content = line["message"]["content"]
    text = content if isinstance(content, str) else json.dumps(content)
    if text.startswith("<bash-") or "[Request interrupted" in text:
        return None  # interactive-only markup, not recorded: written as documented
    if "toolUseResult" in line:
        agent = isinstance(line["toolUseResult"], dict) and "agentId" in line["toolUseResult"]
        return "agent_result" if agent else "tool_result"
    if isinstance(content, str) and content.startswith("<command-name>"):
        return "command"
    return "prompt"


def _keys(paths: list[Path]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in paths:
        for line in lines_of(path):
            kind = _kind(line)
            if kind is not None:
                out.setdefault(kind, set()).update(set(line) - PRINT_MODE_ONLY)
                if kind in ("assistant", "sub_assistant"):
                    out.setdefault("message", set()).update(line["message"])
    return out


def test_claude_lines_carry_the_recorded_fields_of_their_kind(tmp_path):
    written = write_session(check_session(SESSION, "test"), tmp_path, AT, "t")
    ours = _keys(written.paths)
    recorded = _keys(sorted(RECORDED.glob("claude-2.1.197-*.jsonl")))
    for kind in ("prompt", "tool_result", "assistant", "api_error", "meta", "command"):
        assert ours[kind] == recorded[kind], kind
    for kind in ("sub_prompt", "sub_assistant", "agent_result", "message"):
        assert ours[kind] == recorded[kind], kind
    meta = json.loads(next(written.transcript.parent.rglob("*.meta.json")).read_text())
    (recorded_meta,) = RECORDED.glob("*.meta.json")
    assert set(meta) == set(json.loads(recorded_meta.read_text()))


def test_claude_session_lies_where_the_cli_puts_it_and_reads_back(tmp_path):
    written = write_session(check_session(SESSION, "test"), tmp_path, AT, "t")
    folder = re.sub(r"[^A-Za-z0-9]", "-", str(tmp_path / "code" / "webshop"))
    project = tmp_path / ".claude" / "projects" / folder
    assert written.transcript.parent == project
    assert written.subagents == sorted(written.transcript.with_suffix("").rglob("agent-*.jsonl"))
    assert claude_code.is_session(written.transcript)
    exchanges, _ = claude_code.read_session(written.transcript, None, final=True)
    prompts = [e.user for e in exchanges]
    assert any("Run the checkout tests" in p for p in prompts)
    assert "/review src" in prompts and any("Deploy to staging" in p for p in prompts)
    assert all(e.git_branch == "feat/coupons" for e in exchanges)
    assert all(e.cwd == str(tmp_path / "code" / "webshop") for e in exchanges)
    assert all(e.at > AT for e in exchanges)
    lines = list(lines_of(written.transcript))
    text = json.dumps(lines)
    assert f"{tmp_path}/code/webshop/src/checkout.ts in the IDE" in text  # {home} filled in
    assert "<system-reminder>" in text and "[Request interrupted by user for tool use]" in text
    assert any(line.get("isCompactSummary") for line in lines)
    uuids = [line["uuid"] for line in lines if "uuid" in line]
    assert len(uuids) == len(set(uuids))
    parents = [
        line.get("parentUuid") for line in lines if line.get("type") in ("user", "assistant")
    ]
    assert all(p is None or p in uuids for p in parents)
    (sub,) = written.subagents
    (answer,) = claude_code.read_session(sub, None, final=True)[0]
    assert answer.subagent == "Explore" and "In src/routes." in answer.assistant


def test_the_same_session_is_written_the_same_bytes(tmp_path):
    one = write_session(check_session(SESSION, "t"), tmp_path / "a", AT, "t")
    two = write_session(check_session(SESSION, "t"), tmp_path / "b", AT, "t")
    assert one.transcript.name == two.transcript.name
    a = one.transcript.read_text().replace(str(tmp_path / "a"), "H")
    assert a == two.transcript.read_text().replace(str(tmp_path / "b"), "H")


def test_codex_lines_carry_only_recorded_fields_and_read_back(tmp_path):
    spec = {
        "agent": "codex",
        "project": "etl",
        "turns": [
            {
                "user": "Run the nightly job",
                "tools": [
                    {"name": "exec_command", "input": {"cmd": "make nightly"}, "output": "ok"}
                ],
                "assistant": "The job loaded 120 rows.",
            },
            {
                "user": "Stop that",
                "tools": [{"name": "Bash", "input": {"cmd": "sleep 9"}}],
                "interrupted": True,
            },
        ],
    }
    written = write_session(check_session(spec, "t"), tmp_path, AT, "t")
    assert written.transcript.parent == tmp_path / ".codex" / "sessions" / "2026" / "03" / "02"
    assert codex.is_rollout(written.transcript)

    def kinds(path: Path) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for line in lines_of(path):
            payload = line["payload"]
            item = payload.get("item", {}).get("type", "")
            kind = f"{line['type']}/{payload.get('type', '')}/{item}"
            out.setdefault("line", set()).update(line)
            out.setdefault(kind, set()).update(payload)
            if item:
                out.setdefault(f"item/{item}", set()).update(payload["item"])
        return out

    ours, real = kinds(written.transcript), kinds(ROLLOUT)
    documented = {
        "session_meta//": {"git"},
        "event_msg/turn_aborted/": {"type", "turn_id", "reason"},
    }
    for kind, keys in ours.items():
        extra = keys - real.get(kind, set()) - documented.get(kind, set())
        assert not extra, (kind, extra)
    exchanges, _ = codex.read_rollout(written.transcript, None, final=True)
    assert [e.user for e in exchanges] == ["Run the nightly job", "Stop that"]
    assert exchanges[0].git_branch == "main" and "120 rows" in exchanges[0].assistant


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"agent": "cursor", "project": "x", "turns": [{"user": "u"}]}, "session.agent"),
        ({"agent": "codex", "project": "a b", "turns": [{"user": "u"}]}, "session.project"),
        ({"agent": "codex", "project": "x", "turns": []}, "session.turns"),
        ({"agent": "codex", "project": "x", "turns": [{"assistant": "a"}]}, "needs user"),
        (
            {"agent": "codex", "project": "x", "turns": [{"user": "u", "ide_file": "a"}]},
            "Claude Code only",
        ),
        (
            {"agent": "codex", "project": "x", "turns": [{"user": "u", "colour": 1}]},
            "unknown key(s) colour",
        ),
        (
            {"agent": "codex", "project": "x", "turns": [{"user": "u", "tools": [{"name": "B"}]}]},
            "needs name and an input table",
        ),
    ],
)
def test_a_bad_session_is_one_error_naming_the_field(spec, message):
    with pytest.raises(UsageError, match="events\\[3\\]") as caught:
        check_session(spec, "events[3]")
    assert message in str(caught.value)


@pytest.mark.cli
def test_a_fresh_recording_of_the_real_cli_has_the_fields_recorded_here(tmp_path, monkeypatch):
    """Record a Bash-calling session with the installed Claude Code against the fake API and
    compare its fields with the committed recording (so a new CLI version is noticed)."""
    from claude_cli import cli_path, isolate
    from fake_anthropic import FakeAnthropic, Scripted, message_body

    claude = cli_path()
    home = isolate(monkeypatch, tmp_path / "home", None)
    project = home / "code" / "webshop"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True)
    fake = FakeAnthropic()

    def answer(recorded: Any) -> Scripted:
        body = recorded.json
        if not body.get("tools"):
            return Scripted(200, message_body([{"type": "text", "text": "title"}]))
        if "tool_result" in json.dumps(body["messages"][-1]):
            return Scripted(200, message_body([{"type": "text", "text": "3 passed."}]))
        call = {
            "type": "tool_use",
            "id": "toolu_01",
            "name": "Bash",
            "input": {"command": "echo 3 passed", "description": "run tests"},
        }
        return Scripted(
            200,
            message_body(
                [{"type": "text", "text": "Running."}, call],
                stop_reason="tool_use",
                message_id="msg_a",
            ),
        )

    for _ in range(20):
        fake.push(answer)
    with fake.serve() as base_url:
        isolate(monkeypatch, home, base_url)
        done = subprocess.run(
            [
                claude,
                "-p",
                "run the tests",
                "--session-id",
                str(uuid.uuid4()),
                "--allowedTools",
                "Bash",
            ],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=180,
            env=dict(os.environ),
        )
    assert done.returncode == 0, done.stderr
    (fresh,) = (home / ".claude" / "projects").rglob("*.jsonl")
    kept = tmp_path / "kept.jsonl"
    shutil.copy(fresh, kept)
    now, before = _keys([kept]), _keys([RECORDED / "claude-2.1.197-bash.jsonl"])
    for kind in ("prompt", "tool_result", "assistant", "message"):
        assert now[kind] == before[kind], kind
