"""The lean search path gives what the plain one gives: same cosines, same stems, same hits."""

from __future__ import annotations

from datetime import timedelta

from dreamer.retrieval.vectors import matvec

NOTES = [
    "The staging database host is db-staging-3",
    "Maya prefers concise answers with the code first",
    "The kiln parts ship on Monday from the Leeds warehouse",
    "Grandmother's birthday dinner is at the harbour restaurant",
    "Renew the car insurance before the end of April",
]


def test_a_matrix_product_on_one_thread_is_the_product():
    import numpy as np

    matrix = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    vector = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    assert np.allclose(matvec(matrix, vector), matrix @ vector)
    other = np.array([1.0, 2.0, -1.0, 0.5], dtype=np.float32)
    assert np.allclose(matvec(matrix.T, other), matrix.T @ other)  # a transposed view too


def test_a_search_asks_few_statements_and_stems_each_word_once(ws, now):
    for text in NOTES:
        ws.note(text, at=now)
    ws.search("warm up", now=now)  # the first search embeds the waiting notes
    statements: list[str] = []
    ws.store.db.conn.set_trace_callback(statements.append)
    try:
        hits = ws.search("which warehouse ships the kiln parts", now=now)
        first = list(statements)
        statements.clear()
        ws.search("kiln parts warehouse", now=now + timedelta(minutes=1))
        again = list(statements)
    finally:
        ws.store.db.conn.set_trace_callback(None)
    assert hits and "kiln" in hits[0].text
    # FTS5's own statements (traced with a leading "--") are not the search's.
    first, again = ([sql for sql in run if not sql.startswith("--")] for run in (first, again))
    # One frequency look-up a search (the split and the ceiling share it) ...
    assert sum("FROM temp.dreamer_fts_terms" in sql for sql in first) == 1
    # ... the words of a second search were stemmed before: no temporary table is written ...
    assert not any("dreamer_query" in sql for sql in again)
    # ... and nothing is written: the log waits for its batch.
    assert not any(sql.lstrip().upper().startswith(("INSERT", "UPDATE", "BEGIN")) for sql in again)
    # (the vector file's freshness check is three of them: its newest id, forgets, generation)
    assert len(again) <= 12, again
    assert ws.store._stems(["prefers", "shipping"]) == {"prefers": "prefer", "shipping": "ship"}


def test_word_counts_are_kept_only_while_the_database_is_unchanged(ws, now, tmp_path):
    from dreamer.store import open_store

    ws.note("The kiln parts ship on Monday", at=now)
    store = ws.store
    assert store.term_frequencies(["kiln", "monday"]) == {"kiln": 1, "monday": 1}
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        assert store.term_frequencies(["kiln"]) == {"kiln": 1}
        assert not any("FROM temp.dreamer_fts_terms" in sql for sql in statements)  # kept
    finally:
        store.db.conn.set_trace_callback(None)
    # Another connection (another process, as far as this one knows) adds a kiln note ...
    other = open_store(ws.db_path)
    try:
        other.add_crystal(
            "The kiln needs a new thermocouple",
            source="scratch",
            semantic_type="experience",
            importance=0.5,
            at=now,
            embedding=None,
        )
    finally:
        other.close()
    assert store.term_frequencies(["kiln", "monday"]) == {"kiln": 2, "monday": 1}
    # ... and this one forgets one: both are changes the counts follow.
    ws.forget([1], now=now)
    assert store.term_frequencies(["kiln", "monday"]) == {"kiln": 1, "monday": 0}
