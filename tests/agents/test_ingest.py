"""Ingesting transcripts, memory files and text as crystals: idempotent, per-file errors."""

from __future__ import annotations

import json
import os

import pytest

from dreamer.agents.ingest import ingest
from dreamer.cli import main
from dreamer.support import tokens

TOOL_OUTPUT = "".join(f"test raft::snapshot::case_{i} ... ok ({i} ms)\n" for i in range(600))


def claude_code_lines() -> list[dict]:
    """A Claude Code session log as it appears in ~/.claude/projects/<project>/<id>.jsonl."""
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/ada/src/ferrous",
        "sessionId": "5a0ddcd0-5487",
        "version": "2.0.74",
        "gitBranch": "main",
    }
    return [
        {"type": "summary", "summary": "Fix flaky replication test", "leafUuid": "a3"},
        {
            **base,
            "parentUuid": None,
            "type": "user",
            "uuid": "u1",
            "timestamp": "2026-02-03T09:15:02.118Z",
            "message": {
                "role": "user",
                "content": "The replication test keeps timing out on CI. "
                "Can you look at raft_snapshot_test?",
            },
        },
        {
            **base,
            "parentUuid": "u1",
            "type": "assistant",
            "uuid": "a1",
            "timestamp": "2026-02-03T09:15:05.000Z",
            "requestId": "req_1",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "stop_reason": None,
                "content": [
                    {
                        "type": "thinking",
                        "signature": "c2ln",
                        "thinking": "PRIVATE-REASONING: maybe the deadline",
                    }
                ],
            },
        },
        {
            **base,
            "parentUuid": "a1",
            "type": "assistant",
            "uuid": "a2",
            "timestamp": "2026-02-03T09:15:06.000Z",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {
                            "command": "cargo test raft_snapshot_test",
                            "description": "Run it",
                        },
                    }
                ],
            },
        },
        {
            **base,
            "parentUuid": "a2",
            "type": "user",
            "uuid": "u2",
            "timestamp": "2026-02-03T09:16:40.000Z",
            "toolUseResult": {"stdout": "..."},
            "message": {
                "role": "user",
                "content": [
                    {"tool_use_id": "toolu_1", "type": "tool_result", "content": TOOL_OUTPUT}
                ],
            },
        },
        {
            **base,
            "parentUuid": "u2",
            "type": "assistant",
            "uuid": "a3",
            "timestamp": "2026-02-03T09:17:00.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": "The snapshot transfer has a 5 s deadline and the CI "
                        "snapshot is 40 MB. I raised the deadline to 30 s.",
                    }
                ],
            },
        },
        {
            **base,
            "parentUuid": "a3",
            "type": "user",
            "uuid": "u3",
            "isMeta": True,
            "timestamp": "2026-02-03T09:18:00.000Z",
            "message": {"role": "user", "content": "<command-name>/clear</command-name>"},
        },
        {
            **base,
            "parentUuid": "a3",
            "type": "user",
            "uuid": "u4",
            "timestamp": "2026-02-03T10:02:00.000Z",
            "message": {
                "role": "user",
                "content": "Thanks. Next: document the gossip protocol for the Grafana dashboards.",
            },
        },
    ]


@pytest.fixture
def transcript(tmp_path):
    path = tmp_path / "in" / "5a0ddcd0-5487.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(line) + "\n" for line in claude_code_lines()))
    return path


def crystals(ws, source=None):
    return [
        (c.id, c.text, c.created_at, c.source, c.semantic_type)
        for c in ws.store.crystals.select(sources=[source] if source else None)
    ]


def test_a_claude_code_transcript_becomes_dated_session_crystals(ws, now, transcript):
    report = ingest(ws, [transcript], now)

    assert report.failed == [] and report.files[0].kind == "claude-code"
    rows = crystals(ws, "sessions")
    # The first exchange is the person's words and the answer, the second only the prompt.
    assert [created for _, _, created, _, _ in rows] == [
        "2026-02-03T09:15:02Z",
        "2026-02-03T09:15:02Z",
        "2026-02-03T10:02:00Z",
    ]
    first, answer = rows[0][1], rows[1][1]
    assert first.startswith("The replication test keeps timing out on CI.")
    assert "I raised the deadline to 30 s." in answer and "[tool:" not in answer
    assert [c.speaker for c in ws.store.crystals.select()] == ["user", "assistant", "user"]
    text = "\n".join(row[1] for row in rows)
    assert "PRIVATE-REASONING" not in text  # thinking stripped
    assert "/clear" not in text  # meta lines skipped
    assert "case_599" not in text  # tool output is dropped; the call stays, one line
    assert tokens.count(first) <= 400


def test_ingesting_twice_gives_the_same_crystals(ws, now, transcript):
    ingest(ws, [transcript], now)
    before = crystals(ws)

    again = ingest(ws, [transcript], now)

    assert crystals(ws) == before
    # A Claude Code session is read from where the last ingest stopped: nothing new.
    assert again.created == 0 and again.files[0].crystals == 0


@pytest.mark.slow
def test_ingested_content_is_found_by_dream_search(ws, now, transcript, runner, monkeypatch):
    ingest(ws, [transcript], now)

    found = runner.invoke(
        main,
        ["search", "snapshot deadline on CI", "--json", "-w", str(ws.root)],
        catch_exceptions=False,
    )
    hits = json.loads(found.output)
    assert hits and hits[0]["source"] == "sessions" and "30 s" in hits[0]["text"]

    monkeypatch.setenv("DREAM_SEARCH_SOURCES", "memory")  # memory.search.sources decides
    hidden = runner.invoke(
        main,
        ["search", "snapshot deadline on CI", "--json", "-w", str(ws.root)],
        catch_exceptions=False,
    )
    assert json.loads(hidden.output) == []


def test_an_anthropic_messages_array_is_a_transcript(ws, now, tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(
        json.dumps(
            [
                {"role": "user", "content": "What's the Nord Pool price rule for the heat pump?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hidden", "signature": "x"},
                        {
                            "type": "text",
                            "text": "Run it when the spot price is under 0.80 NOK/kWh.",
                        },
                    ],
                },
            ]
        )
    )
    os.utime(path, (1_767_225_600, 1_767_225_600))  # 2026-01-01T00:00:00Z

    ingest(ws, [path], now)

    (row,) = crystals(ws, "sessions")
    assert row[1] == (
        "User: What's the Nord Pool price rule for the heat pump?\n"
        "Assistant: Run it when the spot price is under 0.80 NOK/kWh."
    )
    assert row[2] == "2026-01-01T00:00:00Z"  # no timestamps inside: the file's own date


@pytest.mark.parametrize(
    ("kind", "semantic_type"),
    [
        ("feedback", "directive"),
        ("user", "world_fact"),
        ("project", "experience"),
        ("reference", "world_fact"),
    ],
)
def test_memory_files_are_typed_from_their_frontmatter(ws, now, tmp_path, kind, semantic_type):
    path = tmp_path / f"{kind}_note.md"
    path.write_text(
        f'---\nname: {kind} note\ndescription: "A {kind} memory"\ntype: {kind}\n'
        "---\n\nThe Grafana board for Ferrous lives in the SRE folder.\n"
    )

    report = ingest(ws, [path], now)

    assert report.files[0].kind == "memory"
    (row,) = crystals(ws, "memory")
    assert row[1] == (
        f"{kind} note: A {kind} memory\n\nThe Grafana board for Ferrous lives in the SRE folder."
    )
    assert row[4] == semantic_type


def test_other_text_is_chunked(ws, now, tmp_path):
    path = tmp_path / "handbook.txt"
    path.write_text(" ".join(f"Rule {i}: write the why in every pull request." for i in range(300)))

    report = ingest(ws, [path], now)

    assert report.files[0].kind == "text" and report.files[0].crystals > 3
    assert all(tokens.count(row[1]) <= 400 for row in crystals(ws, "memory"))


def test_bad_files_are_reported_one_by_one_and_the_rest_still_go_in(
    ws, tmp_path, transcript, runner
):
    broken = tmp_path / "broken.json"
    broken.write_text('[{"role": "user", "content": "unterminated')
    bad_line = tmp_path / "bad.jsonl"
    bad_line.write_text('{"role": "user", "content": "fine"}\nnot json at all\n')
    binary = tmp_path / "latin1.md"
    binary.write_bytes("caf\xe9 notes\n".encode("latin-1"))
    missing = tmp_path / "nope.jsonl"

    result = runner.invoke(
        main,
        [
            "ingest",
            str(broken),
            str(bad_line),
            str(binary),
            str(missing),
            str(transcript),
            "-w",
            str(ws.root),
        ],
    )

    assert result.exit_code == 1
    assert f"Error: {broken}: invalid JSON at line 1" in result.stderr
    assert f"Error: {bad_line}: line 2 is not valid JSON" in result.stderr
    assert f"Error: {binary}: not UTF-8 text" in result.stderr
    assert f"Error: {missing}: no such file or folder" in result.stderr
    assert "Ingested 1 of 5 files" in result.stdout
    assert len(crystals(ws, "sessions")) == 3  # two prompts and an answer


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_reported(ws, now, tmp_path):
    path = tmp_path / "secret.md"
    path.write_text("hidden")
    path.chmod(0)
    report = ingest(ws, [path], now)
    assert "cannot read it" in report.failed[0].error


def test_a_folder_is_walked_and_progress_is_reported(ws, now, transcript):
    seen: list[tuple[int, int]] = []
    (transcript.parent / ".hidden.md").write_text("not for ingest")
    (transcript.parent / "notes.md").write_text("Ada prefers uv over pip.\n")

    report = ingest(
        ws, [transcript.parent], now, progress=lambda done, total: seen.append((done, total))
    )

    assert [f.path for f in report.files] == [str(transcript), str(transcript.parent / "notes.md")]
    total = transcript.stat().st_size + len("Ada prefers uv over pip.\n")
    assert seen[-1] == (total, total)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_dream_ingest_json(ws, transcript, runner):
    result = runner.invoke(
        main, ["ingest", str(transcript), "--json", "-w", str(ws.root)], catch_exceptions=False
    )
    data = json.loads(result.output)
    assert result.exit_code == 0
    assert data["created"] == 3 and data["failed"] == 0  # two prompts and an answer
    assert data["files"][0]["kind"] == "claude-code"


def test_a_log_of_only_events_is_empty_but_a_log_of_strangers_is_an_error(ws, now, tmp_path):
    events = tmp_path / "summary-only.jsonl"
    events.write_text('{"type": "summary", "summary": "Gossip docs", "leafUuid": "x"}\n')
    strangers = tmp_path / "metrics.jsonl"
    strangers.write_text('{"cpu": 0.4}\n{"cpu": 0.5}\n')

    report = ingest(ws, [events, strangers], now)

    assert report.files[0].error is None and report.files[0].crystals == 0
    assert "no line is a chat message" in report.files[1].error
