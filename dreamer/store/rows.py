"""The rows a store returns as objects: crystals, and what ageing and vector search read.

Both backends build them (``dreamer.store.base`` names them too); dataclasses, so a dream can
``dataclasses.replace`` one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass
class Crystal:
    """One chunk of memory with its provenance."""

    id: int
    text: str
    source: str
    semantic_type: str
    importance: float
    lifecycle: str
    created_at: str
    updated_at: str
    last_accessed_at: str | None
    access_count: int
    dopamine: float | None
    cortisol: float | None
    oxytocin: float | None
    content_hash: str
    parent_id: int | None
    origin: str | None
    consolidated_at: str | None
    embedder: str | None = None
    about: str | None = None  # what the note is about, as its writer named it
    replaces: str | None = None  # what it replaces: a crystal id ("#12") or the old words
    speaker: str | None = None  # who said it (kinds.SPEAKERS); None on older crystals

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)


# The columns both backends read a Crystal from, in its fields' order.
CRYSTAL_COLUMNS = ", ".join(field.name for field in fields(Crystal))


@dataclass
class FadeRow:
    """What the lifecycle needs to age one crystal."""

    id: int
    importance: float
    semantic_type: str
    created_at: str
    updated_at: str
    last_accessed_at: str | None
    access_count: int
    levels: dict[str, float | None]


@dataclass
class VectorRow:
    """A crystal's stored vector and what search and merging need beside it."""

    id: int
    source: str
    lifecycle: str
    embedding: bytes
    embedder: str | None = None
