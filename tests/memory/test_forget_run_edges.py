"""The edges of a forget's receipt: each place on its line, with its count, in the words
``dream forget`` prints (counts and ids, never the text)."""

from __future__ import annotations

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
