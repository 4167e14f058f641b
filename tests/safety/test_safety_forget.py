"""A forget leaves no trace of the text, in each place it could hide, on both backends.

Each test looks at one place a careless forget would leave the text: the scratch file, the
crystal's vector, the search log, the full-text index, the database file's bytes (its free pages
and WAL, which only the purge clears) and, on PostgreSQL, the stored tsvector. The database is
read the way anyone holding the file could read it: sqlite3 on the file, psycopg on the server.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import timedelta

import pytest

from dreamer import Workspace

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

TARGET = "The quokka marmalade recipe from Zanzibar needs seven cardamom pods"
WORD = "marmalade"
OTHERS = [
    "Maya prefers concise answers with the code first",
    "The billing service deploys on Tuesdays",
    "Priya approves the releases of the payments team",
    "The analytics report is due on April 3",
]


def _prepare(ws, now):
    for n, text in enumerate([*OTHERS, TARGET]):
        ws.note(text, at=now - timedelta(minutes=30 - n))
    ws.search("quokka marmalade recipe Zanzibar cardamom", now=now)  # the search log keeps it
    (hit,) = [h for h in ws.search("quokka marmalade", now=now) if WORD in h.text]
    return hit.id


@pytest.fixture
def forgotten(ws, now):
    """A SQLite workspace, still open, right after the target note was forgotten."""
    crystal_id = _prepare(ws, now)
    ((vector,),) = _rows(ws, "SELECT embedding FROM crystals WHERE id = ?", [crystal_id])
    assert vector  # a vector that the forget must take away
    report = ws.forget([crystal_id], reason="asked by the user", now=now + timedelta(minutes=1))
    assert report.forgotten == [crystal_id] and report.scratch_notes == 1
    return ws, Forgotten(crystal_id, vector)


@dataclass
class Forgotten:
    id: int
    embedding: bytes


def _rows(ws, sql, params=()):
    db = sqlite3.connect(f"file:{ws.db_path}?mode=ro", uri=True)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


@pytest.mark.slow
def test_the_note_leaves_the_scratch_file(forgotten):
    ws, _ = forgotten
    data = ws.scratch_path.read_bytes()
    assert WORD.encode() not in data
    assert [n.text for n in ws.scratch.notes()] == OTHERS


@pytest.mark.slow
def test_the_vector_is_gone(forgotten):
    ws, crystal = forgotten
    assert _rows(ws, "SELECT embedding, embedder FROM crystals WHERE id = ?", [crystal.id]) == [
        (None, None)
    ]


@pytest.mark.slow
def test_the_search_log_forgets_the_query(forgotten):
    ws, _ = forgotten
    queries = [q for (q,) in _rows(ws, "SELECT query FROM searches")]
    assert len(queries) == 2 and not any(WORD in q for q in queries)


@pytest.mark.slow
def test_the_full_text_index_forgets_the_words(forgotten):
    ws, crystal = forgotten
    assert _rows(ws, "SELECT rowid FROM crystals_fts WHERE crystals_fts MATCH ?", [WORD]) == []
    assert all(crystal.id != hit.id for hit in ws.search("quokka marmalade Zanzibar"))


def test_no_byte_of_the_text_or_its_vector_is_left_in_the_database_files(forgotten):
    ws, crystal = forgotten
    data = b"".join(p.read_bytes() for p in ws.memory_dir.glob("crystals.db*"))
    # Free pages, the WAL and the full-text index's segments (which hold lower-cased stems)
    for word in (WORD, "Zanzibar", "zanzibar", "marmalad", "quokka", "cardamom"):
        assert word.encode() not in data, word
    assert crystal.embedding not in data


def test_no_file_of_the_workspace_keeps_the_vector_or_its_sketch(forgotten):
    import numpy as np

    from dreamer.retrieval.vector_file import projection, sketch_of

    ws, crystal = forgotten
    assert (ws.memory_dir / "vectors.bin").is_file()  # the searches scanned it before
    vector = np.frombuffer(crystal.embedding, dtype=np.float16).reshape(1, -1)
    sketch = sketch_of(vector, projection(vector.shape[1]))[0].tobytes()
    for path in (p for p in ws.root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        assert crystal.embedding not in data and sketch not in data, path.name


def test_on_postgres_the_tsvector_and_the_rows_forget_too(pg_database, tmp_path, now):
    import psycopg

    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}) as ws:
        ws.init()
        crystal_id = _prepare(ws, now)
        ws.forget([crystal_id], now=now + timedelta(minutes=1))
        with psycopg.connect(pg_database) as db:
            row = db.execute(
                "SELECT text, embedding IS NULL, tsv::text FROM crystals WHERE id = %s",
                [crystal_id],
            ).fetchone()
            matches = db.execute(
                "SELECT count(*) FROM crystals WHERE tsv @@ to_tsquery('simple', %s)",
                ["marmalad:* | zanzibar:* | quokka:*"],
            ).fetchone()
            # The inverted index and the term counts held the words too.
            stems = ["marmalad", "zanzibar", "quokka", "cardamom"]
            postings = db.execute(
                "SELECT count(*) FROM postings WHERE crystal_id = %s OR lexeme = ANY(%s)",
                [crystal_id, stems],
            ).fetchone()
            terms = db.execute(
                "SELECT count(*) FROM terms WHERE lexeme = ANY(%s)", [stems]
            ).fetchone()
            queries = [q for (q,) in db.execute("SELECT query FROM searches").fetchall()]
            pending = [t for (t,) in db.execute("SELECT text FROM scratch").fetchall()]
    assert row == ("", True, "")
    assert matches == (0,)
    assert postings == (0,) and terms == (0,)
    assert len(queries) == 2 and not any(WORD in q for q in queries)
    assert len(pending) == len(OTHERS) and not any(WORD in t for t in pending)


@pytest.mark.slow
def test_the_audit_keeps_why_and_never_what(forgotten):
    ws, crystal = forgotten
    (entry,) = [e for e in ws.store.records.audit_entries(crystal.id) if e["action"] == "forgotten"]
    assert entry["detail"] == {"reason": "asked by the user"}


def test_a_rewrite_of_the_records_counts_each_changed_row_once(ws, now):
    from dreamer.store.records import REWRITTEN

    for query in ("zebra crossing times", "where is the quokka zebra", "billing deploy day"):
        ws.search(query, now=now)
    ws.store.settle()  # the search log is written in batches; another reader sees it now

    def holding(word: str) -> int:
        return sum(
            1
            for table, columns in REWRITTEN.items()
            for row in _rows(ws, f"SELECT {', '.join(columns)} FROM {table}")
            if any(isinstance(value, str) and word in value for value in row)
        )

    expected = holding("zebra")
    assert expected >= 2
    assert (
        ws.store.forgetting.rewrite_texts(lambda value: value.replace("zebra", "horse")) == expected
    )
    assert holding("zebra") == 0 and holding("horse") == expected
    assert ws.store.forgetting.rewrite_texts(lambda value: value.replace("zebra", "horse")) == 0
