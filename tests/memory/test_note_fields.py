"""A note's about and replaces: stored on the crystal and in the scratch on both backends, given
through the CLI, the note tool and Workspace.note, and a note that names what it replaces
supersedes it at the next dream."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from dreams import offline_dream

from dreamer.agents import tools
from dreamer.cli import main
from dreamer.errors import InvalidNote
from dreamer.memory import scratch
from dreamer.store import NewCrystal, open_store

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL


@pytest.mark.parametrize(
    "about, replaces",
    [
        ("launch date", "#12"),
        ('the "old" café, with \\ and ) inside', None),
        (None, "target date June 12"),
        (None, None),
    ],
)
def test_the_scratch_line_round_trips_about_and_replaces(about, replaces, now):
    rendered = scratch.render_note(
        scratch.Note(
            text="Launch is July 3\nsecond line",
            at=now,
            importance=0.8,
            about=about,
            replaces=replaces,
        )
    )
    (note,) = scratch.parse_text(scratch.HEADER + "\n" + rendered).notes
    assert (note.text, note.importance, note.about, note.replaces) == (
        "Launch is July 3\nsecond line",
        0.8,
        about,
        replaces,
    )


def test_a_note_keeps_about_and_replaces_on_the_crystal_and_in_the_scratch(ws, now):
    crystal_id = ws.note("Go-live moved to July 3", at=now, about="go-live date", replaces="#4")
    crystal = ws.get(crystal_id)
    assert (crystal.about, crystal.replaces) == ("go-live date", "#4")
    (note,) = scratch.parse(ws.scratch_path).notes
    assert (note.about, note.replaces) == ("go-live date", "#4")


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"about": "  "}, "about is empty"),
        ({"replaces": True}, "replaces is an earlier note's id"),
        ({"replaces": 0}, "replaces is an earlier note's id"),
        ({"replaces": 1.5}, "replaces is an earlier note's id"),
        ({"about": "x" * 400}, "at most 300"),
    ],
)
def test_bad_about_or_replaces_is_one_clear_error_and_writes_nothing(ws, now, fields, message):
    with pytest.raises(InvalidNote, match=message):
        ws.note("Go-live moved to July 3", at=now, **fields)
    assert scratch.parse(ws.scratch_path).notes == []


def test_postgres_keeps_about_and_replaces_on_crystals_and_scratch_rows(pg_database, tmp_path, now):
    store = open_store(tmp_path / "c.db", url=pg_database, key=str(tmp_path))
    try:
        crystal_id, _ = store.crystals.add_crystal(
            NewCrystal(
                "Go-live moved to July 3",
                source="scratch",
                semantic_type="experience",
                importance=0.8,
                at=now,
                embedding=None,
                about="go-live date",
                replaces="#4",
            )
        )
        (crystal,) = store.crystals.crystals_by_id([crystal_id])
        assert (crystal.about, crystal.replaces) == ("go-live date", "#4")
        assert [c.id for c in store.crystals.crystals_about("Go-Live DATE")] == [crystal_id]
        store.scratch_append("Go-live moved to July 3", now, 0.8, about="go-live", replaces="#4")
        store.scratch_append("A plain note", now, 0.5)
        rows = store.scratch_rows()
        assert [(r[3], r[5], r[6]) for r in rows] == [
            ("Go-live moved to July 3", "go-live", "#4"),
            ("A plain note", None, None),
        ]
    finally:
        store.close()


def test_dream_note_takes_about_and_replaces(runner, ws):
    result = runner.invoke(
        main,
        [
            "note",
            "Go-live moved to July 3",
            "--about",
            "go-live date",
            "--replaces",
            "#4",
            "-w",
            str(ws.root),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    crystal = ws.get(int(result.output.strip()))
    assert (crystal.about, crystal.replaces) == ("go-live date", "#4")


def test_the_note_tool_takes_about_and_replaces(ws, now):
    block = {
        "type": "tool_use",
        "id": "t1",
        "name": "working_memory_note",
        "input": {"note": "Go-live moved to July 3", "about": "go-live", "replaces": "#4"},
    }
    result = tools.handle(ws, block, now=now)
    assert not result["is_error"], result
    crystal = ws.get(json.loads(result["content"])["id"])
    assert (crystal.about, crystal.replaces) == ("go-live", "#4")


def test_replaces_takes_the_id_an_earlier_note_returned(ws, now):
    first = ws.note("The launch is on June 12", at=now)
    second = ws.note("The launch moved to June 19", at=now, replaces=ws.note("Launch: June 12"))
    assert ws.get(second).replaces == f"#{first + 1}"
    block = {
        "type": "tool_use",
        "id": "t2",
        "name": "working_memory_note",
        "input": {"note": "The launch moved to June 26", "replaces": first},
    }
    result = tools.handle(ws, block, now=now)
    assert not result["is_error"], result
    assert ws.get(json.loads(result["content"])["id"]).replaces == f"#{first}"
    spec = next(t for t in tools.tool_definitions() if t["name"] == "working_memory_note")
    assert spec["input_schema"]["properties"]["replaces"]["type"] == ["string", "integer"]


def _current(state) -> str:
    return state.body("active_context") + "\n" + state.body("bond")


@pytest.mark.parametrize("by", ["id", "#id", "words"])
def test_a_note_that_names_what_it_replaces_supersedes_it_at_the_next_dream(ws, now, by):
    # Words that share too little for any guess to pair them: only `replaces` can.
    first = ws.note(
        "Dagster migration: cut-over planned for Friday June 12.", importance=0.8, at=now
    )
    before = offline_dream(ws, now + timedelta(hours=1))
    assert "June 12" in _current(before)
    replaces = {"id": first, "#id": f"#{first}", "words": "Dagster cut-over June 12"}[by]
    ws.note(
        "Tomasz wants a parallel run week first, so the switch happens July 3.",
        importance=0.8,
        at=now + timedelta(hours=2),
        about="Dagster migration target date",
        replaces=replaces,
    )
    after = offline_dream(ws, now + timedelta(hours=3))
    assert "July 3" in _current(after)
    assert "June 12" not in _current(after)


def test_of_notes_about_the_same_thing_the_newest_holds_after_the_next_dream(ws, now):
    ws.note("Worktop: oiled oak from the timber yard.", at=now, about="Kitchen worktop")
    assert "oiled oak" in _current(offline_dream(ws, now + timedelta(hours=1)))
    ws.note(
        "Hannah changed her mind: quartz composite, white.",
        at=now + timedelta(hours=2),
        about="kitchen worktop",
    )
    after = _current(offline_dream(ws, now + timedelta(hours=3)))
    assert "quartz composite" in after
    assert "oiled oak" not in after


def test_crystals_about_finds_any_case_on_sqlite(ws, now):
    one = ws.note("Worktop: oak.", at=now, about="Kitchen worktop")
    two = ws.note("Worktop: quartz.", at=now + timedelta(hours=1), about="kitchen WORKTOP")
    ws.note("Tiles: white.", at=now, about="kitchen tiles")
    assert [c.id for c in ws.store.crystals.crystals_about("kitchen worktop")] == [two, one]


def test_a_secret_in_about_or_replaces_never_lands(ws, now):
    key = "AKIAQ3EGUGWZ7EXMPL42"
    crystal_id = ws.note("Rotated the deploy key.", at=now, about=f"key {key}", replaces=key)
    crystal = ws.get(crystal_id)
    assert key not in f"{crystal.about} {crystal.replaces}"
    assert key not in ws.scratch_path.read_text(encoding="utf-8")
