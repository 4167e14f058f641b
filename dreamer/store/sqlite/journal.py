"""The dream journal and scheduled runs in SQLite: the ``dreams`` and ``runs`` tables."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from dreamer.errors import DreamNotFound
from dreamer.store.records import JSON_FIELDS, SUMMARY_FIELDS
from dreamer.store.sqlite.base import Connected, marks

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:
    from typing import Any


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    for key in JSON_FIELDS:
        if row.get(key):
            row[key] = json.loads(row[key])
    return row


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

    def dream_entries(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest dreams first: summary fields, consumed and critique counts."""
        fields = [*SUMMARY_FIELDS, "consumed", "critiques"]
        out = []
        for values in self.db.execute(
            f"SELECT {', '.join(fields)} FROM dreams ORDER BY id DESC LIMIT ?", [int(limit)]
        ).fetchall():
            row = _decode(dict(zip(fields, values, strict=True)))
            row["consumed"] = len(row["consumed"] or [])
            row["critiques"] = sum(len(c) for c in row["critiques"] or [])
            out.append(row)
        return out

    def get_dream(self, dream_id: int) -> dict[str, Any]:
        """One dream, every field (JSON fields decoded), or DreamNotFound."""
        cursor = self.db.execute("SELECT * FROM dreams WHERE id = ?", [int(dream_id)])
        values = cursor.fetchone()
        if values is None:
            raise DreamNotFound(f"no dream with id {dream_id}; list them with 'dream log'")
        return _decode(dict(zip([d[0] for d in cursor.description], values, strict=True)))

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

    def newest_dream(self) -> tuple[str, str, str | None] | None:
        """(started_at, outcome, reason) of the newest dream."""
        row = self.db.execute(
            "SELECT started_at, outcome, reason FROM dreams WHERE outcome != 'forgotten'"
            " ORDER BY started_at DESC, id DESC LIMIT 1"
        ).fetchone()
        return (row[0], row[1], row[2]) if row else None

    # --- scheduled runs ---------------------------------------------------------------------

    def record_run(
        self, job: str, started_at: str, finished_at: str, outcome: str, detail: str | None
    ) -> None:
        """Store one scheduled job run."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO runs (job, started_at, finished_at, outcome, detail)"
                " VALUES (?, ?, ?, ?, ?)",
                [job, started_at, finished_at, outcome, detail],
            )

    def last_run(self, job: str) -> tuple[str, str, str | None] | None:
        """(started_at, outcome, detail) of the newest run of ``job``."""
        row = self.db.execute(
            "SELECT started_at, outcome, detail FROM runs WHERE job = ?"
            " ORDER BY started_at DESC, id DESC LIMIT 1",
            [job],
        ).fetchone()
        return (row[0], row[1], row[2]) if row else None

    def run_counts(self, since: str) -> dict[str, dict[str, int]]:
        """{job: {outcome: how many runs}} of the runs started at or after ``since``."""
        counts: dict[str, dict[str, int]] = {}
        for job, outcome, n in self.db.execute(
            "SELECT job, outcome, count(*) FROM runs WHERE started_at >= ?"
            " GROUP BY job, outcome ORDER BY job, outcome",
            [since],
        ).fetchall():
            counts.setdefault(job, {})[outcome] = n
        return counts

    def run_outcomes(self) -> list[tuple[str, str]]:
        """(job, outcome) of every recorded run, oldest first."""
        rows = self.db.execute("SELECT job, outcome FROM runs ORDER BY id").fetchall()
        return [(row[0], row[1]) for row in rows]
