"""The SQLite connection every part of the SQLite backend shares, and its write transactions."""

from __future__ import annotations

import _thread  # threading's RLock, without importing threading (~0.7 ms of a fresh note)
import atexit
import contextlib
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

from dreamer.errors import LockHeld
from dreamer.store.sqlite.db import Database
from dreamer.support.times import iso

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:
    from typing import Any
    from weakref import WeakSet

CRYSTAL_COLUMNS = (
    "id, text, source, semantic_type, importance, lifecycle, created_at, updated_at, "
    "last_accessed_at, access_count, dopamine, cortisol, oxytocin, content_hash, parent_id, "
    "origin, consolidated_at, embedder, about, replaces"
)
PURGE_ATTEMPTS = 2  # TRUNCATE checkpoints, each waiting up to the busy timeout for readers
# Searches logged in memory before one transaction writes them (with their access counts): a
# crash (kill -9, power loss) loses at most SEARCH_BATCH - 1 of them; a clean exit none.
SEARCH_BATCH = 16

# (at, redacted query, search type, result ids, top score, gap)
PendingSearch = tuple[str, str, str, tuple[int, ...], float | None, bool]


class Connected:
    """An open sqlite-utils database with write transactions that take turns across threads."""

    path: Path
    db: Database  # for SQLite-specific tests and tools; nothing outside store/

    def __init__(self, path: Path, db: Database):
        self.path = path
        self.db = db
        # One connection may serve several threads (an in-process agent); their transactions
        # must take turns, or one thread's COMMIT ends another's transaction half-way.
        self._write_lock = _thread.RLock()
        # Searches not written yet (see SEARCH_BATCH): the next write transaction of this
        # connection writes them first, and so do close, interpreter exit and every read of
        # the log or of access counts through this store.
        self._pending: list[PendingSearch] = []
        # Rows this connection changed writing the search log (and access counts): no change
        # of what a search reads, so they do not move the store's change mark.
        self._log_changes = 0

    def close(self) -> None:
        """Write the searches still pending, then close the connection."""
        with self._write_lock:
            try:
                self.settle()
            finally:
                if _unwritten is not None:
                    _unwritten.discard(self)
                self.db.close()

    def settle(self) -> None:
        """Write the searches logged since the last write (one transaction)."""
        if not self._pending:
            return  # the common case: a read need not wait for another thread's transaction
        with self._write_lock:
            if self._pending:
                with self.transaction():
                    pass  # a transaction writes the pending searches first

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction that takes SQLite's write lock up front (BEGIN IMMEDIATE).

        It starts by writing the searches pending in memory, so they commit (or roll back, and
        stay pending) with it, and a forget or redaction inside it finds them in the tables.
        """
        conn = self.db.conn
        with self._write_lock:
            if conn.in_transaction:
                yield
                return
            conn.execute("BEGIN IMMEDIATE")
            written = list(self._pending)
            try:
                if written:
                    self._write_searches(written)
                yield
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            if written:
                done = {id(entry) for entry in written}
                self._pending = [entry for entry in self._pending if id(entry) not in done]

    def _write_searches(self, batch: list[PendingSearch]) -> None:
        """Insert searches, their gaps and their access counts (inside a transaction)."""
        conn = self.db.conn
        before = conn.total_changes
        try:
            self._insert_searches(batch)
        finally:
            self._log_changes += conn.total_changes - before

    def _insert_searches(self, batch: list[PendingSearch]) -> None:
        conn = self.db.conn
        conn.executemany(
            "INSERT INTO searches (at, query, search_type, result_ids, top_score)"
            " VALUES (?, ?, ?, ?, ?)",
            [(at, query, kind, _id_list(ids), top) for at, query, kind, ids, top, _ in batch],
        )
        gaps = [(at, query, top) for at, query, _, _, top, gap in batch if gap]
        if gaps:
            conn.executemany("INSERT INTO gaps (at, query, top_score) VALUES (?, ?, ?)", gaps)
        # Each crystal once: its count goes up by the searches that returned it, and its last
        # access is the latest of them (the batch is in order).
        counts: dict[int, list[Any]] = {}
        for at, _, _, ids, _, _ in batch:
            for crystal_id in ids:
                entry = counts.setdefault(crystal_id, [0, at])
                entry[0] += 1
                entry[1] = at
        if counts:
            conn.executemany(
                "UPDATE crystals SET access_count = access_count + ?, last_accessed_at = ?"
                " WHERE id = ?",
                [(count, at, crystal_id) for crystal_id, (count, at) in counts.items()],
            )

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


def _id_list(ids: Sequence[int]) -> str:
    """The JSON list of ids the searches table keeps (as ``json.dumps`` writes it)."""
    return "[" + ", ".join(str(int(i)) for i in ids) + "]"


# Stores that kept searches in memory, whose searches a clean exit writes if nothing wrote
# them first (held weakly, so a store nobody holds may go). Made by the first search kept:
# importing weakref costs a fresh note, which keeps none, ~1 ms.
_unwritten: WeakSet[Connected] | None = None


def write_at_exit(store: Connected) -> None:
    """Have ``store``'s pending searches written at a clean exit, if nothing writes them first."""
    global _unwritten
    if _unwritten is None:
        from weakref import WeakSet

        _unwritten = WeakSet()
    _unwritten.add(store)


@atexit.register
def _settle_at_exit() -> None:
    """At a clean exit, write what open stores still hold (a store left unclosed included)."""
    for store in list(_unwritten or ()):
        try:
            store.settle()
        except Exception as e:  # noqa: BLE001  (one line per store, then the next store)
            print(f"dreamer: {len(store._pending)} searches were not logged: {e}", file=sys.stderr)


def marks(values: Any) -> str:
    """``?, ?, ?`` for as many values."""
    return ", ".join("?" * len(values))
