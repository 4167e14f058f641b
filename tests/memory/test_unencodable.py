"""Text no store can hold (a lone surrogate from a JSON ``\\ud800`` escape, a byte the command
line could not decode) gets one clear error at every door, and breaks nothing after it."""

from __future__ import annotations

import json

import pytest

from dreamer.agents import tools
from dreamer.agents.ingest import ingest
from dreamer.cli import main
from dreamer.dream import pins
from dreamer.errors import UsageError

LONE = "deploy key \ud800 rotates"


def still_works(ws, now):
    """A note and a search after the refusal: both go through, and nothing of it was kept."""
    crystal_id = ws.note("the staging database moved to eu-west", at=now)
    assert [hit.id for hit in ws.search("staging database", now=now)][:1] == [crystal_id]
    ws.store.settle()  # the search log is written, as the next write would
    assert all("\ud800" not in c.text for c in ws.store.crystals.select())


@pytest.mark.parametrize(
    "door",
    [
        lambda ws, now: ws.search(LONE, now=now),
        lambda ws, now: ws.note(LONE, at=now),
        lambda ws, now: ws.note("fine words", about=LONE, at=now),
        lambda ws, now: ws.note("fine words", replaces=LONE, at=now),
        lambda ws, now: pins.pin(ws, LONE, now),
        lambda ws, now: ws.forget([], reason=LONE, now=now),
    ],
    ids=["search", "note", "about", "replaces", "pin", "forget-reason"],
)
def test_each_api_door_refuses_it_in_one_line(ws, now, door):
    with pytest.raises(UsageError, match=r"lone surrogate \(U\+D800 at character 11\)"):
        door(ws, now)
    still_works(ws, now)


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("working_memory_note", {"note": LONE}, "note"),
        ("working_memory_note", {"note": "fine words", "about": LONE}, "about"),
        ("memory_search", {"query": LONE}, "query"),
        ("memory_forget", {"query": LONE}, "query"),
        ("memory_feel", {"hormone": "dopamine", "delta": 0.1, "reason": LONE}, "reason"),
    ],
)
def test_each_tool_refuses_it_naming_the_argument(ws, now, name, arguments, field):
    block = {"type": "tool_use", "id": "t1", "name": name, "input": arguments}
    result = tools.handle(ws, block, now=now)
    assert result["is_error"] is True
    assert result["content"] == (
        f"Error: the {name} argument {field!r} holds a lone surrogate (U+D800 at character 11),"
        " which UTF-8 cannot hold (surrogates are halves of a UTF-16 pair); pass valid UTF-8"
    )
    still_works(ws, now)


def test_a_search_with_it_no_longer_breaks_every_later_write(ws, now):
    """The case found: the refused query used to wait in the search log, and every later
    write of the workspace failed on it with UnicodeEncodeError."""
    with pytest.raises(UsageError):
        ws.search("\ud800", now=now)
    for n in range(3):
        ws.note(f"note number {n} after the bad search", at=now)
    still_works(ws, now)


def test_an_undecodable_command_line_byte_is_named_as_a_byte(tmp_path, runner):
    bad = b"x\xffy".decode("utf-8", "surrogateescape")  # what Python makes of such an argv
    for args in (["note", bad], ["search", bad], ["pin", bad]):
        done = runner.invoke(main, [*args, "-w", str(tmp_path / "ws")])
        assert done.exit_code == 2, done.output
        assert "holds the byte 0xFF (at character 1), which is not UTF-8" in done.output
        assert "Traceback" not in done.output


def test_a_transcript_with_it_is_one_failed_file_and_the_others_go_in(ws, tmp_path, now):
    bad = tmp_path / "bad.jsonl"
    turn = {"role": "user", "content": "remember: the deploy key \ud800 rotates on Mondays"}
    bad.write_text(json.dumps(turn) + "\n", encoding="utf-8")  # ascii: the escape survives
    good = tmp_path / "good.md"
    good.write_text("The release train leaves every second Tuesday.\n", encoding="utf-8")
    report = ingest(ws, [bad, good], now)
    (failed,) = report.failed
    assert failed.error.startswith(f"{bad}: holds a lone surrogate (U+D800)")
    assert [c.text for c in ws.store.crystals.select()] == [
        "The release train leaves every second Tuesday."
    ]
    still_works(ws, now)
