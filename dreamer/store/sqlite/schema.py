"""The SQLite schema, changed only through these numbered migrations (sqlite-utils).

``MIGRATIONS`` is the one list: ``db.is_current`` reads their names to tell, without
sqlite-utils, whether one is pending; ``migrations()`` hands them to sqlite-utils to apply.

Tables: ``crystals`` (+ ``crystals_fts``, kept in sync by triggers), ``meta`` (key/value),
``dreams`` (the journal), ``audit`` (every change the engine makes to a crystal), ``hormones``
(level history), ``searches`` (recall log, feeds Emerging Skills), ``gaps`` (curiosity gaps),
``runs`` (scheduled job runs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # sqlite-utils loads only when a migration is pending (connect._migrate)
    import sqlite_utils

MIGRATION_SET = "dreamer"
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"  # crystals_fts, as migration 1 made it


def m001_initial(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE crystals (
            id INTEGER PRIMARY KEY,
            text TEXT NOT NULL,
            source TEXT NOT NULL,
            semantic_type TEXT NOT NULL,
            importance REAL NOT NULL,
            lifecycle TEXT NOT NULL DEFAULT 'generated',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            last_accessed_at TEXT,
            access_count INTEGER NOT NULL DEFAULT 0,
            dopamine REAL,
            cortisol REAL,
            oxytocin REAL,
            content_hash TEXT NOT NULL UNIQUE,
            parent_id INTEGER REFERENCES crystals(id),
            origin TEXT,
            consolidated_at TEXT,
            embedding BLOB
        )
        """
    )
    db.execute("CREATE INDEX crystals_created ON crystals(created_at)")
    db.execute("CREATE INDEX crystals_lifecycle ON crystals(lifecycle)")
    db.execute("CREATE INDEX crystals_source ON crystals(source)")
    db.table("crystals").enable_fts(["text"], create_triggers=True, tokenize=FTS_TOKENIZER)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute(
        """
        CREATE TABLE dreams (
            id INTEGER PRIMARY KEY,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            outcome TEXT NOT NULL,
            reason TEXT,
            synthesizer TEXT,
            model TEXT,
            inputs TEXT,
            old_state TEXT,
            new_state TEXT,
            draft TEXT,
            critiques TEXT,
            revisions TEXT,
            consumed TEXT,
            input_tokens INTEGER,
            output_tokens INTEGER,
            cost_usd REAL,
            error TEXT,
            raw TEXT
        )
        """
    )
    db.execute(
        """
        CREATE TABLE audit (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            crystal_id INTEGER,
            action TEXT NOT NULL,
            detail TEXT
        )
        """
    )
    db.execute("CREATE INDEX audit_crystal ON audit(crystal_id)")
    db.execute(
        """
        CREATE TABLE hormones (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            dopamine REAL NOT NULL,
            cortisol REAL NOT NULL,
            oxytocin REAL NOT NULL,
            hormone TEXT,
            delta REAL,
            reason TEXT
        )
        """
    )
    db.execute(
        """
        CREATE TABLE searches (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            query TEXT NOT NULL,
            search_type TEXT NOT NULL,
            result_ids TEXT NOT NULL,
            top_score REAL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE gaps (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            query TEXT NOT NULL,
            top_score REAL,
            resolved_at TEXT
        )
        """
    )
    db.execute(
        """
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            job TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            outcome TEXT NOT NULL,
            detail TEXT
        )
        """
    )
    db.execute("CREATE INDEX runs_job ON runs(job, started_at)")


def m010_dream_cache_tokens(db: sqlite_utils.Database) -> None:
    # Prompt-cache tokens are billed differently from plain input: keep them apart.
    db.execute("ALTER TABLE dreams ADD COLUMN cache_read_tokens INTEGER")
    db.execute("ALTER TABLE dreams ADD COLUMN cache_write_tokens INTEGER")


def m020_hormone_source(db: sqlite_utils.Database) -> None:
    # Who caused a stimulus (note, cli, api, auto, decay), and fast "newest row" lookups.
    db.execute("ALTER TABLE hormones ADD COLUMN source TEXT")
    db.execute("CREATE INDEX hormones_at ON hormones(at)")


def m030_vector_embedder(db: sqlite_utils.Database) -> None:
    # A vector is comparable only with vectors of the same embedder: record which one made it.
    # Every vector stored before this migration came from the only embedder there was.
    db.execute("ALTER TABLE crystals ADD COLUMN embedder TEXT")
    db.execute("UPDATE crystals SET embedder = 'hashing-v1-384' WHERE embedding IS NOT NULL")


def m040_tombstones(db: sqlite_utils.Database) -> None:
    # An explicit forget empties a crystal's row (text, vector) and keeps here what remains:
    # its id, the hash of what it said, its dates and why. The crystal row stays, emptied, so
    # its id is never reused.
    db.execute(
        """
        CREATE TABLE tombstones (
            crystal_id INTEGER PRIMARY KEY,
            content_hash TEXT NOT NULL,
            source TEXT NOT NULL,
            created_at TEXT NOT NULL,
            forgotten_at TEXT NOT NULL,
            reason TEXT NOT NULL
        )
        """
    )


def m050_unembedded(db: sqlite_utils.Database) -> None:
    # A fresh `dream note` stores its crystal without a vector (the next search or tick embeds
    # it): finding those must not scan every crystal, on every search.
    db.execute(
        "CREATE INDEX crystals_unembedded ON crystals(id)"
        " WHERE embedding IS NULL AND lifecycle != 'forgotten'"
    )


def m060_fts_follows_text(db: sqlite_utils.Database) -> None:
    # The full-text row is rebuilt when the text changes, not on every update of the row: a
    # search counting an access of a 10 MB crystal re-tokenized all of it (seconds, each time).
    db.execute("DROP TRIGGER IF EXISTS crystals_au")
    db.execute(
        """
        CREATE TRIGGER crystals_au AFTER UPDATE OF text ON crystals BEGIN
          INSERT INTO crystals_fts (crystals_fts, rowid, text)
            VALUES('delete', old.rowid, old.text);
          INSERT INTO crystals_fts (rowid, text) VALUES (new.rowid, new.text);
        END
        """
    )


def m061_note_fields(db: sqlite_utils.Database) -> None:
    # What a note is about and what it replaces, as its writer gave them (issue 24): a note
    # that names what it replaces supersedes it exactly at the next dream.
    db.execute("ALTER TABLE crystals ADD COLUMN about TEXT")
    db.execute("ALTER TABLE crystals ADD COLUMN replaces TEXT")
    db.execute("CREATE INDEX crystals_about ON crystals(lower(about)) WHERE about IS NOT NULL")


def m070_rank_index(db: sqlite_utils.Database) -> None:
    # A search reads what it ranks by (source, date, importance, lifecycle) for hundreds of
    # crystals: from this narrow index (about 80 crystals a page) instead of the rows, which
    # hold the text and the vector (a few a page), that read takes half the time.
    db.execute(
        "CREATE INDEX crystals_rank ON crystals(id, source, created_at, importance, lifecycle)"
        " WHERE lifecycle != 'forgotten'"
    )


def m071_accessed(db: sqlite_utils.Database) -> None:
    # A dream reads the crystals searches found lately (touched_since): by this index, not by
    # reading every crystal of a store with little recent activity.
    db.execute(
        "CREATE INDEX crystals_accessed ON crystals(last_accessed_at)"
        " WHERE last_accessed_at IS NOT NULL"
    )


def m080_speaker(db: sqlite_utils.Database) -> None:
    # Who said a crystal's words (the user, the agent, a tool ...): only some speakers may set
    # a rule (DESIGN.md, "Who said what"). Older crystals keep NULL: not recorded.
    db.execute("ALTER TABLE crystals ADD COLUMN speaker TEXT")


# In the order they apply; a new migration is a function above and its name here.
MIGRATIONS: tuple[Callable[[sqlite_utils.Database], None], ...] = (
    m001_initial,
    m010_dream_cache_tokens,
    m020_hormone_source,
    m030_vector_embedder,
    m040_tombstones,
    m050_unembedded,
    m060_fts_follows_text,
    m061_note_fields,
    m070_rank_index,
    m071_accessed,
    m080_speaker,
)


def migrations() -> sqlite_utils.Migrations:
    """``MIGRATIONS`` as sqlite-utils' migration set (imports sqlite-utils)."""
    import sqlite_utils

    found = sqlite_utils.Migrations(MIGRATION_SET)
    for migration in MIGRATIONS:
        found()(migration)
    return found
