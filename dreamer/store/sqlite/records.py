"""SQLite's meta table: the writes and prefix reads whose SQL is its own.

Hormone rows, their history read back, and a meta value by key are shared bodies
(``dreamer.store.shared_records``); the journal is ``journal.py``, history ``history.py``."""

from __future__ import annotations

from dreamer.store.shared_records import SharedRecords
from dreamer.store.sqlite.base import Connected


class RecordTables(Connected, SharedRecords):
    """The ``meta`` table."""

    def set_meta(self, key: str, value: str) -> None:
        """Set a value in the meta table."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value],
            )

    def meta_items(self, prefix: str) -> list[tuple[str, str]]:
        """The (key, value) pairs of the meta table whose key starts with ``prefix``."""
        rows = self.db.execute(
            "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ? ORDER BY key",
            [len(prefix), prefix],
        ).fetchall()
        return [(row[0], row[1]) for row in rows]
