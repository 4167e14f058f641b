"""The SQLite connection every part of the SQLite backend shares, and its write transactions."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamer.errors import LockHeld
from dreamer.store.sqlite.db import Database
from dreamer.support.times import iso

CRYSTAL_COLUMNS = (
    "id, text, source, semantic_type, importance, lifecycle, created_at, updated_at, "
    "last_accessed_at, access_count, dopamine, cortisol, oxytocin, content_hash, parent_id, "
    "origin, consolidated_at, embedder, about, replaces"
)
PURGE_ATTEMPTS = 2  # TRUNCATE checkpoints, each waiting up to the busy timeout for readers


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
        """Make what was deleted unrecoverable: merge the full-text index, rebuild the file,
        checkpoint the WAL.

        Merging FTS5's segments drops the deleted terms it still kept. ``secure_delete`` (every
        dreamer connection sets it) zeroes what dreamer frees, but not what a writer without it
        freed (an older dreamer, a tool opened on the file): VACUUM rebuilds the file, so no
        free page and no unused cell space is left with old bytes. A TRUNCATE checkpoint then
        moves every page into the database file and empties the WAL; it waits (busy timeout)
        for readers of an older snapshot, and a reader that stays says so as LockHeld.
        """
        with self.transaction():
            self.db.execute("INSERT INTO crystals_fts(crystals_fts) VALUES ('optimize')")
        with self._write_lock:  # VACUUM needs the connection to itself
            self.db.execute("VACUUM")
            for _ in range(PURGE_ATTEMPTS):
                if not self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:
                    return
        raise LockHeld(
            "another process kept reading crystals.db, so its -wal file may still hold old "
            "pages of what was removed; stop that process (dream serve, dream mcp) and run "
            "'dream redact --scan' to purge again"
        )

    def _one(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> Any:
        """The first column of the first row, or None."""
        row = self.db.execute(sql, list(params)).fetchone()
        return row[0] if row else None


def marks(values: Any) -> str:
    """``?, ?, ?`` for as many values."""
    return ", ".join("?" * len(values))
