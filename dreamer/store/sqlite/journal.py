"""The dream journal and scheduled runs in SQLite: the ``dreams`` and ``runs`` tables."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
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

    def dream_totals(self) -> dict[str, float | int]:
        """What every dream together used: dreams, input/output/cache tokens, cost in USD."""
        row = self.db.execute(
            # A forget that rewrote MEMORY.md is journaled too, but it is no dream.
            "SELECT coalesce(sum(outcome != 'forgotten'), 0), coalesce(sum(input_tokens), 0),"
            " coalesce(sum(output_tokens), 0),"
            " coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),"
            " coalesce(sum(cost_usd), 0.0) FROM dreams"
        ).fetchone()
        keys = (
            "dreams",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "cost_usd",
        )
        return dict(zip(keys, row, strict=True))

    def latest_dream_id(self, outcomes: Sequence[str] = ("committed", "restored")) -> int | None:
        """The id of the newest dream with one of these outcomes."""
        return self._one(
            f"SELECT max(id) FROM dreams WHERE outcome IN ({marks(outcomes)})", list(outcomes)
        )
