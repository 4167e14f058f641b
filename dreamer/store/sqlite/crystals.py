"""Crystals in SQLite: inserts, reads, forgetting, and the rows lifecycle and vectors need
(the audited changes are the shared ``update_crystal``, ``dreamer.store.shared``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dreamer.errors import LockHeld
from dreamer.store.shared import LIVE, TOMBSTONE_COLUMNS
from dreamer.store.sqlite.base import Connected, marks
from dreamer.support.times import iso

if TYPE_CHECKING:  # the row classes load with the first row read (dream note reads none)
    from dreamer.store.crystal import NewCrystal
    from dreamer.store.rows import Crystal, VectorRow

PURGE_ATTEMPTS = 2  # TRUNCATE checkpoints, each waiting up to the busy timeout for readers


class CrystalTables(Connected):
    """The ``crystals`` table's inserts, reads, forgetting and vectors, and its audit trail read
    back."""

    def add_crystal(self, crystal: NewCrystal) -> tuple[int, bool]:
        """Insert a crystal unless one with the same content exists; return (id, created)."""
        row = crystal.columns()
        stamp = iso(crystal.at)
        row.update(created_at=stamp, updated_at=stamp)
        with self.transaction():
            found = self.find_by_hash(row["content_hash"])
            if found is not None:
                return found, False
            cursor = self.db.execute(
                f"INSERT INTO crystals ({', '.join(row)}) VALUES ({marks(row)})", list(row.values())
            )
            crystal_id = int(cursor.lastrowid or 0)
            detail = {"source": crystal.source, "lifecycle": crystal.lifecycle}
            self.audit(crystal_id, "created", detail, crystal.at)
            return crystal_id, True

    def add_crystals(self, crystals: Sequence[NewCrystal]) -> list[tuple[int, bool]]:
        """``add_crystal`` for each, in one transaction; (id, created) of each, in order."""
        with self.transaction():
            return [self.add_crystal(crystal) for crystal in crystals]

    def crystals_by_id(self, ids: Sequence[int]) -> list[Crystal]:
        """The crystals with these ids (missing ids are left out), by id."""
        if not ids:
            return []
        return self._select(f"id IN ({marks(ids)}) AND {LIVE}", list(ids), "id")

    def select(
        self,
        *,
        sources: Sequence[str] | None = None,
        lifecycles: Sequence[str] | None = None,
        newest_first: bool = False,
        limit: int | None = None,
    ) -> list[Crystal]:
        """Crystals filtered by source and lifecycle, by id (oldest first unless asked)."""
        where, params = [LIVE], []
        if sources is not None:
            where.append(f"source IN ({marks(sources)})")
            params += list(sources)
        if lifecycles is not None:
            where.append(f"lifecycle IN ({marks(lifecycles)})")
            params += list(lifecycles)
        return self._select(" AND ".join(where), params, "id DESC" if newest_first else "id", limit)

    def touched_since(self, since: str, limit: int) -> list[Crystal]:
        """Crystals created or found by a search since ``since``, newest first."""
        # Each by its index, then sorted: scanning by id until ``limit`` match read every
        # crystal of a store with little recent activity.
        return self._select(
            "id IN (SELECT id FROM crystals WHERE created_at >= ?"
            f" UNION SELECT id FROM crystals WHERE last_accessed_at >= ?) AND {LIVE}",
            [since, since],
            "+id DESC",
            limit,
        )

    def forget_crystal(self, crystal_id: int, *, reason: str, at: datetime) -> Crystal:
        """Empty a crystal (text, vector) for good, keep a tombstone; return it as it was."""
        with self.transaction():
            crystal = self.get(crystal_id)
            self._tombstone(
                crystal.id, {**crystal.to_dict(), "forgotten_at": iso(at), "reason": reason}
            )
            # The hash column must stay unique: the same words may be noted again later.
            self.db.execute(
                "UPDATE crystals SET text = '', embedding = NULL, embedder = NULL, origin = NULL,"
                " lifecycle = 'forgotten', content_hash = ?, updated_at = ? WHERE id = ?",
                [f"forgotten:{crystal.id}", iso(at), crystal.id],
            )
            self.audit(crystal.id, "forgotten", {"reason": reason}, at)
        return crystal

    def replace_text(
        self,
        crystal_id: int,
        text: str,
        *,
        embedding: bytes | None,
        embedder: str | None,
        action: str,
        detail: Mapping[str, Any],
        at: datetime,
    ) -> None:
        """Rewrite a crystal's text in place (e.g. redacted), with its new hash and vector."""
        with self.transaction():
            self.get(crystal_id)
            self.db.execute(
                "UPDATE crystals SET text = ?, content_hash = ?, embedding = ?, embedder = ?,"
                " updated_at = ? WHERE id = ?",
                [
                    text,
                    self._unique_hash(text, crystal_id),
                    embedding,
                    embedder if embedding else None,
                    iso(at),
                    crystal_id,
                ],
            )
            self.audit(crystal_id, action, detail, at)

    def purge(self) -> None:
        """Make what was deleted unrecoverable: merge the full-text index, rebuild the file,
        checkpoint the WAL.

        Merging FTS5's segments drops the deleted terms it still kept. ``secure_delete`` (every
        dreamer connection sets it) zeroes what dreamer frees, but not what a writer without it
        freed (an older dreamer, a tool opened on the file): VACUUM rebuilds the file, so no
        free page and no unused cell space is left with old bytes. A TRUNCATE checkpoint then
        moves every page into the database file and empties the WAL; it waits (busy timeout)
        for readers of an older snapshot, and a reader that stays says so as LockHeld.
        """
        with self.transaction():
            self.db.execute("INSERT INTO crystals_fts(crystals_fts) VALUES ('optimize')")
        with self._write_lock:  # VACUUM needs the connection to itself
            self.db.execute("VACUUM")
            for _ in range(PURGE_ATTEMPTS):
                if not self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:
                    return
        raise LockHeld(
            "another process kept reading crystals.db, so its -wal file may still hold old "
            "pages of what was removed; stop that process (dream serve, dream mcp) and run "
            "'dream redact --scan' to purge again"
        )

    def tombstones(self) -> list[dict[str, Any]]:
        """Every tombstone, by id: what a forget keeps (no text), with the row's kind."""
        cursor = self.db.execute(
            f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones t JOIN crystals c ON c.id = t.crystal_id"
            " ORDER BY t.crystal_id"
        )
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]

    def restore_tombstone(self, row: Mapping[str, Any], at: datetime) -> int:
        """Append an emptied crystal row and its tombstone as a forget leaves them; its id."""
        with self.transaction():
            crystal_id = self.max_crystal_id() + 1
            self.db.execute(
                "INSERT INTO crystals (id, text, source, semantic_type, importance, lifecycle,"
                " created_at, updated_at, access_count, content_hash)"
                " VALUES (?, '', ?, ?, ?, 'forgotten', ?, ?, 0, ?)",
                [
                    crystal_id,
                    row["source"],
                    row["semantic_type"],
                    row["importance"],
                    row["created_at"],
                    row["forgotten_at"],
                    f"forgotten:{crystal_id}",
                ],
            )
            self._tombstone(crystal_id, row)
            self.audit(crystal_id, "imported", {"lifecycle": "forgotten"}, at)
        return crystal_id

    def max_crystal_id(self) -> int:
        """The highest crystal id (0 when empty): ids only grow, so it is a watermark."""
        return int(self._one("SELECT coalesce(max(id), 0) FROM crystals"))

    def latest_actions(self, action: str, rows: int) -> dict[int, str]:
        """For each crystal with an ``action`` row among the newest ``rows`` audit rows: the
        time of its newest such row (read by the database, not decoded row by row)."""
        return dict(
            self.db.execute(
                "SELECT crystal_id, max(at) FROM (SELECT crystal_id, action, at FROM audit"
                " ORDER BY id DESC LIMIT ?) WHERE action = ? AND crystal_id IS NOT NULL"
                " GROUP BY crystal_id",
                [int(rows), action],
            ).fetchall()
        )

    # --- lifecycle and vectors --------------------------------------------------------------

    def vectors_after(self, after_id: int, limit: int) -> list[VectorRow]:
        """Crystals above ``after_id`` (by id, at most ``limit``), with their vectors if any."""
        from dreamer.store.rows import VectorRow

        rows = self.db.execute(
            "SELECT id, source, lifecycle, embedding, embedder FROM crystals WHERE id > ?"
            " ORDER BY id LIMIT ?",
            [after_id, limit],
        ).fetchall()
        return [VectorRow(*row) for row in rows]

    def vector_blocks(self, below_id: int, embedder: str, block: int) -> Iterator[list[VectorRow]]:
        """Active crystals below ``below_id`` with vectors made by ``embedder``, in blocks."""
        from dreamer.store.rows import VectorRow

        # A cursor read across yields must not meet another thread's COMMIT or ROLLBACK on
        # this shared connection: readers and writers take turns.
        with self._write_lock:
            cursor = self.db.execute(
                "SELECT id, source, lifecycle, embedding, embedder FROM crystals WHERE id < ?"
                " AND lifecycle NOT IN ('archived', 'forgotten') AND embedder = ? ORDER BY id",
                [below_id, embedder],
            )
            while rows := cursor.fetchmany(block):
                yield [VectorRow(*row) for row in rows]

    def vectors_between(
        self, after_id: int, up_to_id: int, embedder: str, block: int
    ) -> Iterator[list[VectorRow]]:
        """Crystals with vectors made by ``embedder`` and ids in (after_id, up_to_id], by id."""
        from dreamer.store.rows import VectorRow

        # A cursor read across yields must not meet another thread's COMMIT or ROLLBACK on
        # this shared connection: readers and writers take turns.
        with self._write_lock:
            cursor = self.db.execute(
                "SELECT id, source, lifecycle, embedding, embedder FROM crystals"
                " WHERE id > ? AND id <= ? AND embedder = ? ORDER BY id",
                [after_id, up_to_id, embedder],
            )
            while rows := cursor.fetchmany(block):
                yield [VectorRow(*row) for row in rows]

    def vectors_of(self, ids: Sequence[int], embedder: str) -> list[tuple[int, bytes]]:
        """(id, vector) of the given crystals that have one made by ``embedder``."""
        if not ids:
            return []
        return self.db.execute(
            f"SELECT id, embedding FROM crystals WHERE id IN ({marks(ids)}) AND embedder = ?",
            [*ids, embedder],
        ).fetchall()

    def unembedded(
        self, after_id: int = 0, up_to_id: int | None = None, limit: int | None = None
    ) -> list[tuple[int, str, str]]:
        """(id, source, text) of live crystals with no vector at all, ids in (after, up_to]."""
        # The conditions of the partial index crystals_unembedded, so SQLite reads only it.
        rows = self.db.execute(
            f"SELECT id, source, text FROM crystals WHERE embedding IS NULL AND {LIVE}"
            " AND id > ? AND id <= ? ORDER BY id LIMIT ?",
            [after_id, up_to_id if up_to_id is not None else 2**62, -1 if limit is None else limit],
        ).fetchall()
        return [(row[0], row[1], row[2]) for row in rows]

    def set_vectors(self, vectors: Sequence[tuple[int, bytes]], embedder: str) -> None:
        """Store new vectors made by ``embedder`` (a re-embedding: the memory is unchanged)."""
        with self.transaction():
            self.db.conn.executemany(
                "UPDATE crystals SET embedding = ?, embedder = ?"
                " WHERE id = ? AND lifecycle != 'forgotten'",
                [(blob, embedder, crystal_id) for crystal_id, blob in vectors],
            )
