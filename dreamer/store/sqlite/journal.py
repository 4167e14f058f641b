"""The dream journal and scheduled runs in SQLite: the ``dreams`` and ``runs`` tables."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dreamer.errors import DreamNotFound
from dreamer.store.records import JSON_FIELDS, decode
from dreamer.store.sqlite.base import Connected, marks


class JournalTables(Connected):
    """The ``dreams`` and ``runs`` tables, and the rewrite of every text beside the crystals."""

    def record_dream(self, row: Mapping[str, Any]) -> int:
        """Append one dream to the journal; return its id."""
        values = {
            key: (
                json.dumps(value, ensure_ascii=False, default=str)
                if key in JSON_FIELDS and value is not None
                else value
            )
            for key, value in row.items()
        }
        with self.transaction():
            cursor = self.db.execute(
                f"INSERT INTO dreams ({', '.join(values)}) VALUES ({marks(values)})",
                list(values.values()),
            )
            return int(cursor.lastrowid or 0)

    def get_dream(self, dream_id: int) -> dict[str, Any]:
        """One dream, every field (JSON fields decoded), or DreamNotFound."""
        cursor = self.db.execute("SELECT * FROM dreams WHERE id = ?", [int(dream_id)])
        values = cursor.fetchone()
        if values is None:
            raise DreamNotFound(f"no dream with id {dream_id}; list them with 'dream log'")
        return decode(dict(zip([d[0] for d in cursor.description], values, strict=True)))
