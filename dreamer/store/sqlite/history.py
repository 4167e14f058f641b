"""Time series over a workspace's history, for reports: read-only queries, nothing written."""

from __future__ import annotations

from typing import Any

from dreamer.store.records import DREAM_ROW_FIELDS, LIFECYCLE_EVENTS
from dreamer.store.shared_records import SharedRecords
from dreamer.store.sqlite.base import Connected


class HistoryTables(Connected, SharedRecords):
    """Hormone, crystal-lifecycle, audit and journal history, read back."""

    def lifecycle_by_day(self, since: str, until: str) -> dict[str, dict[str, int]]:
        """Per UTC day (``YYYY-MM-DD``) in [since, until]: crystals created, consolidated,
        archived and frozen that day.

        Created and consolidated come from the crystals' own dates; archived and frozen from
        the audit log (a change into that stage, or a crystal created in it). Days with none of
        these are left out.
        """
        out: dict[str, dict[str, int]] = {}

        def add(day: str, event: str, count: int) -> None:
            out.setdefault(day, dict.fromkeys(LIFECYCLE_EVENTS, 0))[event] += count

        for day, count in self.db.execute(
            "SELECT substr(created_at, 1, 10), count(*) FROM crystals"
            " WHERE created_at >= ? AND created_at <= ? GROUP BY 1",
            [since, until],
        ):
            add(day, "created", count)
        for day, count in self.db.execute(
            "SELECT substr(consolidated_at, 1, 10), count(*) FROM crystals"
            " WHERE consolidated_at >= ? AND consolidated_at <= ? GROUP BY 1",
            [since, until],
        ):
            add(day, "consolidated", count)
        # A change's detail holds {"lifecycle": [old, new]}; a creation's {"lifecycle": stage}.
        for day, stage, count in self.db.execute(
            "SELECT substr(at, 1, 10), coalesce(json_extract(detail, '$.lifecycle[1]'),"
            " json_extract(detail, '$.lifecycle')) AS stage, count(*) FROM audit"
            " WHERE at >= ? AND at <= ? AND instr(detail, '\"lifecycle\"') > 0"
            " AND (instr(detail, '\"archived\"') > 0 OR instr(detail, '\"frozen\"') > 0)"
            " GROUP BY 1, 2",
            [since, until],
        ):
            if stage in ("archived", "frozen"):
                add(day, stage, count)
        return dict(sorted(out.items()))

    def dream_rows(self, since: str, until: str) -> list[dict[str, Any]]:
        """Journal rows started in [since, until], oldest first: outcome, tokens, cost, and the
        counts of consumed crystals, critiques and revisions (no states: see ``dream_states``).

        ``has_text`` is 1 when the row holds a state or candidate a diff can be made of.
        """
        rows = self.db.execute(
            "SELECT id, started_at, finished_at, outcome, reason, synthesizer, model,"
            " input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd,"
            " coalesce(json_array_length(consumed), 0),"
            " coalesce((SELECT sum(json_array_length(value)) FROM json_each(critiques)), 0),"
            " coalesce(json_array_length(revisions), 0),"
            " (new_state IS NOT NULL OR draft IS NOT NULL"
            "  OR coalesce(json_array_length(revisions), 0) > 0)"
            " FROM dreams WHERE started_at >= ? AND started_at <= ? ORDER BY started_at, id",
            [since, until],
        ).fetchall()
        return [dict(zip(DREAM_ROW_FIELDS, row, strict=True)) for row in rows]
