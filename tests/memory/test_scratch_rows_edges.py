"""The scratch as rows of PostgreSQL at the edges mutation testing found open.

A note's link to the memory it corrects survives the rows; an empty scratch has no time of last
change; and a rewrite (a forget, a redaction) reaches what the local ``memory/scratch.md`` still
holds, notes not moved yet and hand-written lines, while a dry run changes nothing anywhere.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer import Workspace
from dreamer.errors import ScratchError
from dreamer.memory import scratch
from dreamer.memory.scratch import Note
from dreamer.support.times import iso

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL


@pytest.fixture
def ws(pg_database, tmp_path):
    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}) as opened:
        opened.init()
        yield opened


def test_a_note_keeps_what_it_is_about_and_what_it_replaces(ws, now):
    ws.scratch.append(
        Note(
            text="Maya moved to Lisbon",
            at=now,
            importance=0.8,
            about="#12",
            replaces="lives in Porto",
        )
    )
    (note,) = ws.scratch.notes()
    assert (note.text, note.about, note.replaces) == (
        "Maya moved to Lisbon",
        "#12",
        "lives in Porto",
    )


def test_an_empty_scratch_has_no_time_of_last_change_and_a_full_one_its_newest_note(ws, now):
    assert ws.scratch.modified() is None
    ws.scratch.append(Note(text="later", at=now + timedelta(minutes=5), importance=0.5))
    ws.scratch.append(Note(text="earlier", at=now, importance=0.5))
    assert ws.scratch.modified() == iso(now + timedelta(minutes=5))


def test_a_rewrite_reaches_the_local_file_and_a_dry_run_changes_nothing(ws, now):
    ws.scratch.append(Note(text="quokka row note", at=now, importance=0.5))
    ws.scratch.append(Note(text="a note to keep", at=now, importance=0.5))
    legacy = ws.scratch_path  # written by hand after the move: not in the rows yet
    legacy.write_text(
        scratch.HEADER
        + "\n"
        + scratch.render_note(scratch.Note(text="quokka note in the file", at=now, importance=0.4))
        + "a hand-written quokka line\n"
        + "keep me\n",
        encoding="utf-8",
    )
    before = legacy.read_bytes()

    def drop(text: str) -> str | None:
        return None if "quokka" in text else text

    def blank(line: str) -> str:
        return "" if "quokka" in line else line

    # One row, one note of the file and one hand-written line
    assert ws.scratch.rewrite(drop, blank, dry_run=True) == 3
    assert legacy.read_bytes() == before
    assert [n.text for n in ws.scratch.notes()] == ["quokka row note", "a note to keep"]
    assert ws.scratch.rewrite(drop, blank) == 3
    assert [n.text for n in ws.scratch.notes()] == ["a note to keep"]
    content = legacy.read_text(encoding="utf-8")
    assert "quokka" not in content and content.endswith("\nkeep me\n")


def test_a_scratch_file_from_before_the_move_is_carried_over_once_with_all_it_says(ws, now):
    ws.scratch.append(
        Note(text="held already", at=now, importance=0.5)
    )  # the rows hold one copy of this note
    legacy = ws.scratch_path
    rotated = scratch.rotated_path(legacy)
    rotated.write_text(
        scratch.HEADER
        + "\n"
        + scratch.render_note(scratch.Note(text="from a killed dream", at=now, importance=0.6)),
        encoding="utf-8",
    )
    twice = scratch.render_note(scratch.Note(text="held already", at=now, importance=0.5))
    legacy.write_bytes(
        (
            scratch.HEADER
            + "\n"
            + twice
            + twice  # written twice by hand: one copy is new
            + scratch.render_note(
                scratch.Note(
                    text="Lisbon now",
                    at=now,
                    importance=0.7,
                    about="#12",
                    replaces="lives in Porto",
                )
            )
        ).encode()
        + b"caf\xe9 hand-written\n"  # a stray line, not UTF-8
        + b"second stray line\n"
    )
    assert ws.scratch.adopt_file() == 3
    notes = ws.scratch.notes()
    assert [n.text for n in notes] == [
        "held already",
        "from a killed dream",
        "held already",
        "Lisbon now",
    ]
    assert (notes[-1].about, notes[-1].replaces) == ("#12", "lives in Porto")
    # The file keeps only its stray lines, byte for byte; the rotated copy is gone
    header = (scratch.HEADER + "\n").encode()
    assert legacy.read_bytes() == header + b"caf\xe9 hand-written\nsecond stray line\n"
    assert not rotated.exists()
    assert ws.scratch.adopt_file() == 0  # once
    # Notes only, no stray line: the file goes back to its header
    legacy.write_text(
        scratch.HEADER
        + "\n"
        + scratch.render_note(scratch.Note(text="late note", at=now, importance=0.5)),
        encoding="utf-8",
    )
    assert ws.scratch.restore() == 1  # what restore puts back includes the carried notes
    assert legacy.read_bytes() == header
    # A rotated copy alone is carried over too
    legacy.unlink()
    rotated.write_text(
        scratch.HEADER
        + "\n"
        + scratch.render_note(scratch.Note(text="only rotated", at=now, importance=0.5)),
        encoding="utf-8",
    )
    assert ws.scratch.adopt_file() == 1
    assert ws.scratch.notes()[-1].text == "only rotated" and not rotated.exists()
    # An empty rotated copy is removed; a file of nothing moves nothing
    rotated.write_text(scratch.HEADER, encoding="utf-8")
    legacy.write_text(scratch.HEADER, encoding="utf-8")
    assert ws.scratch.adopt_file() == 0
    assert not rotated.exists()
    assert ws.scratch.adopt_file() == 0  # a header alone, no rotated copy


def test_a_dream_takes_or_settles_the_rows_only_under_the_workspace_lock(ws):
    with pytest.raises(ScratchError) as taken:
        ws.scratch.rotate()
    assert str(taken.value) == "a dream takes the scratch only under the workspace lock"
    with pytest.raises(ScratchError) as settled:
        ws.scratch.settle(lambda note: True)
    assert str(settled.value) == "a dream settles the scratch only under the workspace lock"
