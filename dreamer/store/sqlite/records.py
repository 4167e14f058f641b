"""Everything in SQLite that is not a crystal: meta, hormone history, the dream journal, runs."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from dreamer.config import HORMONES
from dreamer.errors import DreamNotFound
from dreamer.store.records import HISTORY_FIELDS, JSON_FIELDS, REWRITTEN, SUMMARY_FIELDS
from dreamer.store.sqlite.base import Connected, marks
from dreamer.support.times import iso

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:  # the contract: a note loads none of it
    from typing import Any

    from dreamer.store.base import HormoneRow


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    for key in JSON_FIELDS:
        if row.get(key):
            row[key] = json.loads(row[key])
    return row


class RecordTables(Connected):
    """The ``meta``, ``hormones``, ``dreams`` and ``runs`` tables."""

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

    # --- the dream journal ------------------------------------------------------------------

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

    def rewrite_texts(self, transform: Callable[[str], str]) -> int:
        """Apply ``transform`` to every stored text outside the crystals; count changed rows.

        The journal's states, drafts and raw answers, search queries, gaps and stimulus
        reasons: what redaction or a forget must reach besides the crystals themselves.
        """
        changed = 0
        with self.transaction():
            for table, columns in REWRITTEN.items():
                for row in self.db.execute(
                    f"SELECT id, {', '.join(columns)} FROM {table}"
                ).fetchall():
                    new = [
                        transform(value) if isinstance(value, str) else value for value in row[1:]
                    ]
                    if new != list(row[1:]):
                        sets = ", ".join(f"{column} = ?" for column in columns)
                        self.db.execute(f"UPDATE {table} SET {sets} WHERE id = ?", [*new, row[0]])
                        changed += 1
        return changed

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
