"""What SQLite keeps beside the crystals that a note writes too: meta and hormone rows.

Reading the hormone history back (for the tick, the dream and reports) is ``history.py``; the
dream journal and scheduled runs are ``journal.py``."""

from __future__ import annotations

from dreamer.store.sqlite.base import Connected

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:  # the contract: a note loads none of it
    from dreamer.store.base import HormoneRow


class RecordTables(Connected):
    """The ``meta`` and ``hormones`` tables."""

    # --- meta -------------------------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        """A value from the meta table."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else default

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

    # --- hormones ---------------------------------------------------------------------------

    def hormones_at(self, until: str) -> HormoneRow | None:
        """The newest stored levels at or before ``until``."""
        row = self.db.execute(
            "SELECT at, dopamine, cortisol, oxytocin FROM hormones WHERE at <= ?"
            " ORDER BY at DESC, id DESC LIMIT 1",
            [until],
        ).fetchone()
        return tuple(row) if row else None
