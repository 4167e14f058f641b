"""The edges of a forget's receipt: each place on its line, with its count, in the words
``dream forget`` prints (counts and ids, never the text), and the counts of two at once."""

from __future__ import annotations

from datetime import timedelta

from dreamer.memory.forgetting import ForgetReport


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
