"""The crystal store: migrations, WAL, FTS sync, audit, content-hash identity, schema."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import numpy as np
import pytest

from dreamer.embed import from_blob
from dreamer.errors import CrystalNotFound, StoreCorrupt
from dreamer.store import Store, content_hash, migrations


@pytest.fixture
def store(tmp_path):
    opened = Store(tmp_path / "crystals.db")
    yield opened
    opened.close()


def add(store: Store, text: str, now, **kwargs):
    fields = {"source": "scratch", "semantic_type": "experience", "importance": 0.5,
              "at": now, "embedding": None}
    fields.update(kwargs)
    return store.add_crystal(text, **fields)


def test_migrations_apply_once_and_reopen_is_a_no_op(tmp_path, now):
    path = tmp_path / "crystals.db"
    Store(path).close()
    names = [m.name for m in migrations._migrations]
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
    assert not migrations.pending(third.db)
    assert third.db.execute("SELECT count(*) FROM crystals").fetchone()[0] == 1
    third.close()


def test_wal_mode_and_busy_timeout(store):
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_design_columns_exist(store):
    columns = {row[1] for row in store.db.execute("PRAGMA table_info(crystals)")}
    assert {
        "text", "source", "semantic_type", "importance", "lifecycle", "created_at",
        "updated_at", "last_accessed_at", "access_count", "dopamine", "cortisol", "oxytocin",
        "content_hash", "parent_id", "embedding",
    } <= columns
    tables = set(store.db.table_names())
    assert {"crystals", "crystals_fts", "meta", "dreams", "audit", "hormones", "searches",
            "gaps", "runs"} <= tables


def test_crystal_fields_are_stored(store, now):
    vector = np.linspace(-1, 1, 8, dtype=np.float32)
    crystal_id, created = add(
        store, "Ada lives in Lisbon", now, source="seed", semantic_type="world_fact",
        importance=0.9, embedding=vector.astype(np.float16).tobytes(),
        hormones={"dopamine": 0.4, "cortisol": 0.1, "oxytocin": 0.3}, origin="MEMORY.md",
    )
    assert created
    crystal = store.get(crystal_id)
    assert (crystal.text, crystal.source, crystal.semantic_type, crystal.importance) == (
        "Ada lives in Lisbon", "seed", "world_fact", 0.9)
    assert (crystal.lifecycle, crystal.access_count, crystal.last_accessed_at) == (
        "generated", 0, None)
    assert crystal.created_at == crystal.updated_at == "2026-03-12T14:30:00Z"
    assert (crystal.dopamine, crystal.cortisol, crystal.oxytocin) == (0.4, 0.1, 0.3)
    assert crystal.content_hash == content_hash("Ada lives in Lisbon")
    assert crystal.origin == "MEMORY.md"
    blob = store.db.execute("SELECT embedding FROM crystals WHERE id = ?",
                            [crystal_id]).fetchone()[0]
    assert np.allclose(from_blob(blob), vector, atol=1e-3)


def test_fts_kept_in_sync(store, now):
    crystal_id, _ = add(store, "The deploy key rotates every Tuesday", now)
    add(store, "Unrelated note about lunch", now)
    found = store.db.execute(
        "SELECT rowid FROM crystals_fts WHERE crystals_fts MATCH ?", ["tuesday"]).fetchall()
    assert found == [(crystal_id,)]
    # Porter stemming: "rotating" finds "rotates".
    found = store.db.execute(
        "SELECT rowid FROM crystals_fts WHERE crystals_fts MATCH ?", ["rotating"]).fetchall()
    assert found == [(crystal_id,)]


def test_content_hash_identity(store, now):
    first, created = add(store, "Café  opens at\n9", now)
    assert created
    # Same content up to whitespace and Unicode normalisation: the same crystal.
    again, created_again = add(store, " Cafe\u0301 opens at 9 ", now + timedelta(hours=1))
    assert (again, created_again) == (first, False)
    other, created_other = add(store, "Café opens at 10", now)
    assert created_other and other != first
    assert store.db.execute("SELECT count(*) FROM crystals").fetchone()[0] == 2
    assert store.find_by_hash(content_hash("Café opens at 9")) == first
    assert store.get(first).text == "Café  opens at\n9"  # the first wording is kept


def test_audit_rows_for_creation_and_updates(store, now):
    crystal_id, _ = add(store, "Prefers short answers", now)
    add(store, "Prefers short answers", now)  # idempotent: no second "created" row
    later = now + timedelta(days=1)
    store.update_crystal(crystal_id, {"lifecycle": "consolidated", "importance": 0.8},
                         action="consolidate", at=later, reason="dream 1")
    rows = store.db.execute(
        "SELECT at, crystal_id, action, detail FROM audit ORDER BY id").fetchall()
    assert [(r[1], r[2]) for r in rows] == [(crystal_id, "created"), (crystal_id, "consolidate")]
    detail = json.loads(rows[1][3])
    assert detail == {"lifecycle": ["generated", "consolidated"], "importance": [0.5, 0.8],
                      "reason": "dream 1"}
    assert rows[1][0] == "2026-03-13T14:30:00Z"
    crystal = store.get(crystal_id)
    assert (crystal.lifecycle, crystal.importance, crystal.updated_at) == (
        "consolidated", 0.8, "2026-03-13T14:30:00Z")


def test_update_refuses_unknown_fields_and_text(store, now):
    crystal_id, _ = add(store, "original", now)
    with pytest.raises(ValueError, match="text"):
        store.update_crystal(crystal_id, {"text": "rewritten"}, action="edit", at=now)
    assert store.get(crystal_id).text == "original"


def test_failed_write_rolls_back(store, now):
    with pytest.raises(RuntimeError), store.write() as db:
        db.execute("INSERT INTO meta (key, value) VALUES ('k', 'v')")
        raise RuntimeError("boom")
    assert store.get_meta("k") is None
    store.set_meta("k", "v1")
    store.set_meta("k", "v2")
    assert store.get_meta("k") == "v2"


def test_record_access_counts(store, now):
    crystal_id, _ = add(store, "accessed", now)
    store.record_access([crystal_id], now)
    store.record_access([crystal_id], now + timedelta(minutes=1))
    crystal = store.get(crystal_id)
    assert (crystal.access_count, crystal.last_accessed_at) == (2, "2026-03-12T14:31:00Z")


def test_missing_crystal_names_the_fix(store):
    with pytest.raises(CrystalNotFound, match="dream search"):
        store.get(12345)


def test_two_connections_write_at_once(tmp_path, now):
    first, second = Store(tmp_path / "c.db"), Store(tmp_path / "c.db")
    try:
        with first.write():
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
