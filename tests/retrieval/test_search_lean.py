"""The lean search path gives what the plain one gives: same cosines, same stems, same hits."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from dreamer.retrieval.vectors import matvec
from dreamer.store import NewCrystal

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


@pytest.mark.slow
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
    assert store.search.term_frequencies(["kiln", "monday"]) == {"kiln": 1, "monday": 1}
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        assert store.search.term_frequencies(["kiln"]) == {"kiln": 1}
        assert not any("FROM temp.dreamer_fts_terms" in sql for sql in statements)  # kept
    finally:
        store.db.conn.set_trace_callback(None)
    # Another connection (another process, as far as this one knows) adds a kiln note ...
    other = open_store(ws.db_path)
    try:
        other.add_crystal(
            NewCrystal(
                "The kiln needs a new thermocouple",
                source="scratch",
                semantic_type="experience",
                importance=0.5,
                at=now,
                embedding=None,
            )
        )
    finally:
        other.close()
    assert store.search.term_frequencies(["kiln", "monday"]) == {"kiln": 2, "monday": 1}
    # ... and this one forgets one: both are changes the counts follow.
    ws.forget([1], now=now)
    assert store.search.term_frequencies(["kiln", "monday"]) == {"kiln": 1, "monday": 0}


def _generated(tmp_path, now, size=1500):
    """A workspace of ``size`` synthetic crystals (session turns and notes) with vectors."""
    import random

    from synthetic import bulk_load

    from dreamer.memory.workspace import Workspace

    ws = Workspace.open(tmp_path / "ws", overrides={"embedder": "wordllama"})
    ws.init()
    bulk_load(ws, size, random.Random(5), now - timedelta(hours=1))
    return ws


def _queries(count, seed=1):
    import random

    from synthetic import synthetic_query

    rng = random.Random(seed)
    return [synthetic_query(rng) for _ in range(count)]


VECTOR_READS = "SELECT id, embedding FROM crystals WHERE id IN"


def _ranked(ws, queries, now, *, fresh):
    """(id, score) of each query's hits, and how many statements read vectors from the store;
    ``fresh``: each search as a new process makes it (no vector file open)."""
    from dreamer.retrieval import vectors

    statements: list[str] = []
    ranked = []
    ws.store.db.conn.set_trace_callback(statements.append)
    try:
        for query in queries:
            if fresh:
                vectors.clear_cache()
            ranked.append([(hit.id, hit.score) for hit in ws.search(query, limit=10, now=now)])
    finally:
        ws.store.db.conn.set_trace_callback(None)
    return ranked, sum(VECTOR_READS in sql for sql in statements)


def _same(first, second):
    assert len(first) == len(second)
    for one, other in zip(first, second, strict=True):
        assert [i for i, _ in one] == [i for i, _ in other]
        assert all(abs(a - b) <= 1e-6 for (_, a), (_, b) in zip(one, other, strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("kept", ["nothing", "sketches", "vectors"], ids=lambda k: f"kept-{k}")
@pytest.mark.parametrize("block_rows", [None, 7], ids=["blocks", "small-blocks"])
def test_candidates_are_reranked_from_the_open_vector_file_with_the_stores_scores(
    tmp_path, now, monkeypatch, kept, block_rows
):
    from dreamer.retrieval import vector_file, vectors

    if block_rows:
        monkeypatch.setattr(vector_file, "BLOCK_ROWS", block_rows)
    if kept == "sketches":
        monkeypatch.setattr(vectors, "CACHE_VECTOR_ROWS", 0)
    vectors.clear_cache()
    ws = _generated(tmp_path, now)
    try:
        queries = _queries(40)
        # A search in a fresh process reads its candidates' vectors from the store ...
        alone, read = _ranked(ws, queries, now, fresh=True)
        assert read >= len(queries) // 4
        assert sum(len(hits) for hits in alone) > 5 * len(queries)
        # ... one in a process holding the file open reads them from the file: same results.
        index = vectors.index_for(ws.store, ws.embedder)
        if kept != "nothing":  # the second scan keeps what a small file holds in memory
            query = ws.embedder.embed(["warm up"])[0]
            vectors.nearest(index, query, True, True, 5)
            vectors.nearest(index, query, True, True, 5)
            assert index._cache is not None
            assert (index._cache[4] is not None) == (kept == "vectors")
            if kept == "vectors":  # kept widened: the numbers the file's float16 make
                rows = index.header.rows
                whole = index.file.all_vectors(rows).astype(np.float32)
                assert index._cache[4].dtype == np.float32
                assert np.array_equal(index._cache[4], whole)
        held, read = _ranked(ws, queries, now, fresh=False)
        assert read == 0
        _same(alone, held)
    finally:
        ws.close()
        vectors.clear_cache()


@pytest.mark.slow
def test_a_held_vector_file_behind_the_store_is_not_read(tmp_path, now):
    """Another process adds a crystal with a vector; this one's open file lacks it: the search
    reads the candidates' vectors from the store, and finds what a fresh process finds."""
    from dreamer.memory.workspace import Workspace
    from dreamer.retrieval import vectors

    vectors.clear_cache()
    ws = _generated(tmp_path, now)
    try:
        # a query its words answer well enough that the vectors only re-rank
        query = next(q for q in _queries(40) if _ranked(ws, [q], now, fresh=True)[1])
        vectors.index_for(ws.store, ws.embedder)
        assert _ranked(ws, [query], now, fresh=False)[1] == 0
        with Workspace.open(ws.root, overrides={"embedder": "wordllama"}) as other:
            added = other.note(f"{query}, as the kiln log says", importance=0.9, at=now)
        (held,), read = _ranked(ws, [query], now, fresh=False)
        assert read == 1
        (alone,), _ = _ranked(ws, [query], now, fresh=True)
        assert added in [i for i, _ in held]
        _same([held], [alone])
    finally:
        ws.close()
        vectors.clear_cache()


@pytest.mark.slow
def test_the_change_mark_moves_with_what_a_search_reads_not_with_the_search_log(ws, now):
    from dreamer.store import open_store

    ws.note("The kiln parts ship on Monday", at=now)
    ws.search("warm up", now=now)  # the first search embeds the waiting note: a change
    store = ws.store
    mark = store.change_mark()
    for minute in range(1, 40):  # past a batch of the log: written with access counts
        ws.search("kiln parts", now=now + timedelta(minutes=minute))
    store.settle()
    assert store.db.execute("SELECT count(*) FROM searches").fetchone()[0] == 40
    assert store.change_mark() == mark
    ws.note("The kiln needs a new thermocouple", at=now)  # this connection writes
    assert store.change_mark() != mark
    mark = store.change_mark()
    other = open_store(ws.db_path)  # another connection writes
    try:
        other.set_meta("probe", "1")
    finally:
        other.close()
    assert store.change_mark() != mark


def test_widened_vectors_are_the_float32_numbers_of_the_float16_ones():
    import numpy as np

    from dreamer.retrieval.vectors import widen

    every = np.arange(65536, dtype=np.uint16).view(np.float16)  # zeros, subnormals, inf, nan
    assert np.array_equal(widen(every), every.astype(np.float32), equal_nan=True)
    assert widen(every).dtype == np.float32
    matrix = every[:4096].reshape(16, 256)[:, ::2]  # a strided view too
    assert np.array_equal(widen(matrix), matrix.astype(np.float32), equal_nan=True)


def test_rank_rows_kept_between_searches_follow_every_change(ws, now):
    from dreamer.store import open_store

    ids = [ws.note(text, at=now) for text in NOTES]
    store = ws.store
    asked = [*ids, ids[-1] + 1]  # and one not there yet
    first = store.search.rank_rows(asked)
    assert [row[0] for row in first] == ids
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        assert store.search.rank_rows(list(reversed(asked))) == first  # kept: no statement
    finally:
        store.db.conn.set_trace_callback(None)
    assert not any("crystals_rank" in sql for sql in statements)
    # another connection changes an importance: read again
    other = open_store(ws.db_path)
    try:
        other.update_crystal(ids[0], {"importance": 0.95}, action="test", at=now)
    finally:
        other.close()
    assert store.search.rank_rows([ids[0]])[0][3] == 0.95
    # a crystal added after its id was asked for
    added = ws.note("The boiler service is booked for Friday", at=now)
    assert added == ids[-1] + 1
    assert [row[0] for row in store.search.rank_rows(asked)] == [*ids, added]
    # a forget
    ws.forget([ids[1]], now=now)
    assert ids[1] not in [row[0] for row in store.search.rank_rows(asked)]
    # what a write transaction read is not kept past its rollback
    kept = store.search.rank_rows([ids[2]])
    try:
        with store.transaction():
            store.crystals.update_crystal(ids[2], {"importance": 0.05}, action="test", at=now)
            assert store.search.rank_rows([ids[2]])[0][3] == 0.05
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert store.search.rank_rows([ids[2]]) == kept


@pytest.mark.slow
def test_a_held_vector_file_another_embedder_replaced_is_not_read(tmp_path, now):
    """A process of another embedder rebuilds the workspace's vector file for its own vectors
    (the store unchanged): this process's held file is gone, and what replaced it is not its."""
    from dreamer.memory.workspace import Workspace
    from dreamer.retrieval import vectors

    vectors.clear_cache()
    ws = _generated(tmp_path, now)
    try:
        queries = _queries(20, seed=4)
        alone, _ = _ranked(ws, queries, now, fresh=True)
        vectors.index_for(ws.store, ws.embedder)
        with Workspace.open(ws.root, overrides={"embedder": "hashing"}) as other:
            vectors.index_for(other.store, other.embedder)  # a rebuild, renamed into place
        held, _ = _ranked(ws, queries, now, fresh=False)
        _same(alone, held)
    finally:
        ws.close()
        vectors.clear_cache()


def test_kept_rank_rows_never_show_a_live_crystal_as_forgotten_while_they_are_read(ws, now):
    """Another thread searching the same store while rank rows are read (the MCP server's and
    the door's threads share a store): an id being read must not look forgotten (None)."""
    ids = [ws.note(text, at=now) for text in NOTES]
    store = ws.store
    store.search.rank_rows(ids[:1])  # a kept set exists, at the current change mark
    looked_forgotten: list[int] = []

    def meanwhile() -> int:  # runs inside the read, as another thread's look at the kept rows
        kept = store._ranked
        looked_forgotten.extend(i for i in ids[1:] if i in kept and kept[i] is None)
        return 0

    store.db.conn.set_progress_handler(meanwhile, 1)
    try:
        rows = store.search.rank_rows(ids)
    finally:
        store.db.conn.set_progress_handler(None, 1)
    assert [row[0] for row in rows] == ids
    assert looked_forgotten == []


@pytest.mark.slow
def test_a_search_reads_the_data_version_once_and_still_sees_its_own_writes(ws, now):
    import threading

    from dreamer.store import open_store

    ws.note("The kiln parts ship on Monday", at=now - timedelta(days=2))
    ws.search("warm up", now=now)  # the first search embeds the waiting note
    store = ws.store
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        ws.search("kiln parts", now=now)
    finally:
        store.db.conn.set_trace_callback(None)
    # one a search (FTS5's own statements, traced with a leading "--", are not the search's)
    assert sum(sql.startswith("PRAGMA data_version") for sql in statements) == 1
    other = open_store(ws.db_path)
    try:
        with store.reading():
            mark, newest = store.change_mark(), store.search.newest_day()
            # A change this connection makes moves the mark at once, kept values with it ...
            ws.note("The kiln needs a new thermocouple", at=now)
            assert store.change_mark() != mark
            assert store.search.newest_day() > newest
            mark, newest = store.change_mark(), store.search.newest_day()
            # ... another connection's commit is seen when the next stretch of reads begins
            other.set_meta("probe", "1")
            assert store.change_mark() == mark
            seen: list[object] = []
            thread = threading.Thread(target=lambda: seen.append(store.change_mark()))
            thread.start()
            thread.join()
            assert seen[0] != mark  # (another thread's reads are not in this stretch)
        assert store.change_mark() != mark
        other.add_crystal(
            NewCrystal(
                "The kiln was fixed",
                source="scratch",
                semantic_type="experience",
                importance=0.5,
                at=now + timedelta(days=1),
                embedding=None,
            )
        )
        assert store.search.newest_day() > newest
    finally:
        other.close()


def test_a_search_looks_for_notes_without_a_vector_only_after_a_change(ws, now):
    from dreamer.store import open_store

    ws.note("The kiln parts ship on Monday", at=now)
    waiting = "embedding IS NULL"

    def searched(query: str) -> list[str]:
        statements: list[str] = []
        ws.store.db.conn.set_trace_callback(statements.append)
        try:
            hits = ws.search(query, now=now)
        finally:
            ws.store.db.conn.set_trace_callback(None)
        return [hit.text for hit in hits] and statements

    assert any(waiting in sql for sql in searched("kiln"))  # finds the note, embeds it
    assert any(waiting in sql for sql in searched("kiln"))  # (embedding it was a change)
    assert not any(waiting in sql for sql in searched("kiln"))  # nothing changed since
    other = open_store(ws.db_path)  # a `dream note` in another process: no vector yet
    try:
        other.add_crystal(
            NewCrystal(
                "The thermocouple arrives by courier",
                source="scratch",
                semantic_type="experience",
                importance=0.5,
                at=now,
                embedding=None,
            )
        )
    finally:
        other.close()
    assert any(waiting in sql for sql in searched("courier"))
    newest = ws.store.crystals.max_crystal_id()
    assert [row[0] for row in ws.store.vectors.vectors_of([newest], ws.embedder.name)] == [newest]
