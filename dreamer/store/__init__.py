"""Storage: the ``Store`` protocol and its backends. All SQL lives in this package.

``open_store(path)`` opens the default backend (SQLite, ``memory/crystals.db``).
"""

from __future__ import annotations

from pathlib import Path

from dreamer.store.base import Crystal, Store, content_hash

__all__ = ["Crystal", "Store", "content_hash", "open_store"]


def open_store(path: Path) -> Store:
    """Open (creating and migrating if needed) the store at ``path``."""
    from dreamer.store.sqlite import SQLiteStore

    return SQLiteStore(path)
