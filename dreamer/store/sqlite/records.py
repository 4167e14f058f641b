"""What SQLite keeps beside the crystals that a note writes too: meta and hormone history.

The dream journal and scheduled runs are ``journal.py``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from dreamer.config import HORMONES
from dreamer.store.records import HISTORY_FIELDS
from dreamer.store.sqlite.base import Connected
from dreamer.support.times import iso

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:  # the contract: a note loads none of it
    from typing import Any

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

    def add_hormone_row(
        self,
        at: datetime,
        levels: Mapping[str, float],
        hormone: str | None,
        delta: float | None,
        reason: str,
        source: str,
    ) -> None:
        """Store the levels right after a stimulus (or a decay snapshot, with no hormone)."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO hormones (at, dopamine, cortisol, oxytocin, hormone, delta, reason,"
                " source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    iso(at),
                    *(round(levels[name], 6) for name in HORMONES),
                    hormone,
                    delta,
                    reason,
                    source,
                ],
            )

    def hormones_at(self, until: str) -> HormoneRow | None:
        """The newest stored levels at or before ``until``."""
        row = self.db.execute(
            "SELECT at, dopamine, cortisol, oxytocin FROM hormones WHERE at <= ?"
            " ORDER BY at DESC, id DESC LIMIT 1",
            [until],
        ).fetchone()
        return tuple(row) if row else None

    def hormones_at_row(self, row_id: int) -> HormoneRow | None:
        """The newest stored levels among rows with id at most ``row_id``."""
        row = self.db.execute(
            "SELECT at, dopamine, cortisol, oxytocin FROM hormones WHERE id <= ?"
            " ORDER BY at DESC, id DESC LIMIT 1",
            [row_id],
        ).fetchone()
        return tuple(row) if row else None

    def hormone_rows_after(
        self, after_id: int, until: str
    ) -> list[tuple[int, str, float, float, float]]:
        """(id, at, dopamine, cortisol, oxytocin) of rows after ``after_id`` up to ``until``."""
        return [
            tuple(row)
            for row in self.db.execute(
                "SELECT id, at, dopamine, cortisol, oxytocin FROM hormones WHERE id > ? AND at <= ?"
                " ORDER BY at, id",
                [after_id, until],
            )
        ]

    def hormone_history(self, limit: int, *, stimuli_only: bool = False) -> list[dict[str, Any]]:
        """The newest history rows, newest first."""
        where = "WHERE hormone IS NOT NULL" if stimuli_only else ""
        rows = self.db.execute(
            f"SELECT {', '.join(HISTORY_FIELDS)} FROM hormones {where}"
            " ORDER BY at DESC, id DESC LIMIT ?",
            [int(limit)],
        ).fetchall()
        return [dict(zip(HISTORY_FIELDS, row, strict=True)) for row in rows]

    def stimuli_between(self, since: str, until: str, limit: int) -> list[dict[str, Any]]:
        """Stimuli (rows with a hormone) after ``since`` up to ``until``, oldest first."""
        rows = self.db.execute(
            f"SELECT {', '.join(HISTORY_FIELDS)} FROM hormones WHERE hormone IS NOT NULL"
            " AND at > ? AND at <= ? ORDER BY at, id LIMIT ?",
            [since, until, int(limit)],
        ).fetchall()
        return [dict(zip(HISTORY_FIELDS, row, strict=True)) for row in rows]

    def stimulus_reasons(self, hormone: str, until: str, limit: int) -> list[str]:
        """Reasons of the newest positive stimuli of ``hormone`` up to ``until`` (non-empty)."""
        return [
            row[0]
            for row in self.db.execute(
                "SELECT reason FROM hormones WHERE hormone = ? AND delta > 0 AND at <= ?"
                " AND reason != '' ORDER BY at DESC, id DESC LIMIT ?",
                [hormone, until, limit],
            )
        ]
