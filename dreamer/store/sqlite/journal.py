"""The dream journal and scheduled runs in SQLite: the ``dreams`` and ``runs`` tables."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dreamer.store.records import JSON_FIELDS
from dreamer.store.shared_records import SharedRecords
from dreamer.store.sqlite.base import Connected, marks


class JournalTables(Connected, SharedRecords):
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
