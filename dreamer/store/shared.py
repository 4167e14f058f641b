"""SQL both backends run alike, written once: a base class with a few dialect hooks.

The bodies here use ``?`` placeholders and name this store's rows with ``_mine()``; each
backend's ``Connected`` gives the hooks: how a statement runs (PostgreSQL's turns ``?`` into
``%s``), which rows are this store's (all of them in SQLite's own file; one workspace's in a
shared PostgreSQL database) and which columns an insert adds to say so.
"""

from __future__ import annotations

import atexit
import json
import sys
import weakref
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dreamer.config import HORMONES
from dreamer.errors import CrystalNotFound
from dreamer.store.identity import content_hash
from dreamer.store.records import REWRITTEN
from dreamer.store.rows import CRYSTAL_COLUMNS
from dreamer.support.times import iso

if TYPE_CHECKING:
    from dreamer.store.base import (
        Crystals,
        Forgetting,
        History,
        Hormones,
        Journal,
        Records,
        Search,
        Vectors,
    )
    from dreamer.store.rows import Crystal, FadeRow

# Searches logged in memory before one transaction writes them (with their access counts): a
# crash (kill -9, power loss) loses at most SEARCH_BATCH - 1 of them; a clean exit none.
SEARCH_BATCH = 16
# (at, redacted query, search type, result ids, top score, gap)
PendingSearch = tuple[str, str, str, tuple[int, ...], float | None, bool]

NEW = "lifecycle = 'generated' AND consolidated_at IS NULL AND source != 'insight'"
LIVE = "lifecycle != 'forgotten'"
TOMBSTONE_COLUMNS = (
    "t.crystal_id, t.content_hash, t.source, c.semantic_type, c.importance, t.created_at,"
    " t.forgotten_at, t.reason"
)  # a forgotten crystal is an emptied row: never read as memory

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
        "speaker",  # a held crystal the user accepts becomes the user's word
    }
)


def access_counts(batch: Sequence[PendingSearch]) -> dict[int, list[Any]]:
    """{crystal id: [searches that returned it, the latest's time]} of a batch of searches.

    Each crystal once: its count goes up by the searches that returned it, and its last access
    is the latest of them (the batch is in order).
    """
    counts: dict[int, list[Any]] = {}
    for at, _, _, ids, _, _ in batch:
        for crystal_id in ids:
            entry = counts.setdefault(crystal_id, [0, at])
            entry[0] += 1
            entry[1] = at
    return counts


class SharedTables:
    """The statements both dialects share, over the hooks each backend's ``Connected`` gives."""

    if TYPE_CHECKING:  # what the backends' table groups provide
        _pending: list[PendingSearch]  # searches not written yet (see SEARCH_BATCH)

        def transaction(self) -> AbstractContextManager[None]: ...

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
        """Have the searches kept in memory written at a clean exit if nothing writes them."""
        _unwritten.add(self)

    def _closed(self) -> None:
        """This store is closed: nothing is left for an exit to write."""
        _unwritten.discard(self)

    # --- shared bodies ----------------------------------------------------------------------

    def settle(self) -> None:
        """Write the searches logged since the last write (one transaction)."""
        if not self._pending:
            return  # the common case: a read need not wait for another thread's transaction
        with self._turns():
            if self._pending:
                with self.transaction():
                    pass  # a transaction writes the pending searches first

    def _insert(self, table: str, row: dict[str, Any]) -> None:
        """Insert one row of this store's (columns by name)."""
        row = self._owned(row)
        marks = ", ".join("?" * len(row))
        self._write(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", list(row.values()))

    def _count(self, table: str, where: str = "1 = 1", params: Sequence[Any] = ()) -> int:
        """How many of this store's rows of ``table`` meet ``where``."""
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT count(*) FROM {table} WHERE {mine} AND {where}", [*owner, *params]
        )
        return int(rows[0][0])

    def _select(
        self, where: str, params: Sequence[Any], order: str, limit: int | None = None
    ) -> list[Crystal]:
        """This store's crystals meeting ``where``, in ``order``, at most ``limit``."""
        from dreamer.store.rows import Crystal

        self.settle()  # access counts as the searches logged so far left them
        mine, owner = self._mine()
        sql = f"SELECT {CRYSTAL_COLUMNS} FROM crystals WHERE {mine} AND {where} ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [Crystal(*row) for row in self._rows(sql, [*owner, *params])]

    def get(self, crystal_id: int) -> Crystal:
        """One crystal by id, or CrystalNotFound."""
        in_range = 0 < crystal_id < 2**63  # neither database can bind a larger integer
        found = self._select("id = ?", [crystal_id], "id") if in_range else []
        if not found:
            raise CrystalNotFound(
                f"no crystal with id {crystal_id}; find ids with 'dream search QUERY'"
            )
        crystal = found[0]
        if crystal.lifecycle == "forgotten":
            raise CrystalNotFound(
                f"crystal {crystal_id} was forgotten at {crystal.updated_at}; "
                "its text is gone by request"
            )
        return crystal

    def find_by_hash(self, digest: str) -> int | None:
        """The id of the crystal with this content hash, if any."""
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT id FROM crystals WHERE {mine} AND content_hash = ?", [*owner, digest]
        )
        return rows[0][0] if rows else None

    def _unique_hash(self, text: str, crystal_id: int) -> str:
        """The content hash of text, or a per-crystal variant if another crystal says the same."""
        digest = content_hash(text)
        other = self.find_by_hash(digest)
        return digest if other in (None, crystal_id) else f"{digest}:{crystal_id}"

    def _tombstone(self, crystal_id: int, kept: Mapping[str, Any]) -> None:
        """Insert a crystal's tombstone; ``kept`` holds its hash, source, dates and reason."""
        columns = ("content_hash", "source", "created_at", "forgotten_at", "reason")
        self._insert("tombstones", {"crystal_id": crystal_id, **{c: kept[c] for c in columns}})

    def crystals_about(self, about: str, limit: int = 20) -> list[Crystal]:
        """The newest live crystals whose ``about`` is this (any case), newest first."""
        where = f"lower(about) = lower(?) AND {LIVE}"
        return self._select(where, [about], "created_at DESC, id DESC", limit)

    def new_crystals(self, up_to_id: int, limit: int) -> list[Crystal]:
        """Crystals waiting for a dream (generated, unconsolidated, no insight), newest first."""
        return self._select(f"{NEW} AND id <= ?", [up_to_id], "id DESC", limit)

    def count_new(self) -> int:
        """How many crystals wait for a dream."""
        return self._count("crystals", NEW)

    def crystal_count(self) -> int:
        """How many crystals there are."""
        return self._count("crystals")

    def tombstone_count(self) -> int:
        """How many crystals were forgotten."""
        return self._count("tombstones")

    def count_by_lifecycle(self) -> dict[str, int]:
        """How many crystals are in each lifecycle stage."""
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT lifecycle, count(*) FROM crystals WHERE {mine} GROUP BY lifecycle", owner
        )
        return {row[0]: int(row[1]) for row in rows}

    def latest_text(self, source: str, until: str) -> str | None:
        """The text of the newest crystal of ``source`` created at or before ``until``."""
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT text FROM crystals WHERE {mine} AND source = ? AND created_at <= ?"
            f" AND {LIVE} ORDER BY created_at DESC, id DESC LIMIT 1",
            [*owner, source, until],
        )
        return rows[0][0] if rows else None

    def stale_vectors(self, embedder: str, limit: int) -> list[tuple[int, str]]:
        """(id, text) of live crystals whose vector another embedder made, or that have none."""
        mine, owner = self._mine()
        rows = self._rows(
            f"SELECT id, text FROM crystals WHERE {mine} AND {LIVE}"
            " AND (embedder IS NULL OR embedder != ?) ORDER BY id LIMIT ?",
            [*owner, embedder, limit],
        )
        return [(row[0], row[1]) for row in rows]

    def count_stale_vectors(self, embedder: str) -> int:
        """How many live crystals need a vector from ``embedder``."""
        return self._count(
            "crystals", f"{LIVE} AND (embedder IS NULL OR embedder != ?)", [embedder]
        )

    def audit_entries(
        self, crystal_id: int | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """The newest audit rows (of one crystal, if given), newest first, detail decoded."""
        mine, params = self._mine()
        if crystal_id is not None:
            mine, params = f"{mine} AND crystal_id = ?", [*params, crystal_id]
        rows = self._rows(
            f"SELECT id, at, crystal_id, action, detail FROM audit WHERE {mine}"
            " ORDER BY id DESC LIMIT ?",
            [*params, int(limit)],
        )
        return [
            {
                "id": row[0],
                "at": row[1],
                "crystal_id": row[2],
                "action": row[3],
                "detail": json.loads(row[4]) if row[4] else None,
            }
            for row in rows
        ]

    def fade_candidates(self, due_before: str) -> list[FadeRow]:
        """Active crystals unchanged since ``due_before`` or used since their last change."""
        from dreamer.store.rows import FadeRow

        self.settle()  # accesses count: they keep a crystal from fading
        mine, owner = self._mine()
        rows = self._rows(
            "SELECT id, importance, semantic_type, created_at, updated_at, last_accessed_at,"
            f" access_count, dopamine, cortisol, oxytocin FROM crystals WHERE {mine}"
            " AND lifecycle IN ('generated', 'consolidated')"
            " AND (updated_at <= ? OR last_accessed_at > updated_at) ORDER BY updated_at, id",
            [*owner, due_before],
        )
        return [
            FadeRow(
                id=row[0],
                importance=row[1],
                semantic_type=row[2],
                created_at=row[3],
                updated_at=row[4],
                last_accessed_at=row[5],
                access_count=row[6],
                levels={"dopamine": row[7], "cortisol": row[8], "oxytocin": row[9]},
            )
            for row in rows
        ]

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

    def record_access(self, ids: Sequence[int], at: datetime) -> None:
        """Count a search hit as an access of each crystal."""
        if not ids:
            return
        mine, owner = self._mine()
        marks = ", ".join("?" * len(ids))
        with self.transaction():
            self._write(
                "UPDATE crystals SET access_count = access_count + 1, last_accessed_at = ?"
                f" WHERE {mine} AND id IN ({marks})",
                [iso(at), *owner, *(int(i) for i in ids)],
            )

    def search_queries(self, since: str, *, found_only: bool = False) -> list[str]:
        """The queries searched since ``since``, oldest first (with ``found_only``, hits only)."""
        self.settle()
        mine, owner = self._mine()
        found = " AND result_ids != '[]'" if found_only else ""
        rows = self._rows(
            f"SELECT query FROM searches WHERE {mine} AND at >= ?{found} ORDER BY id",
            [*owner, since],
        )
        return [row[0] for row in rows]

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


class Roles:
    """A store that is each of its roles itself: ``store.crystals`` is the store.

    Mixed into each backend's store class, which has every role's methods (hence the ignores:
    this mixin alone is none of the roles).
    """

    @property
    def crystals(self) -> Crystals:
        """This store, as its Crystals role."""
        return self  # type: ignore[return-value]

    @property
    def forgetting(self) -> Forgetting:
        """This store, as its Forgetting role."""
        return self  # type: ignore[return-value]

    @property
    def vectors(self) -> Vectors:
        """This store, as its Vectors role."""
        return self  # type: ignore[return-value]

    @property
    def search(self) -> Search:
        """This store, as its Search role."""
        return self  # type: ignore[return-value]

    @property
    def records(self) -> Records:
        """This store, as its Records role."""
        return self  # type: ignore[return-value]

    @property
    def hormones(self) -> Hormones:
        """This store, as its Hormones role."""
        return self  # type: ignore[return-value]

    @property
    def journal(self) -> Journal:
        """This store, as its Journal role."""
        return self  # type: ignore[return-value]

    @property
    def history(self) -> History:
        """This store, as its History role."""
        return self  # type: ignore[return-value]


# Stores that kept searches in memory, whose searches a clean exit writes if nothing wrote
# them first (held weakly, so a store nobody holds may go).
_unwritten: weakref.WeakSet[SharedTables] = weakref.WeakSet()


@atexit.register
def _settle_at_exit() -> None:
    """At a clean exit, write what open stores still hold (a store left unclosed included)."""
    for store in list(_unwritten):
        try:
            store.settle()
        except Exception as e:  # noqa: BLE001  (one line per store, then the next store)
            print(f"dreamer: {len(store._pending)} searches were not logged: {e}", file=sys.stderr)
