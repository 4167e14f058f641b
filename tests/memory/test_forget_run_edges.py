"""The edges of a forget's receipt: each place on its line, with its count, in the words
``dream forget`` prints (counts and ids, never the text), the counts of two at once, and the
lost words: a line dreamer wrote with one goes, a person's line keeps its words out of them,
the words of the request being honoured hold nothing up; and the waiting requests, the search
log and the seed backups cleaned of the lost words too."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

from dreamer.memory import forgetting
from dreamer.memory.forget_pending import Pending, record
from dreamer.memory.forgetting import ForgetReport
from dreamer.support.times import iso


def test_the_receipt_names_each_place_and_its_count():
    report = ForgetReport(
        forgotten=[3, 5],
        vectors=2,
        index_entries=1,
        lost_words=4,
        scratch_notes=1,
        memory_lines=2,
        journal_rows=7,
        searches=2,
        requests=1,
        backup_lines=3,
        report_removed=True,
    )
    assert report.receipt() == [
        "  crystals         2 emptied (#3, #5); a tombstone keeps each id",
        "  vectors          2 removed",
        "  full-text index  1 entrie(s) removed",
        "  scratch          1 pending note(s) removed",
        "  MEMORY.md        2 line(s) removed",
        "  journal          5 row(s) rewritten, 2 logged search(es) dropped",
        "  seed backups     3 line(s) removed",
        "  forget requests  1 waiting request(s) answered or cleaned",
        "  report           drawn again without it",
        "  derived text     4 word(s) no memory holds any more, cleaned",
    ]


def test_a_receipt_with_no_page_drawn_says_so():
    assert ForgetReport().receipt()[-2] == "  report           none drawn"


def test_a_forget_of_two_notes_counts_both_vectors_and_both_index_entries(ws, now):
    ws.note("The quokka marmalade recipe needs seven cardamom pods", at=now - timedelta(hours=2))
    ws.note("The quokka shelter opens on Saturdays at nine", at=now - timedelta(hours=1))
    ws.note("Billing runs nightly", at=now - timedelta(minutes=30))
    ids = [h.id for h in ws.search("quokka", now=now) if "quokka" in h.text]
    assert len(ids) == 2
    report = ws.forget(ids, reason="asked", now=now)
    assert (report.vectors, report.index_entries) == (2, 2)


ATTIC = "The quokkavelvet attic has a slow leak"


def test_a_line_dreamer_wrote_with_a_lost_word_leaves_memory_md(ws, now):
    ws.note(ATTIC, at=now - timedelta(hours=1))
    ws.note("Billing runs nightly", at=now - timedelta(minutes=30))
    memory = "# Memory\n\n- The attic needs a dehumidifier\n- Billing runs nightly\n"
    ws.write_memory(memory, now)
    ws.store.journal.record_dream(
        {
            "started_at": iso(now),
            "finished_at": iso(now),
            "outcome": "committed",
            "new_state": memory,
        }
    )
    (hit,) = [h for h in ws.search("quokkavelvet", now=now) if "attic" in h.text]
    report = ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
    assert ws.read_memory() == "# Memory\n\n- Billing runs nightly\n"
    assert report.memory_lines == 1


def test_a_line_a_person_wrote_keeps_its_words_out_of_the_lost_ones(ws, now):
    ws.note(ATTIC, at=now - timedelta(hours=1))
    ws.write_memory("# Memory\n\n- I keep my tools in the attic\n", now)  # no dream wrote it
    (hit,) = [h for h in ws.search("quokkavelvet", now=now) if "attic" in h.text]
    report = ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
    assert ws.read_memory() == "# Memory\n\n- I keep my tools in the attic\n"
    assert report.lost_words == 3  # quokkavelvet, slow, leak


def test_the_words_of_the_request_being_honoured_hold_nothing_up(ws, now):
    ws.note(ATTIC, at=now - timedelta(hours=1))
    asking = "please forget the quokkavelvet attic"
    ws.note(asking, at=now - timedelta(minutes=30))
    (hit,) = [h for h in ws.search("quokkavelvet", now=now) if "leak" in h.text]
    with ws.lock():
        report = forgetting.forget(ws, [hit.id], reason="asked", now=now, asking=[asking])
    assert report.lost_words == 4  # quokkavelvet, attic, slow, leak


def test_a_forget_answers_and_cleans_the_waiting_requests(ws, now):
    ws.note(ATTIC, at=now - timedelta(hours=1))
    ws.note("Billing runs nightly", at=now - timedelta(minutes=30))
    (hit,) = [h for h in ws.search("quokkavelvet", now=now) if "attic" in h.text]
    record(ws.store, Pending(40, "that quokkavelvet thing", [2]))  # its words are cleaned
    record(ws.store, Pending(41, "the leaky attic", [hit.id]))  # its only match goes
    report = ws.forget([hit.id], reason="asked", now=now)
    assert report.requests == 2
    items = {key: json.loads(value) for key, value in ws.store.records.meta_items("forget_")}
    assert items["forget_request.40"]["target"] == "[forgotten]"
    assert items["forget_request.41"] == {"request_id": 41, "state": "resolved", "at": iso(now)}


def test_a_logged_search_naming_the_text_is_dropped_and_counted_in_the_journal(ws, now):
    ws.note("The gym locker code is 4417", at=now - timedelta(minutes=5))
    ws.note("The locker room code changed in spring", at=now - timedelta(minutes=4))
    ws.search("locker code", now=now)  # names the note; its words stay in the other one
    (hit,) = [h for h in ws.search("gym", now=now) if "gym" in h.text]
    report = ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
    db = sqlite3.connect(f"file:{ws.db_path}?mode=ro", uri=True)
    try:
        queries = [query for (query,) in db.execute("SELECT query FROM searches")]
    finally:
        db.close()
    assert "locker code" not in queries
    # "gym" rewritten to [forgotten], "locker code" dropped: two rows, one of them a search
    assert (report.journal_rows, report.searches) == (2, 1)


def test_a_seed_backup_line_with_a_lost_word_goes_too(ws, now):
    ws.note(ATTIC, at=now - timedelta(hours=1))
    backup = ws.root / "MEMORY.md.seed-backup"
    backup.write_text("# Memory\n\n- The attic needs a dehumidifier\n- Maya\n")
    (hit,) = [h for h in ws.search("quokkavelvet", now=now) if "attic" in h.text]
    report = ws.forget([hit.id], reason="asked", now=now)
    assert backup.read_text() == "# Memory\n\n- Maya\n"
    assert report.backup_lines == 1
