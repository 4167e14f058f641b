"""PostgreSQL's change mark: what a search keeps between searches (rank rows, word counts, the
newest day, that no crystal waits for a vector, the vector file) must never outlive a write,
whichever connection or process commits it, and a search's own log must not move it."""

from __future__ import annotations

import random
import subprocess
import sys
from dataclasses import replace
from datetime import timedelta

import psycopg
import pytest

from dreamer import Workspace
from dreamer.retrieval import vectors
from dreamer.retrieval.embed import embed_texts, to_blob
from dreamer.store import NewCrystal

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

WORDS = (
    "garden invoice piano harbor compiler glacier lantern orbit velvet quarry meadow signal"
    " copper saddle ember thistle canyon ledger falcon marble"
).split()


def _open(root, url):
    return Workspace.open(root, environ={"DREAM_STORE_URL": url}, overrides={"embedder": "hashing"})


def _rows(ws, texts, at):
    vecs = embed_texts(ws.embedder, texts)
    return [
        NewCrystal(
            text,
            source="sessions" if n % 3 else "notes",
            semantic_type="experience",
            importance=0.5,
            at=at + timedelta(minutes=n),
            embedding=to_blob(vec),
            embedder=ws.embedder.name,
        )
        for n, (text, vec) in enumerate(zip(texts, vecs, strict=True))
    ]


def _answer(ws, query, now):
    found = ws.search(query, limit=8, now=now)
    return [(hit.id, hit.score, hit.lifecycle, hit.text, hit.importance) for hit in found]


@pytest.fixture
def pair(pg_database, tmp_path, now):
    """A reader and a writer: two workspaces (two connections) on the same rows, and what a
    third, fresh connection finds (nothing kept, the vector file read again)."""
    root = tmp_path / "ws"
    writer = _open(root, pg_database)
    writer.init()
    rng = random.Random(5)
    texts = [" ".join(rng.sample(WORDS, rng.randint(2, 6))) + f" (turn {n})" for n in range(60)]
    writer.store.crystals.add_crystals(_rows(writer, texts, now - timedelta(days=2)))
    reader = _open(root, pg_database)

    def fresh(query):
        vectors.clear_cache()
        with _open(root, pg_database) as other:
            return _answer(other, query, now)

    try:
        yield reader, writer, fresh, root
    finally:
        reader.close()
        writer.close()
        vectors.clear_cache()


QUERIES = ["garden invoice", "piano moved", "glacier harbor compiler", "a melody on the keys"]


def _warm(reader, now):
    for _ in range(2):
        for query in QUERIES:
            _answer(reader, query, now)


def test_a_search_sees_every_write_another_connection_commits(pair, pg_database, now):
    reader, writer, fresh, root = pair
    url = pg_database
    _warm(reader, now)
    store = writer.store

    def check(what):
        for query in QUERIES:
            assert _answer(reader, query, now) == fresh(query), (what, query)

    check("nothing written")

    def changes(query, write):
        before = _answer(reader, query, now)
        write()
        assert _answer(reader, query, now) != before, query  # the write counts, and is seen
        check(write.__name__)

    top = {query: _answer(reader, query, now)[0][0] for query in QUERIES}

    def add_without_vector():  # a note's vector arrives later: the search embeds it first
        store.crystals.add_crystals(
            [replace(_rows(writer, ["garden invoice, garden invoice"], now)[0], embedding=None)]
        )

    def archive():
        store.crystals.update_crystal(
            top["piano moved"], {"lifecycle": "archived"}, action="a", at=now
        )

    def weigh():
        store.crystals.update_crystal(top["piano moved"], {"importance": 1.0}, action="w", at=now)

    def forget():
        store.forgetting.forget_crystal(top["glacier harbor compiler"], reason="asked", at=now)

    def rewrite():  # a redaction, in another process (whose vector copy is its own)
        code = (
            "import sys; from dreamer import Workspace; from dreamer.retrieval import vectors;"
            "from dreamer.retrieval.embed import embed_texts, to_blob;"
            "from dreamer.support.times import utc_now;"
            "ws = Workspace.open(sys.argv[1], environ={'DREAM_STORE_URL': sys.argv[2]},"
            " overrides={'embedder': 'hashing'}); text = 'nothing left here';"
            "ws.store.forgetting.replace_text(int(sys.argv[3]), text,"
            " embedding=to_blob(embed_texts(ws.embedder, [text])[0]),"
            " embedder=ws.embedder.name, action='redacted', detail={}, at=utc_now());"
            "vectors.rewritten(ws.store, [int(sys.argv[3])]); ws.close()"
        )
        crystal = str(top["a melody on the keys"])
        subprocess.run([sys.executable, "-c", code, str(root), url, crystal], check=True)

    changes("garden invoice", add_without_vector)
    changes("piano moved", archive)
    changes("piano moved", weigh)
    changes("glacier harbor compiler", forget)
    changes("a melody on the keys", rewrite)


def test_a_write_by_another_process_moves_the_mark(pair, pg_database):
    # Not through dreamer at all: a statement typed at psql moves the mark as well.
    reader, _, _, _ = pair
    store = reader.store
    before = store.change_mark()
    with psycopg.connect(pg_database, autocommit=True) as other:
        other.execute("UPDATE crystals SET importance = 0.9 WHERE id = 3")
        after_update = store.change_mark()
        other.execute("DELETE FROM meta WHERE key = 'nothing'")  # no row: nothing changed
        assert store.change_mark() == after_update
        other.execute("INSERT INTO meta (workspace, key, value) VALUES (%s, 'k', 'v')", [store.ws])
        after_meta = store.change_mark()
        other.execute("UPDATE crystals SET access_count = access_count + 1 WHERE id = 3")
        after_count = store.change_mark()
        other.execute("TRUNCATE tombstones")
        after_truncate = store.change_mark()
    marks = [before, after_update, after_meta, after_count, after_truncate]
    assert len(set(marks)) == len(marks)


def test_a_search_logs_and_counts_without_moving_the_mark(pair, now):
    reader, writer, _, _ = pair
    _warm(reader, now)
    mark = reader.store.change_mark()
    hits = reader.search("garden invoice", now=now)
    (counted,) = reader.store.crystals.crystals_by_id([hits[0].id])  # writes the pending searches
    assert counted.access_count >= 3 and counted.last_accessed_at is not None
    assert writer.store.search.search_queries("2000-01-01")[-1] == "garden invoice"
    assert reader.store.change_mark() == mark  # so what the searches kept stays kept


def test_what_a_rolled_back_transaction_read_is_not_kept(pair, now):
    _, writer, _, _ = pair
    store = writer.store
    before = store.search.term_frequencies(["garden"])
    newest = store.search.newest_day()
    with pytest.raises(RuntimeError), store.transaction():
        store.crystals.add_crystal(
            NewCrystal(
                "garden garden, much later",
                source="notes",
                semantic_type="experience",
                importance=0.5,
                at=now + timedelta(days=30),
                embedding=None,
            )
        )
        assert store.search.term_frequencies(["garden"])["garden"] == before["garden"] + 1
        assert store.search.newest_day() > newest
        assert store.vectors.unembedded(0, None, 10)
        raise RuntimeError("rolled back")
    # The next write takes the mark the rolled-back one had: nothing read inside may answer.
    store.crystals.add_crystal(
        NewCrystal(
            "orbit signal",
            source="notes",
            semantic_type="fact",
            importance=0.5,
            at=now - timedelta(days=3),  # older than the newest: the newest day stays
            embedding=None,
        )
    )
    assert store.search.term_frequencies(["garden"]) == before
    assert store.search.newest_day() == newest
    assert [row[2] for row in store.vectors.unembedded(0, None, 10)] == ["orbit signal"]
