"""What is particular to the SQLite store: migrations, WAL, FTS sync, schema, damaged files.

Behaviour every backend shares is in test_store_contract.py."""

from __future__ import annotations

import sqlite3

import pytest
import sqlite_utils

from dreamer.errors import StoreCorrupt
from dreamer.store import NewCrystal
from dreamer.store.sqlite.schema import migrations
from dreamer.store.sqlite.store import SQLiteStore as Store


@pytest.fixture
def store(tmp_path):
    opened = Store(tmp_path / "crystals.db")
    yield opened
    opened.close()


def add(store: Store, text: str, now, **kwargs):
    fields = {
        "source": "scratch",
        "semantic_type": "experience",
        "importance": 0.5,
        "at": now,
        "embedding": None,
    }
    fields.update(kwargs)
    return store.crystals.add_crystal(NewCrystal(text, **fields))


def test_migrations_apply_once_and_reopen_is_a_no_op(tmp_path, now):
    path = tmp_path / "crystals.db"
    Store(path).close()
    names = [m.name for m in migrations()._migrations]
    conn = sqlite3.connect(path)
    applied = conn.execute("SELECT name, applied_at FROM _sqlite_migrations ORDER BY id").fetchall()
    conn.close()
    assert [name for name, _ in applied] == names
    assert names[0] == "m001_initial"
    second = Store(path)
    add(second, "kept across re-open", now)
    second.close()
    third = Store(path)
    again = third.db.execute("SELECT name, applied_at FROM _sqlite_migrations ORDER BY id")
    assert again.fetchall() == applied  # nothing re-applied, nothing re-recorded
    assert not migrations().pending(sqlite_utils.Database(third.db.conn, execute_plugins=False))
    assert third.db.execute("SELECT count(*) FROM crystals").fetchone()[0] == 1
    third.close()


def test_wal_mode_and_busy_timeout(store):
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_design_columns_exist(store):
    columns = {row[1] for row in store.db.execute("PRAGMA table_info(crystals)")}
    assert {
        "text",
        "source",
        "semantic_type",
        "importance",
        "lifecycle",
        "created_at",
        "updated_at",
        "last_accessed_at",
        "access_count",
        "dopamine",
        "cortisol",
        "oxytocin",
        "content_hash",
        "parent_id",
        "embedding",
    } <= columns
    tables = {
        row[0] for row in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    assert {
        "crystals",
        "crystals_fts",
        "meta",
        "dreams",
        "audit",
        "hormones",
        "searches",
        "gaps",
        "runs",
    } <= tables


def test_fts_kept_in_sync(store, now):
    crystal_id, _ = add(store, "The deploy key rotates every Tuesday", now)
    add(store, "Unrelated note about lunch", now)
    found = store.db.execute(
        "SELECT rowid FROM crystals_fts WHERE crystals_fts MATCH ?", ["tuesday"]
    ).fetchall()
    assert found == [(crystal_id,)]
    # Porter stemming: "rotating" finds "rotates".
    found = store.db.execute(
        "SELECT rowid FROM crystals_fts WHERE crystals_fts MATCH ?", ["rotating"]
    ).fetchall()
    assert found == [(crystal_id,)]


def test_two_connections_write_at_once(tmp_path, now):
    first, second = Store(tmp_path / "c.db"), Store(tmp_path / "c.db")
    try:
        with first.transaction():
            add(first, "from the first connection", now)
            # The second writer waits on the busy timeout rather than failing at once; here
            # it would wait for us, so just check it sees nothing uncommitted.
            assert second.db.execute("SELECT count(*) FROM crystals").fetchone()[0] == 0
        add(second, "from the second connection", now)
        assert first.db.execute("SELECT count(*) FROM crystals").fetchone()[0] == 2
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize(
    "garbage",
    [b"this is not a database at all\n" * 40, b"SQLite format 3\x00" + b"\xff" * 4000, b"\x00"],
)
def test_corrupt_database_raises_store_corrupt_and_is_left_alone(tmp_path, garbage):
    path = tmp_path / "crystals.db"
    path.write_bytes(garbage)
    with pytest.raises(StoreCorrupt, match="move it aside") as caught:
        Store(path)
    assert "\n" not in str(caught.value)
    assert path.read_bytes() == garbage


def test_vectors_stored_before_embedders_were_recorded_are_marked_hashing(tmp_path, now):
    path = tmp_path / "crystals.db"
    store = Store(path)
    add(store, "with a vector", now, embedding=b"\x00\x3c" * 384)
    add(store, "without a vector", now)
    store.close()
    # Take the database back to before migration m030, as an older dreamer left it.
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE crystals DROP COLUMN embedder")
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm030_vector_embedder'")
    conn.commit()
    conn.close()
    upgraded = Store(path)
    assert [c.embedder for c in upgraded.crystals.select()] == ["hashing-v1-384", None]
    upgraded.close()


def test_opening_a_second_store_keeps_the_locks_the_first_holds(tmp_path, now):
    """Closing any descriptor of the database drops every POSIX lock the process holds on it,
    those of SQLite's open connections included. Opening a store must not read the file itself:
    with the locks gone, another process closing its last connection took itself for the only
    one, checkpointed and deleted the WAL under the open store (a dream serve's workers and a
    note writer corrupted the database this way)."""
    import subprocess
    import sys

    path = tmp_path / "crystals.db"
    first = Store(path)
    add(first, "the first store writes", now)  # the WAL now holds a write
    second = Store(path)  # the same file opened again in this process (a worker thread does)
    other = (
        "import sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA journal_mode').fetchone()\n"
        "c.execute('INSERT INTO meta (key, value) VALUES (?, ?)', ['elsewhere', '1'])\n"
        "c.close()\n"  # the last connection would checkpoint and delete the WAL
    )
    subprocess.run([sys.executable, "-c", other, str(path)], check=True, timeout=60)
    assert path.with_name("crystals.db-wal").exists()  # others still have it open
    add(first, "and writes again", now)
    second.close()
    first.close()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA quick_check").fetchone() == ("ok",)
    texts = {row[0] for row in check.execute("SELECT text FROM crystals")}
    assert {"the first store writes", "and writes again"} <= texts
    check.close()


def test_word_counts_read_in_a_write_transaction_that_rolls_back_are_not_kept(store, now):
    """The counts are kept while the store's change mark stands; a rollback does not move it
    back, so counts read inside a write transaction must not outlive it."""
    add(store, "the zebra crossing", now)
    with pytest.raises(RuntimeError), store.transaction():
        add(store, "a zebra at the zoo", now)
        assert store.search.term_frequencies(["zebra"]) == {"zebra": 2}
        raise RuntimeError("rolled back")
    assert store.search.term_frequencies(["zebra"]) == {"zebra": 1}


def test_a_name_no_table_group_has_is_an_attribute_error(tmp_path):
    fresh = Store(tmp_path / "other.db")
    try:
        with pytest.raises(AttributeError, match="acquire_lease"):
            fresh.acquire_lease  # noqa: B018 - the lookup is the test
        assert not hasattr(fresh, "__wrapped__")
    finally:
        fresh.close()
