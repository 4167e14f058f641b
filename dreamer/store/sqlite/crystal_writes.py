"""A crystal written, changed (audited) and read back by id or content hash: the crystals
table as a note uses it. The rest of the table (reads, forgetting, vectors) is crystals.py."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from dreamer.errors import CrystalNotFound
from dreamer.store.identity import content_hash
from dreamer.store.sqlite.base import CRYSTAL_COLUMNS, Connected
from dreamer.support.times import iso

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:  # the row classes load with the first row read (dream note reads none)
    from typing import Any

    from dreamer.store.rows import Crystal

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


class CrystalWrites(Connected):
    """The ``crystals`` table's inserts and audited changes, and one crystal by id or hash."""

    def add_crystal(
        self,
        text: str,
        *,
        source: str,
        semantic_type: str,
        importance: float,
        at: datetime,
        embedding: bytes | None,
        embedder: str | None = None,
        hormones: Mapping[str, float] | None = None,
        lifecycle: str = "generated",
        origin: str | None = None,
        parent_id: int | None = None,
        consolidated_at: str | None = None,
        about: str | None = None,
        replaces: str | None = None,
    ) -> tuple[int, bool]:
        """Insert a crystal unless one with the same content exists; return (id, created)."""
        digest = content_hash(text)
        hormones = hormones or {}
        stamp = iso(at)
        with self.transaction():
            found = self.find_by_hash(digest)
            if found is not None:
                return found, False
            cursor = self.db.execute(
                "INSERT INTO crystals (text, source, semantic_type, importance, lifecycle,"
                " created_at, updated_at, access_count, dopamine, cortisol, oxytocin,"
                " content_hash, parent_id, origin, embedding, embedder, consolidated_at, about,"
                " replaces) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    text,
                    source,
                    semantic_type,
                    importance,
                    lifecycle,
                    stamp,
                    stamp,
                    hormones.get("dopamine"),
                    hormones.get("cortisol"),
                    hormones.get("oxytocin"),
                    digest,
                    parent_id,
                    origin,
                    embedding,
                    embedder if embedding else None,
                    consolidated_at,
                    about,
                    replaces,
                ],
            )
            crystal_id = int(cursor.lastrowid or 0)
            self.audit(crystal_id, "created", {"source": source, "lifecycle": lifecycle}, at)
            return crystal_id, True

    def add_crystals(self, rows: Sequence[Mapping[str, Any]]) -> list[tuple[int, bool]]:
        """``add_crystal`` for each row (its keyword arguments, ``text`` included), in one
        transaction; (id, created) of each, in order."""
        with self.transaction():
            return [self.add_crystal(**row) for row in rows]

    def find_by_hash(self, digest: str) -> int | None:
        """The id of the crystal with this content hash, if any."""
        return self._one("SELECT id FROM crystals WHERE content_hash = ?", [digest])

    def get(self, crystal_id: int) -> Crystal:
        """One crystal by id, or CrystalNotFound."""
        in_range = 0 < crystal_id < 2**63  # SQLite cannot even bind a larger integer
        self.settle()
        row = (
            self.db.execute(
                f"SELECT {CRYSTAL_COLUMNS} FROM crystals WHERE id = ?", [crystal_id]
            ).fetchone()
            if in_range
            else None
        )
        if row is None:
            raise CrystalNotFound(
                f"no crystal with id {crystal_id}; find ids with 'dream search QUERY'"
            )
        from dreamer.store.rows import Crystal

        crystal = Crystal(*row)
        if crystal.lifecycle == "forgotten":
            raise CrystalNotFound(
                f"crystal {crystal_id} was forgotten at {crystal.updated_at}; "
                "its text is gone by request"
            )
        return crystal

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
        with self.transaction():
            crystal = self.get(crystal_id)  # the old values of the changed fields only
            before = {key: getattr(crystal, key) for key in changes}
            sets = ", ".join(f"{column} = ?" for column in changes)
            self.db.execute(
                f"UPDATE crystals SET {sets}, updated_at = ? WHERE id = ?",
                [*changes.values(), iso(at), crystal_id],
            )
            detail: dict[str, Any] = {key: [before[key], value] for key, value in changes.items()}
            if reason:
                detail["reason"] = reason
            self.audit(crystal_id, action, detail, at)

    def audit(
        self, crystal_id: int | None, action: str, detail: Mapping[str, Any], at: datetime
    ) -> None:
        """Append one line to the audit log."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO audit (at, crystal_id, action, detail) VALUES (?, ?, ?, ?)",
                [iso(at), crystal_id, action, json.dumps(dict(detail), ensure_ascii=False)],
            )
