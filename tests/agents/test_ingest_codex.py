"""Codex CLI rollouts: each turn stored once, without tool output, harness markup or secrets.

tests/codex_rollout.jsonl is a rollout file written by the real Codex CLI 0.169.0 (against the
loopback fake in tests/fake_openai.py): a turn that runs ``echo TOOL-OUTPUT-SENTINEL`` through
``exec_command`` and answers, then a second turn from ``codex exec resume``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dreamer.agents import codex
from dreamer.agents.ingest import ingest
from dreamer.cli import main

ROLLOUT = Path(__file__).resolve().parents[1] / "codex_rollout.jsonl"
SECRET = "sk-ant-api03-" + "Zq7" * 30  # the shape of a real key, so redaction must catch it


def lines() -> list[bytes]:
    return ROLLOUT.read_bytes().splitlines(keepends=True)


def settle(path: Path, now) -> None:
    old = now.timestamp() - 3600
    os.utime(path, (old, old))


def rollout_texts(ws) -> list[str]:
    return [c.text for c in ws.store.crystals.select() if (c.origin or "").startswith("codex:")]


def test_the_real_rollout_gives_two_clean_exchanges(ws, now, tmp_path):
    path = tmp_path / "rollout.jsonl"
    shutil.copy(ROLLOUT, path)
    settle(path, now)
    report = ingest(ws, [path], now)
    # Each turn: the person's words and the assistant's answer, each with who said it.
    assert report.files[0].kind == "codex" and report.created == 4
    asked, answered, asked_again, answered_again = rollout_texts(ws)
    assert asked == "Run echo for me please"
    assert answered.startswith("I ran echo; the word was printed.")
    assert "[tool:" not in answered  # a tool call is kept only with an outcome
    assert (asked_again, answered_again) == (
        "And a second question",
        "Second answer: remember Tuesdays.",
    )
    said = [c.speaker for c in ws.store.crystals.select()]
    assert said == ["user", "assistant", "user", "assistant"]
    everything = "\n".join(rollout_texts(ws))
    for bad in ("Chunk ID", "Process exited", "environment_context", "skills_instructions"):
        assert bad not in everything, bad  # tool output and harness markup stay out
    origins = [c.origin for c in ws.store.crystals.select()]
    session = "01a21352-f9a3-78d3-b712-d7dcd84fcc62"
    assert origins[0] == f"codex:{session}:01a21352-f9b0-7ff2-9de0-e434edb15e1e in /tmp/cx/proj2"


def test_a_growing_rollout_stores_each_exchange_exactly_once(ws, now, tmp_path):
    path = tmp_path / "growing.jsonl"
    whole = lines()
    cut_mid_line = b"".join(whole[:15]) + whole[15][:40]  # turn 1 open, a line half written
    path.write_bytes(cut_mid_line)
    ingest(ws, [path], now, live=True)
    assert rollout_texts(ws) == []  # the turn is not over yet: nothing half stored
    for count in (19, 22, 26, len(whole)):
        path.write_bytes(b"".join(whole[:count]))
        ingest(ws, [path], now, live=True)  # as the Stop hook does, turn after turn
    settle(path, now)
    ingest(ws, [path], now, live=True)
    ingest(ws, [path], now)  # and a bulk import of the same file later
    texts = rollout_texts(ws)
    assert len(texts) == 4 and len(set(texts)) == 4  # two turns, each a prompt and an answer
    saved = json.loads(ws.store.records.get_meta(f"ingest.codex:{path.resolve()}"))
    assert saved["offset"] == path.stat().st_size


def test_an_open_turn_waits_while_live_and_comes_in_when_final(tmp_path):
    path = tmp_path / "open.jsonl"
    path.write_bytes(b"".join(lines()[:17]))  # turn 1 answered, task_complete not yet written
    exchanges, cursor = codex.read_rollout(path)
    assert exchanges == [] and cursor.offset < path.stat().st_size
    exchanges, cursor = codex.read_rollout(path, cursor, final=True)
    assert [x.user for x in exchanges] == ["Run echo for me please"]
    again, _ = codex.read_rollout(path, cursor, final=True)
    assert again == []


def test_a_rewritten_rollout_repeats_nothing(ws, now, tmp_path):
    path = tmp_path / "rewritten.jsonl"
    shutil.copy(ROLLOUT, path)
    ingest(ws, [path], now, live=True)
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(ROLLOUT.read_bytes())
    os.replace(replacement, path)  # another inode, the same turns
    ingest(ws, [path], now, live=True)
    assert len(rollout_texts(ws)) == 4


def test_secrets_in_a_rollout_are_redacted_before_they_land(ws, now, tmp_path):
    path = tmp_path / "secret.jsonl"
    text = ROLLOUT.read_text().replace("And a second question", f"My key is {SECRET}, keep it")
    path.write_text(text)
    ingest(ws, [path], now)
    everything = "\n".join(rollout_texts(ws))
    assert "My key is" in everything and SECRET not in everything


def test_bad_lines_are_skipped_and_counted(tmp_path):
    path = tmp_path / "bad.jsonl"
    whole = lines()
    path.write_bytes(b"".join(whole[:3]) + b"{not json\n" + b"".join(whole[3:]))
    exchanges, cursor = codex.read_rollout(path)
    assert len(exchanges) == 2 and cursor.malformed == 1


def test_dream_ingest_takes_a_sessions_folder(tmp_path, runner, now):
    folder = tmp_path / "sessions" / "2026" / "11" / "25"
    folder.mkdir(parents=True)
    shutil.copy(ROLLOUT, folder / "rollout-2026-11-25T15-28-54-x.jsonl")
    settle(folder / "rollout-2026-11-25T15-28-54-x.jsonl", now)
    ws = tmp_path / "ws"
    result = runner.invoke(main, ["ingest", str(tmp_path / "sessions"), "-w", str(ws)])
    assert result.exit_code == 0, result.output
    from dreamer import Workspace

    with Workspace.open(ws) as opened:
        assert len(rollout_texts(opened)) == 4


@pytest.mark.parametrize("first", [b"", b'{"type": "user", "sessionId": "x"}\n'])
def test_other_jsonl_files_are_not_rollouts(tmp_path, first):
    path = tmp_path / "x.jsonl"
    path.write_bytes(first)
    assert not codex.is_rollout(path)


def test_the_stop_hook_stores_the_turn_that_just_ended(tmp_path, now, monkeypatch):
    """What Codex's Stop hook runs in the background: the rollout's finished turns go in."""
    import io

    from dreamer import Workspace
    from dreamer.agents import hooks

    path = tmp_path / "rollout-2026-11-25T15-28-54-x.jsonl"
    shutil.copy(ROLLOUT, path)
    ws_path = tmp_path / "ws"
    Workspace.open(ws_path).close()
    monkeypatch.setenv("DREAM_WORKSPACE", str(ws_path))
    payload = {
        "session_id": "01a21352-f9a3-78d3-b712-d7dcd84fcc62",
        "turn_id": "01a21352-fbd1-7541-ab0a-c1ac7e14c8d3",
        "transcript_path": str(path),
        "cwd": str(tmp_path),
        "hook_event_name": "Stop",
    }
    out = io.StringIO()
    assert hooks.run("stop", io.StringIO(json.dumps(payload)), out, now, background=True) == 0
    assert out.getvalue() == ""  # Stop answers nothing: the turn ends as it was
    with Workspace.open(ws_path, create=False) as ws:
        assert len(rollout_texts(ws)) == 4
    log = (ws_path / "memory" / "hooks.log").read_text()
    assert "stored 4 new crystals" in log and "Traceback" not in log  # 2 prompts, 2 answers


@pytest.mark.slow
def test_the_stop_hook_waits_for_codex_to_close_the_turn(tmp_path, now, monkeypatch):
    """Codex runs Stop before it writes task_complete: the turn is stored whole, once."""
    import io
    import threading

    from dreamer import Workspace
    from dreamer.agents import hooks

    whole = lines()
    path = tmp_path / "rollout-2026-11-25T15-28-54-y.jsonl"
    path.write_bytes(b"".join(whole[:-1]))  # turn 2 answered, its task_complete not yet written
    ws_path = tmp_path / "ws"
    Workspace.open(ws_path).close()
    monkeypatch.setenv("DREAM_WORKSPACE", str(ws_path))
    payload = {"turn_id": "01a21352-fbd1-7541-ab0a-c1ac7e14c8d3", "transcript_path": str(path)}

    def codex_finishes() -> None:
        with path.open("ab") as handle:
            handle.write(whole[-1])

    writer = threading.Timer(1.0, codex_finishes)  # a real writer, in real time
    writer.start()
    try:
        hooks.run("stop", io.StringIO(json.dumps(payload)), io.StringIO(), now, background=True)
    finally:
        writer.join()
    with Workspace.open(ws_path, create=False) as ws:
        texts = rollout_texts(ws)
    assert texts[-2:] == ["And a second question", "Second answer: remember Tuesdays."]
    assert len(texts) == 4  # two turns, each the person's words and the answer


def test_an_interrupted_turn_keeps_the_prompt_and_older_prompt_events_count(tmp_path):
    """``turn_aborted`` ends a turn like ``task_complete``; releases before 0.169 wrote the
    prompt as an ``event_msg`` ``user_message`` instead of an ``item_completed`` UserMessage."""

    def line(kind: str, payload: dict, second: int) -> bytes:
        at = f"2026-03-01T10:00:0{second}.000Z"
        return (json.dumps({"timestamp": at, "type": kind, "payload": payload}) + "\n").encode()

    meta = lines()[0]
    turn = {"type": "task_started", "turn_id": "t-1"}
    path = tmp_path / "older.jsonl"
    path.write_bytes(
        meta
        + line("event_msg", turn, "2026-03-01T10:00:00.000Z")
        + line(
            "event_msg",
            {"type": "user_message", "message": "Stop, wrong repo"},
            "2026-03-01T10:00:01.000Z",
        )
        + line("response_item", {"type": "reasoning", "summary": []}, "2026-03-01T10:00:02.000Z")
        + line(
            "event_msg",
            {"type": "turn_aborted", "reason": "interrupted"},
            "2026-03-01T10:00:03.000Z",
        )
    )
    exchanges, cursor = codex.read_rollout(path)
    assert [(x.uuid, x.user, x.assistant) for x in exchanges] == [("t-1", "Stop, wrong repo", "")]
    assert exchanges[0].text() == "User: Stop, wrong repo"
    assert cursor.offset == path.stat().st_size and cursor.skipped == {"reasoning": 1}
