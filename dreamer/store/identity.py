"""What makes two texts one crystal: the hash of their content."""

from __future__ import annotations

import unicodedata
from hashlib import sha256


def content_hash(text: str) -> str:
    """Identity of a note's content: NFC, whitespace-normalised, SHA-256."""
    normal = " ".join(unicodedata.normalize("NFC", text).split())
    return sha256(normal.encode("utf-8")).hexdigest()
