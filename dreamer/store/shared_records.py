"""The journal, meta, hormone and run reads both backends run alike, written once.

The same dialect hooks as ``dreamer.store.shared``: statements with ``?`` placeholders, this
store's rows named by ``_mine()``. Mixed into each backend's table groups for these tables.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dreamer.errors import DreamNotFound
from dreamer.store.records import DREAM_COLUMNS, HISTORY_FIELDS, SUMMARY_FIELDS, decode
from dreamer.store.shared import SharedTables

if TYPE_CHECKING:
    from dreamer.store.base import HormoneRow

# What ``dream_totals`` sums, in its query's order.
TOTALS = (
    "dreams",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_usd",
)


class SharedRecords(SharedTables):
    """Meta by key, hormone history, the dream journal and scheduled runs, over the hooks."""

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        """A value from the meta table."""
        mine, owner = self._mine()
        rows = self._rows(f"SELECT value FROM meta WHERE {mine} AND key = ?", [*owner, key])
        return rows[0][0] if rows else default

    def _levels(self, where: str, value: Any) -> HormoneRow | None:
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT at, dopamine, cortisol, oxytocin FROM hormones WHERE {mine} AND {where}"
            " ORDER BY at DESC, id DESC LIMIT 1",
            [*owner, value],
        )
        return tuple(rows[0]) if rows else None

    def hormones_at(self, until: str) -> HormoneRow | None:
        """The newest stored levels at or before ``until``."""
        return self._levels("at <= ?", until)

    def hormones_at_row(self, row_id: int) -> HormoneRow | None:
        """The newest stored levels among rows with id at most ``row_id``."""
        return self._levels("id <= ?", row_id)

    def hormone_rows_after(
        self, after_id: int, until: str
    ) -> list[tuple[int, str, float, float, float]]:
        """(id, at, dopamine, cortisol, oxytocin) of rows after ``after_id`` up to ``until``."""
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT id, at, dopamine, cortisol, oxytocin FROM hormones WHERE {mine}"
            " AND id > ? AND at <= ? ORDER BY at, id",
            [*owner, after_id, until],
        )
        return [tuple(row) for row in rows]

    def _history(self, where: str, params: Sequence[Any], order: str) -> list[dict[str, Any]]:
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT {', '.join(HISTORY_FIELDS)} FROM hormones WHERE {mine}{where}"
            f" ORDER BY {order}",
            [*owner, *params],
        )
        return [dict(zip(HISTORY_FIELDS, row, strict=True)) for row in rows]

    def hormone_history(self, limit: int, *, stimuli_only: bool = False) -> list[dict[str, Any]]:
        """The newest history rows, newest first."""
        where = " AND hormone IS NOT NULL" if stimuli_only else ""
        return self._history(where, [int(limit)], "at DESC, id DESC LIMIT ?")

    def stimuli_between(self, since: str, until: str, limit: int) -> list[dict[str, Any]]:
        """Stimuli (rows with a hormone) after ``since`` up to ``until``, oldest first."""
        return self._history(
            " AND hormone IS NOT NULL AND at > ? AND at <= ?",
            [since, until, int(limit)],
            "at, id LIMIT ?",
        )

    def hormone_rows_between(self, since: str, until: str) -> list[dict[str, Any]]:
        """Hormone history rows (stimuli, decay snapshots) in [since, until], oldest first."""
        return self._history(" AND at >= ? AND at <= ?", [since, until], "at, id")

    def stimulus_reasons(self, hormone: str, until: str, limit: int) -> list[str]:
        """Reasons of the newest positive stimuli of ``hormone`` up to ``until`` (non-empty)."""
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT reason FROM hormones WHERE {mine} AND hormone = ? AND delta > 0"
            " AND at <= ? AND reason != '' ORDER BY at DESC, id DESC LIMIT ?",
            [*owner, hormone, until, limit],
        )
        return [row[0] for row in rows]

    def dream_entries(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest dreams first: summary fields, consumed and critique counts."""
        fields = [*SUMMARY_FIELDS, "consumed", "critiques"]
        mine, owner = self._mine()
        out = []
        for values in self._rows(
            f"SELECT {', '.join(fields)} FROM dreams WHERE {mine} ORDER BY id DESC LIMIT ?",
            [*owner, int(limit)],
        ):
            row = decode(dict(zip(fields, values, strict=True)))
            row["consumed"] = len(row["consumed"] or [])
            row["critiques"] = sum(len(c) for c in row["critiques"] or [])
            out.append(row)
        return out

    def newest_dream(self) -> tuple[str, str, str | None] | None:
        """(started_at, outcome, reason) of the newest dream."""
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT started_at, outcome, reason FROM dreams WHERE {mine}"
            " AND outcome != 'forgotten' ORDER BY started_at DESC, id DESC LIMIT 1",
            owner,
        )
        return (rows[0][0], rows[0][1], rows[0][2]) if rows else None

    def get_dream(self, dream_id: int) -> dict[str, Any]:
        """One dream, every field (JSON fields decoded), or DreamNotFound."""
        mine, owner = self._mine()
        rows = (
            self._rows(
                f"SELECT {', '.join(DREAM_COLUMNS)} FROM dreams WHERE {mine} AND id = ?",
                [*owner, int(dream_id)],
            )
            if 0 < int(dream_id) < 2**63
            else []
        )
        if not rows:
            raise DreamNotFound(f"no dream with id {dream_id}; list them with 'dream log'")
        return decode(dict(zip(DREAM_COLUMNS, rows[0], strict=True)))

    def dream_totals(self) -> dict[str, float | int]:
        """What every dream together used: dreams that ran, input/output/cache tokens, cost in
        USD."""
        mine, owner = self._mine()
        row = self._rows(
            # A forget or a restore that rewrote MEMORY.md is journaled too, and a skip says why
            # no dream ran; none of them is a dream.
            "SELECT coalesce(sum(CASE WHEN outcome NOT IN ('forgotten', 'skipped', 'restored')"
            " THEN 1 ELSE 0 END), 0),"
            " coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),"
            " coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),"
            f" coalesce(sum(cost_usd), 0.0) FROM dreams WHERE {mine}",
            owner,
        )[0]
        totals: dict[str, float | int] = {
            key: int(value) for key, value in zip(TOTALS[:-1], row, strict=False)
        }
        totals["cost_usd"] = float(row[-1])
        return totals

    def latest_dream_id(self, outcomes: Sequence[str] = ("committed", "restored")) -> int | None:
        """The id of the newest dream with one of these outcomes."""
        mine, owner = self._mine()
        marks = ", ".join("?" * len(outcomes))
        rows = self._rows(
            f"SELECT max(id) FROM dreams WHERE {mine} AND outcome IN ({marks})",
            [*owner, *outcomes],
        )
        return rows[0][0] if rows else None

    def dream_states(self, ids: Sequence[int]) -> list[dict[str, Any]]:
        """id, outcome, old_state, new_state, draft and revisions (decoded) of these dreams."""
        fields = ("id", "outcome", "old_state", "new_state", "draft", "revisions")
        wanted = [int(i) for i in ids if 0 < int(i) < 2**63]
        mine, owner = self._mine()
        out = []
        for start in range(0, len(wanted), 500):  # SQLite caps how many values one query binds
            chunk = wanted[start : start + 500]
            for values in self._rows(
                f"SELECT {', '.join(fields)} FROM dreams WHERE {mine}"
                f" AND id IN ({', '.join('?' * len(chunk))})",
                [*owner, *chunk],
            ):
                row = dict(zip(fields, values, strict=True))
                row["revisions"] = json.loads(row["revisions"]) if row["revisions"] else []
                out.append(row)
        return sorted(out, key=lambda row: row["id"])

    def audit_action_counts(
        self, actions: Sequence[str], since: str | None = None
    ) -> dict[str, int]:
        """How many audit rows each of ``actions`` has (since ``since``, if given); 0 if none."""
        if not actions:
            return {}
        mine, params = self._mine()
        where = f"{mine} AND action IN ({', '.join('?' * len(actions))})"
        params = [*params, *actions]
        if since:
            where, params = f"{where} AND at >= ?", [*params, since]
        counts = dict.fromkeys(actions, 0)
        for action, count in self._rows(
            f"SELECT action, count(*) FROM audit WHERE {where} GROUP BY action", params
        ):
            counts[action] = int(count)
        return counts

    def activity_span(self) -> tuple[str, str] | None:
        """(first, last) time anything was recorded: a crystal, a hormone row or a dream."""
        mine, owner = self._mine()
        row = self._rows(
            "SELECT min(first), max(last) FROM ("
            " SELECT min(created_at) AS first, max(created_at) AS last FROM crystals"
            f" WHERE {mine}"
            f" UNION ALL SELECT min(at), max(at) FROM hormones WHERE {mine}"
            f" UNION ALL SELECT min(started_at), max(started_at) FROM dreams WHERE {mine}"
            ") spans",
            owner * 3,
        )[0]
        return (row[0], row[1]) if row and row[0] else None

    def record_run(
        self, job: str, started_at: str, finished_at: str, outcome: str, detail: str | None
    ) -> None:
        """Store one scheduled job run."""
        with self.transaction():
            self._insert(
                "runs",
                {
                    "job": job,
                    "started_at": started_at,
                    "finished_at": finished_at,
                    "outcome": outcome,
                    "detail": detail,
                },
            )

    def last_run(self, job: str) -> tuple[str, str, str | None] | None:
        """(started_at, outcome, detail) of the newest run of ``job``."""
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT started_at, outcome, detail FROM runs WHERE {mine} AND job = ?"
            " ORDER BY started_at DESC, id DESC LIMIT 1",
            [*owner, job],
        )
        return (rows[0][0], rows[0][1], rows[0][2]) if rows else None

    def run_counts(self, since: str) -> dict[str, dict[str, int]]:
        """{job: {outcome: how many runs}} of the runs started at or after ``since``."""
        mine, owner = self._mine()
        counts: dict[str, dict[str, int]] = {}
        for job, outcome, n in self._rows(
            f"SELECT job, outcome, count(*) FROM runs WHERE {mine} AND started_at >= ?"
            " GROUP BY job, outcome ORDER BY job, outcome",
            [*owner, since],
        ):
            counts.setdefault(job, {})[outcome] = int(n)
        return counts

    def run_outcomes(self) -> list[tuple[str, str]]:
        """(job, outcome) of every recorded run, oldest first."""
        mine, owner = self._mine()
        rows = self._rows(f"SELECT job, outcome FROM runs WHERE {mine} ORDER BY id", owner)
        return [(row[0], row[1]) for row in rows]
