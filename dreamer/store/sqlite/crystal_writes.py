"""A crystal written (audited) and found by its content hash: the crystals table as a note
uses it. The rest of the table (reads, changes, forgetting, vectors) is crystals.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime

from dreamer.store.identity import content_hash
from dreamer.store.sqlite.base import Connected
from dreamer.support.times import iso

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:  # the row classes load with the first row read (dream note reads none)
    from typing import Any


class CrystalWrites(Connected):
    """The ``crystals`` table's inserts, the audit log, and a crystal by its content hash."""

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

    def find_by_hash(self, digest: str) -> int | None:
        """The id of the crystal with this content hash, if any."""
        return self._one("SELECT id FROM crystals WHERE content_hash = ?", [digest])

    def audit(
        self, crystal_id: int | None, action: str, detail: Mapping[str, Any], at: datetime
    ) -> None:
        """Append one line to the audit log."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO audit (at, crystal_id, action, detail) VALUES (?, ?, ?, ?)",
                [iso(at), crystal_id, action, json.dumps(dict(detail), ensure_ascii=False)],
            )
