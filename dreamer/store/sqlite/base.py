"""The SQLite connection every part of the SQLite backend shares, and its write transactions."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from dreamer.store.shared import PendingSearch, SharedTables
from dreamer.store.sqlite.db import Database


class Connected(SharedTables):
    """An open sqlite-utils database with write transactions that take turns across threads."""

    path: Path
    db: Database  # for SQLite-specific tests and tools; nothing outside store/

    def __init__(self, path: Path, db: Database):
        self.path = path
        self.db = db
        # One connection may serve several threads (an in-process agent); their transactions
        # must take turns, or one thread's COMMIT ends another's transaction half-way.
        self._write_lock = threading.RLock()
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
                self._closed()
                self.db.close()

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
        """Insert searches kept in memory: the search tables' (``search.py``), the only ones that
        keep any."""
        raise NotImplementedError

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Every row of a statement."""
        return self.db.execute(sql, list(params)).fetchall()

    def _write(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run one writing statement."""
        self.db.execute(sql, list(params))

    def _mine(self) -> tuple[str, list[Any]]:
        """Every row of the file is this store's."""
        return "1 = 1", []

    def _owned(self, row: dict[str, Any]) -> dict[str, Any]:
        """A row needs no owner column in its workspace's own file."""
        return row

    def _turns(self) -> Any:
        """The lock write transactions take turns with."""
        return self._write_lock

    def _one(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> Any:
        """The first column of the first row, or None."""
        row = self.db.execute(sql, list(params)).fetchone()
        return row[0] if row else None


def marks(values: Any) -> str:
    """``?, ?, ?`` for as many values."""
    return ", ".join("?" * len(values))
