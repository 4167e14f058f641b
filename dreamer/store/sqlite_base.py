"""The SQLite connection every part of the SQLite backend shares, and its write transactions."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamer.store.sqlite_db import Database
from dreamer.support.times import iso

CRYSTAL_COLUMNS = (
    "id, text, source, semantic_type, importance, lifecycle, created_at, updated_at, "
    "last_accessed_at, access_count, dopamine, cortisol, oxytocin, content_hash, parent_id, "
    "origin, consolidated_at, embedder, about, replaces"
)


class Connected:
    """An open sqlite-utils database with write transactions that take turns across threads."""

    path: Path
    db: Database  # for SQLite-specific tests and tools; nothing outside store/

    def __init__(self, path: Path, db: Database):
        self.path = path
        self.db = db
        # One connection may serve several threads (an in-process agent); their transactions
        # must take turns, or one thread's COMMIT ends another's transaction half-way.
        self._write_lock = threading.RLock()

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction that takes SQLite's write lock up front (BEGIN IMMEDIATE)."""
        conn = self.db.conn
        with self._write_lock:
            if conn.in_transaction:
                yield
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def record_access(self, ids: Sequence[int], at: datetime) -> None:
        """Count a search hit as an access of each crystal."""
        if not ids:
            return
        with self.transaction():
            self.db.conn.executemany(
                "UPDATE crystals SET access_count = access_count + 1, last_accessed_at = ?"
                " WHERE id = ?",
                [(iso(at), crystal_id) for crystal_id in ids],
            )

    def purge(self) -> None:
        """Make what was deleted unrecoverable: merge the full-text index, checkpoint the WAL.

        With ``secure_delete`` on (every connection sets it), freed pages are zeroed; merging
        FTS5's segments drops the deleted terms it still kept; a TRUNCATE checkpoint moves every
        page into the database file and empties the WAL, so no old page image survives there.
        """
        with self.transaction():
            self.db.execute("INSERT INTO crystals_fts(crystals_fts) VALUES ('optimize')")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _one(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> Any:
        """The first column of the first row, or None."""
        row = self.db.execute(sql, list(params)).fetchone()
        return row[0] if row else None


def marks(values: Any) -> str:
    """``?, ?, ?`` for as many values."""
    return ", ".join("?" * len(values))
