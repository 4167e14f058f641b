"""A crystal before it is stored: its fields, declared once, as every layer passes them.

A note, an ingested piece, a seed chunk, an import and a dream's own lines all become a
``NewCrystal`` that ``Crystals.add_crystal`` stores. ``columns()`` is what both backends insert:
a new field is a field here (and a column in both schemas); the inserts follow it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from dreamer.config import HORMONES
from dreamer.store.identity import content_hash

# Fields that are no column of their own: the creation time (each backend stamps it) and the
# hormone levels (one column per hormone).
_NOT_COLUMNS = ("at", "hormones")


@dataclass(frozen=True)
class NewCrystal:
    """One crystal to store: its text with provenance (see DESIGN.md, Crystals)."""

    text: str
    source: str
    importance: float
    at: datetime
    semantic_type: str | None = None  # None: the workspace infers it from the text (index)
    embedding: bytes | None = None
    embedder: str | None = None  # what made ``embedding`` (ignored without one)
    hormones: Mapping[str, float] | None = None  # the levels when it was made
    lifecycle: str = "generated"
    origin: str | None = None
    parent_id: int | None = None
    consolidated_at: str | None = None
    about: str | None = None
    replaces: str | None = None
    speaker: str | None = None  # who said it (kinds.SPEAKERS); None: not recorded

    @staticmethod
    def column_names() -> tuple[str, ...]:
        """The ``crystals`` columns ``columns()`` fills, in its order."""
        names = [f.name for f in fields(NewCrystal) if f.name not in _NOT_COLUMNS]
        return (*names, *HORMONES, "content_hash")

    def columns(self) -> dict[str, Any]:
        """The ``crystals`` row of this crystal (creation time and access count aside)."""
        if self.semantic_type is None:
            raise ValueError("a crystal is stored with a semantic type")
        row = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NOT_COLUMNS}
        if not self.embedding:
            row["embedder"] = None
        levels = self.hormones or {}
        row.update({name: levels.get(name) for name in HORMONES})
        row["content_hash"] = content_hash(self.text)
        return row
