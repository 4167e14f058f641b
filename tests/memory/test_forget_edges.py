"""The edges of a forget: which lines "carry" a text, and what becomes of the journal's JSON.

A forget removes the lines of MEMORY.md, the journal and the backups that carry a forgotten text
and nothing else. These tests hold each rule at its boundary (exactly 12 characters quoted,
exactly three shared words, exactly 60% of a line's words) and look at what a user can read
afterwards: MEMORY.md's bytes, the journal's rows and the search log.
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import timedelta

import pytest

from dreamer import Workspace
from dreamer.errors import UsageError, WorkspaceError
from dreamer.memory.forgetting import carries, scrub
from dreamer.support.times import iso

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

TEXT = "The quokka marmalade recipe from Zanzibar needs seven cardamom pods"


@pytest.mark.parametrize(
    ("line", "text", "carried"),
    [
        # A text of exactly 12 characters quoted in a line, and a line of exactly 12 in a text
        ("- the code is Zorbulax7731 now", "Zorbulax7731", True),
        ("- Zorbulax7731", "Ada's locker code is Zorbulax7731", True),
        # Shorter than 12 characters: not a quote; the line's other words keep it
        ("- The red big car is parked beside seven yellow houses downtown", "red big car", False),
        # The list marker goes before the comparison: the rest is a quote of the text
        ("- quokka marmalade recipe", TEXT, True),
        # Exactly three shared words, all of the line's
        ("quokka marmalade cardamom", TEXT, True),
        # Three shared words of five: exactly 60%
        ("quokka marmalade cardamom beside windows", TEXT, True),
        # Three shared words of ten: the line is about something else
        (
            "quokka marmalade cardamom beside windows, bicycles, lanterns, ferries, owls, kites",
            TEXT,
            False,
        ),
        # One shared word is never enough, even when it is the line's only word
        ("- Cardamom!", TEXT, False),
        # Stop words are not shared words
        ("They were with that bicycle", "They were with that courier", False),
        # An empty line carries nothing
        ("", TEXT, False),
    ],
)
def test_which_lines_carry_a_text(line, text, carried):
    assert carries(line, text) is carried


def test_scrub_drops_only_the_carrying_lines_and_keeps_blank_lines_and_the_rest_byte_for_byte():
    content = "# Memory\n\n- Maya prefers concise answers\n\n- " + TEXT + "\n- Cardamom!\n"
    assert scrub(content, [TEXT]) == "# Memory\n\n- Maya prefers concise answers\n\n- Cardamom!\n"
    assert scrub("# Memory\n\n- nothing to forget\n", [TEXT]) == "# Memory\n\n- nothing to forget\n"


def _journal(ws, dream_id, column):
    db = sqlite3.connect(f"file:{ws.db_path}?mode=ro", uri=True)
    try:
        ((value,),) = db.execute(f"SELECT {column} FROM dreams WHERE id = ?", [dream_id])
        return value
    finally:
        db.close()


def test_a_forget_rewrites_the_journal_json_string_by_string(ws, now):
    ws.note(TEXT, at=now - timedelta(minutes=5))
    ws.note("Maya prefers concise answers with the code first", at=now - timedelta(minutes=4))
    (hit,) = [h for h in ws.search("quokka marmalade", now=now) if "quokka" in h.text]
    memory = "# Memory\n\n## Facts\n- " + TEXT + "\n- Maya prefers concise answers\n\n## Notes\n"
    ws.write_memory(memory, now)
    old = ws.store.journal.record_dream(
        {
            "started_at": "2026-03-12T14:00:00Z",
            "finished_at": "2026-03-12T14:00:00Z",
            "outcome": "failed",
            "reason": "[draft] " + TEXT,  # begins like JSON, is not: rewritten as text
            "critiques": [[TEXT, "keep the café line"], ["naïve wording"]],
            "inputs": {"note": TEXT, "kept": "crème brûlée", "count": 2},
            "draft": "## Facts\n- " + TEXT + "\n- Maya prefers concise answers",
        }
    )
    untouched = ws.store.journal.record_dream(
        {
            "started_at": "2026-03-12T14:01:00Z",
            "finished_at": "2026-03-12T14:01:00Z",
            "outcome": "skipped",
            "reason": "nothing new",
            "critiques": [["naïve wording"]],
        }
    )
    report = ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))

    # MEMORY.md: the one line gone, every other byte as it was
    expected = "# Memory\n\n## Facts\n- Maya prefers concise answers\n\n## Notes\n"
    assert ws.memory_md.read_text(encoding="utf-8") == expected
    assert report.memory_lines == 1 and report.scratch_notes == 1
    row = ws.store.journal.get_dream(report.dream_id)
    assert row["outcome"] == "forgotten" and row["new_state"] == expected
    assert row["inputs"] == {"forgotten": [hit.id]}
    assert row["reason"] == f"forgot crystal(s) #{hit.id}: 1 line(s) of MEMORY.md removed (asked)"

    # The journal: each JSON string on its own; one-line strings go whole, others by line
    assert _journal(ws, old, "reason") == "[forgotten]"
    assert json.loads(_journal(ws, old, "critiques")) == [
        ["[forgotten]", "keep the café line"],
        ["naïve wording"],
    ]
    assert "keep the café line" in _journal(ws, old, "critiques")  # as the store writes it
    assert json.loads(_journal(ws, old, "inputs")) == {
        "note": "[forgotten]",
        "kept": "crème brûlée",
        "count": 2,
    }
    assert _journal(ws, old, "draft") == "## Facts\n- Maya prefers concise answers"
    # A row with nothing to forget is left exactly as it was stored
    assert _journal(ws, untouched, "critiques") == json.dumps(
        [["naïve wording"]], ensure_ascii=False
    )


def test_a_search_that_names_the_text_in_one_word_leaves_the_search_log(ws, now):
    ws.note(TEXT, at=now - timedelta(minutes=5))
    ws.note("Maya prefers concise answers with the code first", at=now - timedelta(minutes=4))
    ws.search("Zanzibar", now=now)  # one word: it does not carry the text, it names it
    ws.search("concise answers", now=now)
    (hit,) = [h for h in ws.search("quokka marmalade", now=now) if "quokka" in h.text]
    report = ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
    db = sqlite3.connect(f"file:{ws.db_path}?mode=ro", uri=True)
    try:
        queries = [q for (q,) in db.execute("SELECT query FROM searches")]
    finally:
        db.close()
    assert "concise answers" in queries
    assert not any("zanzibar" in q.lower() for q in queries)
    assert report.journal_rows == 2  # "quokka marmalade" rewritten, "Zanzibar" dropped


def test_forgetting_two_notes_at_once_counts_and_names_both(ws, now):
    ws.note(TEXT, at=now - timedelta(minutes=5))
    ws.note("Ada's locker code is Zorbulax 7731", at=now - timedelta(minutes=4))
    ws.note("Maya prefers concise answers with the code first", at=now - timedelta(minutes=3))
    first = next(h.id for h in ws.search("quokka marmalade", now=now) if "quokka" in h.text)
    second = next(h.id for h in ws.search("locker code", now=now) if "Zorbulax" in h.text)
    ws.write_memory("# Memory\n\n- " + TEXT + "\n- Ada's locker code is Zorbulax 7731\n", now)
    report = ws.forget([first, second], reason="asked", now=now + timedelta(minutes=1))
    assert report.scratch_notes == 2 and report.memory_lines == 2
    assert [n.text for n in ws.scratch.notes()] == [
        "Maya prefers concise answers with the code first"
    ]
    reason = ws.store.journal.get_dream(report.dream_id)["reason"]
    assert reason.startswith(f"forgot crystal(s) #{first}, #{second}: 2 line(s)")


def test_a_memory_file_with_a_stray_byte_is_still_forgotten_from(ws, now):
    ws.note(TEXT, at=now - timedelta(minutes=5))
    (hit,) = [h for h in ws.search("quokka marmalade", now=now) if "quokka" in h.text]
    ws.memory_md.write_bytes(b"# Memory\n\n- caf\xff menu\n- " + TEXT.encode() + b"\n")
    report = ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
    assert report.memory_lines == 1
    assert b"quokka" not in ws.memory_md.read_bytes()
    assert ws.memory_md.read_text(encoding="utf-8") == "# Memory\n\n- caf\ufffd menu\n"


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (12, "crystal ids are a list of whole numbers such as \\[12\\], not 12"),
        ("12", "crystal ids are a list of whole numbers such as \\[12\\], not '12'"),
        ([True], "a crystal id is a whole number, not True"),
        (["7"], "a crystal id is a whole number, not '7'"),
        ([0], "a crystal id is a whole number from 1, not 0"),
    ],
)
def test_crystal_ids_that_are_not_whole_numbers_are_refused_by_name(ws, now, ids, message):
    ws.note(TEXT, at=now)
    with pytest.raises(UsageError, match=message):
        ws.forget(ids, now=now)
    assert [n.text for n in ws.scratch.notes()] == [TEXT]  # nothing was forgotten


def test_the_seed_backups_and_the_waiting_candidate_forget_too_and_the_old_page_goes(ws, now):
    ws.note(TEXT, at=now - timedelta(minutes=5))
    (hit,) = [h for h in ws.search("quokka marmalade", now=now) if "quokka" in h.text]
    carrying = b"# Hand-written\n\n- caf\xe9 menu\n- " + TEXT.encode() + b"\n- Maya\n"
    backups = [ws.root / "MEMORY.md.seed-backup", ws.root / "MEMORY.md.seed-backup.2"]
    candidate = ws.memory_dir / "MEMORY.candidate.md"
    for path in [*backups, candidate]:
        path.write_bytes(carrying)
    half_written = ws.root / "MEMORY.md.seed-backup.3.tmp"  # an interrupted copy: not a backup
    half_written.write_bytes(carrying)
    ws.report_html.write_text("<p>" + TEXT + "</p>")
    report = ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
    # Each file loses the one line and keeps every other byte, the stray Latin-1 byte included
    for path in [*backups, candidate]:
        assert path.read_bytes() == b"# Hand-written\n\n- caf\xe9 menu\n- Maya\n", path
    assert half_written.read_bytes() == carrying
    assert report.backup_lines == 3
    assert report.report_removed is True and not ws.report_html.exists()


def test_a_forget_with_nothing_in_the_backups_or_the_page_reports_none(ws, now):
    ws.note(TEXT, at=now - timedelta(minutes=5))
    (hit,) = [h for h in ws.search("quokka marmalade", now=now) if "quokka" in h.text]
    backup = ws.root / "MEMORY.md.seed-backup"
    backup.write_bytes(b"# Hand-written\n- Maya\n")
    report = ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
    assert report.backup_lines == 0 and report.report_removed is False
    assert backup.read_bytes() == b"# Hand-written\n- Maya\n"


@pytest.mark.slow
def test_a_page_that_cannot_be_deleted_stops_the_forget_with_one_clear_error(ws, now):
    ws.note(TEXT, at=now - timedelta(minutes=5))
    (hit,) = [h for h in ws.search("quokka marmalade", now=now) if "quokka" in h.text]
    ws.report_html.mkdir()  # a folder where the page would be: unlink fails
    with pytest.raises(WorkspaceError, match="cannot delete .*report.html .*delete it by hand"):
        ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))


def test_on_postgres_a_forget_commits_memory_md_through_the_state_row_at_its_time(
    pg_database, tmp_path, now
):
    import psycopg

    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}) as ws:
        ws.init()
        ws.note(TEXT, at=now - timedelta(minutes=5))
        ws.memory_md.write_text("# Memory\n\n- Maya\n- " + TEXT + "\n")
        (hit,) = [h for h in ws.search("quokka marmalade", now=now) if "quokka" in h.text]
        ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
        # The state row is what every machine reads MEMORY.md from: the line is gone there too
        assert ws.read_memory() == "# Memory\n\n- Maya\n"
        assert ws.memory_md.read_text() == "# Memory\n\n- Maya\n"
    with psycopg.connect(pg_database) as db:
        rows = db.execute("SELECT text, written_at FROM states").fetchall()
    assert rows == [("# Memory\n\n- Maya\n", iso(now + timedelta(minutes=1)))]


def test_a_backup_that_cannot_be_rewritten_stops_the_forget_with_one_clear_error(
    ws, now, monkeypatch
):
    import errno

    from disk_faults import Disk

    ws.note(TEXT, at=now - timedelta(minutes=5))
    (hit,) = [h for h in ws.search("quokka marmalade", now=now) if "quokka" in h.text]
    backup = ws.root / "MEMORY.md.seed-backup"
    backup.write_bytes(b"# Hand-written\n- " + TEXT.encode() + b"\n")
    disk = Disk(monkeypatch)

    def refuse(event):  # a read-only backup folder, as a user other than root meets it
        if event.kind == "open" and "seed-backup" in event.path and event.flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied", event.path)

    disk.checks.append(refuse)
    with pytest.raises(WorkspaceError) as raised:
        ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
    assert str(raised.value) == (
        f"cannot rewrite {backup} (Permission denied); make it writable and forget again"
    )
    assert backup.read_bytes() == b"# Hand-written\n- " + TEXT.encode() + b"\n"  # left whole
