"""SQL both backends run alike, written once: a base class with a few dialect hooks.

The bodies here use ``?`` placeholders and name this store's rows with ``_mine()``; each
backend's ``Connected`` gives the hooks: how a statement runs (PostgreSQL's turns ``?`` into
``%s``), which rows are this store's (all of them in SQLite's own file; one workspace's in a
shared PostgreSQL database) and which columns an insert adds to say so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dreamer.config import HORMONES
from dreamer.store.records import REWRITTEN
from dreamer.support.times import iso

if TYPE_CHECKING:
    from dreamer.store.rows import Crystal

# Searches logged in memory before one transaction writes them (with their access counts): a
# crash (kill -9, power loss) loses at most SEARCH_BATCH - 1 of them; a clean exit none.
SEARCH_BATCH = 16
# (at, redacted query, search type, result ids, top score, gap)
PendingSearch = tuple[str, str, str, tuple[int, ...], float | None, bool]

# Crystal fields ``update_crystal`` may change (the rest are its identity and provenance).
CHANGEABLE = frozenset(
    {
        "importance",
        "lifecycle",
        "semantic_type",
        "parent_id",
        "consolidated_at",
        "last_accessed_at",
        "access_count",
    }
)


class SharedTables:
    """The statements both dialects share, over the hooks each backend's ``Connected`` gives."""

    if TYPE_CHECKING:  # what the backends' table groups provide
        _pending: list[PendingSearch]  # searches not written yet (see SEARCH_BATCH)

        def transaction(self) -> AbstractContextManager[None]: ...

        def settle(self) -> None: ...

        def get(self, crystal_id: int) -> Crystal: ...

    # --- the dialect hooks ------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Every row of a statement written with ``?`` placeholders."""
        raise NotImplementedError

    def _write(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run one writing statement written with ``?`` placeholders."""
        raise NotImplementedError

    def _mine(self) -> tuple[str, list[Any]]:
        """A condition selecting this store's rows of a table, and its parameters."""
        raise NotImplementedError

    def _owned(self, row: dict[str, Any]) -> dict[str, Any]:
        """The columns of a row to insert, with those that make it this store's."""
        raise NotImplementedError

    def _turns(self) -> AbstractContextManager[Any]:
        """The lock this store's threads take turns with for the searches kept in memory."""
        raise NotImplementedError

    def _kept_first(self) -> None:
        """Called when a first search is kept in memory (e.g. to have it written at exit)."""

    # --- shared bodies ----------------------------------------------------------------------

    def _insert(self, table: str, row: dict[str, Any]) -> None:
        """Insert one row of this store's (columns by name)."""
        row = self._owned(row)
        marks = ", ".join("?" * len(row))
        self._write(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", list(row.values()))

    def audit(
        self, crystal_id: int | None, action: str, detail: Mapping[str, Any], at: datetime
    ) -> None:
        """Append one line to the audit log."""
        with self.transaction():
            self._insert(
                "audit",
                {
                    "at": iso(at),
                    "crystal_id": crystal_id,
                    "action": action,
                    "detail": json.dumps(dict(detail), ensure_ascii=False),
                },
            )

    def update_crystal(
        self,
        crystal_id: int,
        changes: Mapping[str, Any],
        *,
        action: str,
        at: datetime,
        reason: str | None = None,
    ) -> None:
        """Change some fields of a crystal and record the change in the audit log."""
        unknown = set(changes) - CHANGEABLE
        if unknown:
            raise ValueError(f"cannot change crystal fields {sorted(unknown)}")
        mine, params = self._mine()
        with self.transaction():
            crystal = self.get(crystal_id)  # the old values of the changed fields only
            before = {key: getattr(crystal, key) for key in changes}
            sets = ", ".join(f"{column} = ?" for column in changes)
            self._write(
                f"UPDATE crystals SET {sets}, updated_at = ? WHERE {mine} AND id = ?",
                [*changes.values(), iso(at), *params, crystal_id],
            )
            detail: dict[str, Any] = {key: [before[key], value] for key, value in changes.items()}
            if reason:
                detail["reason"] = reason
            self.audit(crystal_id, action, detail, at)

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
            self._insert(
                "hormones",
                {
                    "at": iso(at),
                    **{name: round(levels[name], 6) for name in HORMONES},
                    "hormone": hormone,
                    "delta": delta,
                    "reason": reason,
                    "source": source,
                },
            )

    def record_search(
        self,
        at: datetime,
        query: str,
        search_type: str,
        ids: Sequence[int],
        top_score: float | None,
        *,
        gap: bool,
    ) -> None:
        """Log a search (a gap too when it found nothing good) and count the accesses.

        Off the search's path: kept in memory and written with the next ``SEARCH_BATCH``-th
        search, the next write transaction, a read of the log or of a crystal, or ``close``.
        """
        entry = (iso(at), query, search_type, tuple(int(i) for i in ids), top_score, gap)
        with self._turns():
            self._pending.append(entry)
            if len(self._pending) == 1:
                self._kept_first()
            if len(self._pending) >= SEARCH_BATCH:
                self.settle()

    def rewrite_texts(self, transform: Callable[[str], str]) -> int:
        """Apply ``transform`` to every stored text outside the crystals; count changed rows.

        The journal's states, drafts and raw answers, search queries, gaps and stimulus
        reasons: what redaction or a forget must reach besides the crystals themselves.
        """
        mine, params = self._mine()
        changed = 0
        with self.transaction():
            for table, columns in REWRITTEN.items():
                for row in self._rows(
                    f"SELECT id, {', '.join(columns)} FROM {table} WHERE {mine}", params
                ):
                    new = [
                        transform(value) if isinstance(value, str) else value for value in row[1:]
                    ]
                    if new != list(row[1:]):
                        sets = ", ".join(f"{column} = ?" for column in columns)
                        self._write(f"UPDATE {table} SET {sets} WHERE id = ?", [*new, row[0]])
                        changed += 1
        return changed
