"""The crystal store, ``memory/crystals.db``: SQLite through sqlite-utils.

Schema changes happen only through the numbered migrations below. The connection runs in WAL
mode with a busy timeout, and every write is a ``BEGIN IMMEDIATE`` transaction, so several
processes can write at once without "database is locked" surprises.

Tables: ``crystals`` (+ ``crystals_fts``, kept in sync by triggers), ``meta`` (key/value),
``dreams`` (the journal), ``audit`` (every change the engine makes to a crystal), ``hormones``
(level history), ``searches`` (recall log, feeds Emerging Skills), ``gaps`` (curiosity gaps),
``runs`` (scheduled job runs).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sqlite3
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from .errors import CrystalNotFound, StoreCorrupt, WorkspaceError
from .files import FILE_MODE
from .times import iso

migrations = sqlite_utils.Migrations("dreamer")

CRYSTAL_COLUMNS = (
    "id, text, source, semantic_type, importance, lifecycle, created_at, updated_at, "
    "last_accessed_at, access_count, dopamine, cortisol, oxytocin, content_hash, parent_id, "
    "origin, consolidated_at"
)


@migrations()
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
    db["crystals"].enable_fts(
        ["text"], create_triggers=True, tokenize="porter unicode61 remove_diacritics 2"
    )
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


@migrations()
def m010_dream_cache_tokens(db: sqlite_utils.Database) -> None:
    # Prompt-cache tokens are billed differently from plain input: keep them apart.
    db.execute("ALTER TABLE dreams ADD COLUMN cache_read_tokens INTEGER")
    db.execute("ALTER TABLE dreams ADD COLUMN cache_write_tokens INTEGER")


@migrations()
def m020_hormone_source(db: sqlite_utils.Database) -> None:
    # Who caused a stimulus (note, cli, api, auto, decay), and fast "newest row" lookups.
    db.execute("ALTER TABLE hormones ADD COLUMN source TEXT")
    db.execute("CREATE INDEX hormones_at ON hormones(at)")


@dataclass
class Crystal:
    """One chunk of memory with its provenance."""

    id: int
    text: str
    source: str
    semantic_type: str
    importance: float
    lifecycle: str
    created_at: str
    updated_at: str
    last_accessed_at: str | None
    access_count: int
    dopamine: float | None
    cortisol: float | None
    oxytocin: float | None
    content_hash: str
    parent_id: int | None
    origin: str | None
    consolidated_at: str | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)


def content_hash(text: str) -> str:
    """Identity of a note's content: NFC, whitespace-normalised, SHA-256."""
    normal = " ".join(unicodedata.normalize("NFC", text).split())
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


class Store:
    """An open crystals.db."""

    def __init__(self, path: Path):
        self.path = path
        self.db = _connect(path)
        # One connection may serve several threads (an in-process agent); their transactions
        # must take turns, or one thread's COMMIT ends another's transaction half-way.
        self._write_lock = threading.RLock()

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite_utils.Database]:
        """A write transaction that takes SQLite's write lock up front (BEGIN IMMEDIATE)."""
        conn = self.db.conn
        with self._write_lock:
            if conn.in_transaction:
                yield self.db
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # --- crystals -------------------------------------------------------------------------

    def add_crystal(
        self,
        text: str,
        *,
        source: str,
        semantic_type: str,
        importance: float,
        at: datetime,
        embedding: bytes | None,
        hormones: dict[str, float] | None = None,
        lifecycle: str = "generated",
        origin: str | None = None,
        parent_id: int | None = None,
    ) -> tuple[int, bool]:
        """Insert a crystal unless one with the same content exists; return (id, created)."""
        digest = content_hash(text)
        hormones = hormones or {}
        stamp = iso(at)
        with self.write() as db:
            row = db.execute("SELECT id FROM crystals WHERE content_hash = ?", [digest]).fetchone()
            if row:
                return row[0], False
            cursor = db.execute(
                "INSERT INTO crystals (text, source, semantic_type, importance, lifecycle,"
                " created_at, updated_at, access_count, dopamine, cortisol, oxytocin,"
                " content_hash, parent_id, origin, embedding)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)",
                [text, source, semantic_type, importance, lifecycle, stamp, stamp,
                 hormones.get("dopamine"), hormones.get("cortisol"), hormones.get("oxytocin"),
                 digest, parent_id, origin, embedding],
            )
            crystal_id = cursor.lastrowid
            self.audit(crystal_id, "created", {"source": source, "lifecycle": lifecycle}, at)
            return crystal_id, True

    def find_by_hash(self, digest: str) -> int | None:
        """The id of the crystal with this content hash, if any."""
        row = self.db.execute(
            "SELECT id FROM crystals WHERE content_hash = ?", [digest]
        ).fetchone()
        return row[0] if row else None

    def get(self, crystal_id: int) -> Crystal:
        """One crystal by id, or CrystalNotFound."""
        in_range = 0 < crystal_id < 2**63  # SQLite cannot even bind a larger integer
        row = self.db.execute(
            f"SELECT {CRYSTAL_COLUMNS} FROM crystals WHERE id = ?", [crystal_id]
        ).fetchone() if in_range else None
        if row is None:
            raise CrystalNotFound(
                f"no crystal with id {crystal_id}; find ids with 'dream search QUERY'"
            )
        return Crystal(*row)

    def crystals(self, where: str = "1", params: list[Any] | None = None,
                 order_by: str = "id", limit: int | None = None) -> list[Crystal]:
        """Crystals matching a SQL condition, in order."""
        sql = f"SELECT {CRYSTAL_COLUMNS} FROM crystals WHERE {where} ORDER BY {order_by}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [Crystal(*row) for row in self.db.execute(sql, params or [])]

    def update_crystal(self, crystal_id: int, changes: dict[str, Any], *, action: str,
                       at: datetime, reason: str | None = None) -> None:
        """Change some fields of a crystal and record the change in the audit log."""
        allowed = {"importance", "lifecycle", "semantic_type", "parent_id", "consolidated_at",
                   "last_accessed_at", "access_count"}
        unknown = set(changes) - allowed
        if unknown:
            raise ValueError(f"cannot change crystal fields {sorted(unknown)}")
        with self.write() as db:
            before = self.get(crystal_id).to_dict()
            sets = ", ".join(f"{column} = ?" for column in changes)
            db.execute(
                f"UPDATE crystals SET {sets}, updated_at = ? WHERE id = ?",
                [*changes.values(), iso(at), crystal_id],
            )
            detail = {key: [before[key], value] for key, value in changes.items()}
            if reason:
                detail["reason"] = reason
            self.audit(crystal_id, action, detail, at)

    def record_access(self, ids: list[int], at: datetime) -> None:
        """Count a search hit as an access of each crystal."""
        if not ids:
            return
        with self.write() as db:
            db.conn.executemany(
                "UPDATE crystals SET access_count = access_count + 1, last_accessed_at = ?"
                " WHERE id = ?",
                [(iso(at), crystal_id) for crystal_id in ids],
            )

    def count_by_lifecycle(self) -> dict[str, int]:
        """How many crystals are in each lifecycle stage."""
        rows = self.db.execute("SELECT lifecycle, count(*) FROM crystals GROUP BY lifecycle")
        return dict(rows.fetchall())

    # --- meta, audit ----------------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        """A value from the meta table."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        """Set a value in the meta table."""
        with self.write() as db:
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value],
            )

    def audit(self, crystal_id: int | None, action: str, detail: dict[str, Any],
              at: datetime) -> None:
        """Append one line to the audit log."""
        with self.write() as db:
            db.execute(
                "INSERT INTO audit (at, crystal_id, action, detail) VALUES (?, ?, ?, ?)",
                [iso(at), crystal_id, action, json.dumps(detail, ensure_ascii=False)],
            )


def _connect(path: Path) -> sqlite_utils.Database:
    existed = path.exists()
    if not existed:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
        except OSError as e:
            raise WorkspaceError(f"cannot create {path} ({e.strerror}); check permissions") from e
    conn = None
    try:
        # SQLite silently re-initialises a short garbage file; check the magic bytes first.
        if existed and path.is_file() and path.stat().st_size:
            with path.open("rb") as handle:
                if handle.read(16) != b"SQLite format 3\x00":
                    raise sqlite3.DatabaseError("file is not a database")
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 30000")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        db = sqlite_utils.Database(conn)
        if mode.lower() != "wal":
            raise StoreCorrupt(f"{path} could not switch to WAL mode (got {mode})")
        _migrate(db, path)
        db.execute("SELECT count(*) FROM crystals").fetchone()
    except sqlite3.DatabaseError as e:
        if conn is not None:
            conn.close()
        raise StoreCorrupt(
            f"{path} is not a readable crystal database ({e}); move it aside to start a fresh "
            "one (notes still in memory/scratch.md are indexed again at the next dream)"
        ) from e
    return db


def _migrate(db: sqlite_utils.Database, path: Path) -> None:
    if not migrations.pending(db):
        return
    # Two processes opening a new workspace at once must not both run migration 1.
    lock = path.with_name(path.name + ".migrate.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        migrations.apply(db)
    finally:
        os.close(fd)
