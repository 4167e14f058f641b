"""Everything in PostgreSQL that is not a crystal: meta, hormone history, the dream journal,
scheduled runs, and the read-only history reports draw. One workspace's rows at a time."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from dreamer.store.postgres.base import Connected
from dreamer.store.records import (
    DREAM_COLUMNS,
    DREAM_ROW_FIELDS,
    JSON_FIELDS,
    LIFECYCLE_EVENTS,
)
from dreamer.store.shared_records import SharedRecords


def _length(value: str | None) -> int:
    """How many items a JSON array text holds (0 for none)."""
    return len(json.loads(value)) if value else 0


class RecordTables(Connected, SharedRecords):
    """The ``meta``, ``hormones``, ``dreams`` and ``runs`` tables, and their history."""

    # --- meta -------------------------------------------------------------------------------

    def set_meta(self, key: str, value: str) -> None:
        """Set a value in the meta table."""
        with self.transaction():
            self._run(
                "INSERT INTO meta (workspace, key, value) VALUES (%s, %s, %s)"
                " ON CONFLICT (workspace, key) DO UPDATE SET value = excluded.value",
                [self.ws, key, value],
            )

    def meta_items(self, prefix: str) -> list[tuple[str, str]]:
        """The (key, value) pairs of the meta table whose key starts with ``prefix``."""
        rows = self._all(
            "SELECT key, value FROM meta WHERE workspace = %s AND left(key, %s) = %s"
            ' ORDER BY key COLLATE "C"',
            [self.ws, len(prefix), prefix],
        )
        return [(row[0], row[1]) for row in rows]

    # --- the dream journal ------------------------------------------------------------------

    def record_dream(self, row: Mapping[str, Any]) -> int:
        """Append one dream to the journal; return its id."""
        unknown = set(row) - set(DREAM_COLUMNS)
        if unknown:
            raise ValueError(f"unknown journal fields {sorted(unknown)}")
        values = {
            key: (
                json.dumps(value, ensure_ascii=False, default=str)
                if key in JSON_FIELDS and value is not None
                else value
            )
            for key, value in row.items()
        }
        columns = ", ".join(["workspace", *values])
        marks = ", ".join(["%s"] * (len(values) + 1))
        with self.transaction():
            return int(
                self._one(
                    f"INSERT INTO dreams ({columns}) VALUES ({marks}) RETURNING id",
                    [self.ws, *values.values()],
                )
            )

    def rewrite_texts(self, transform: Callable[[str], str]) -> int:
        """Apply ``transform`` to every stored text outside the crystals; count changed rows
        (MEMORY.md's committed state, a row on PostgreSQL, included)."""
        with self.transaction():
            changed = super().rewrite_texts(transform)
            state = self._one("SELECT text FROM states WHERE workspace = %s", [self.ws])
            if state is not None and transform(state) != state:
                self._run(
                    "UPDATE states SET text = %s WHERE workspace = %s", [transform(state), self.ws]
                )
                changed += 1
        return changed

    # --- history, for reports (read-only) ---------------------------------------------------

    def lifecycle_by_day(self, since: str, until: str) -> dict[str, dict[str, int]]:
        """Per UTC day in [since, until]: crystals created, consolidated, archived, frozen."""
        out: dict[str, dict[str, int]] = {}

        def add(day: str, event: str, count: int) -> None:
            out.setdefault(day, dict.fromkeys(LIFECYCLE_EVENTS, 0))[event] += count

        for column, event in (("created_at", "created"), ("consolidated_at", "consolidated")):
            for day, count in self._all(
                f"SELECT left({column}, 10), count(*) FROM crystals WHERE workspace = %s"
                f" AND {column} >= %s AND {column} <= %s GROUP BY 1",
                [self.ws, since, until],
            ):
                add(day, event, int(count))
        # A change's detail holds {"lifecycle": [old, new]}; a creation's {"lifecycle": stage}.
        for at, detail in self._all(
            "SELECT at, detail FROM audit WHERE workspace = %s AND at >= %s AND at <= %s"
            " AND strpos(detail, '\"lifecycle\"') > 0"
            " AND (strpos(detail, '\"archived\"') > 0 OR strpos(detail, '\"frozen\"') > 0)",
            [self.ws, since, until],
        ):
            stage = json.loads(detail).get("lifecycle")
            if isinstance(stage, list):
                stage = stage[1] if len(stage) > 1 else None
            if stage in ("archived", "frozen"):
                add(at[:10], stage, 1)
        return dict(sorted(out.items()))

    def dream_rows(self, since: str, until: str) -> list[dict[str, Any]]:
        """Journal rows started in [since, until], oldest first, with tokens, cost and counts."""
        rows = self._all(
            "SELECT id, started_at, finished_at, outcome, reason, synthesizer, model,"
            " input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd,"
            " consumed, critiques, revisions,"
            " (new_state IS NOT NULL OR draft IS NOT NULL)"
            " FROM dreams WHERE workspace = %s AND started_at >= %s AND started_at <= %s"
            " ORDER BY started_at, id",
            [self.ws, since, until],
        )
        out = []
        for row in rows:
            consumed, critiques, revisions = _length(row[12]), row[13], _length(row[14])
            critique_count = sum(len(c) for c in json.loads(critiques)) if critiques else 0
            values = [*row[:12], consumed, critique_count, revisions]
            values.append(int(bool(row[15]) or revisions > 0))
            out.append(dict(zip(DREAM_ROW_FIELDS, values, strict=True)))
        return out
