"""The reference ``dream bench scale`` compares dreamer's search with: a bare FTS5 query.

What a program that only needs full-text search would run on the same ``crystals.db``: its own
plain connection, the query's words quoted and OR-ed, ranked by FTS5's BM25, the best
``limit`` rows' ids. No context, no vectors, no boost, no log: the floor of a word search.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from dreamer.store.sqlite.search import fts_expression


class RawFTS:
    """A read-only connection to a crystals.db that runs one bare FTS5 MATCH per call."""

    def __init__(self, path: Path):
        self.conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)

    def match(self, words: Sequence[str], limit: int) -> list[int]:
        """The ids of the best ``limit`` crystals holding any of ``words`` (BM25 order)."""
        if not words:
            return []
        rows = self.conn.execute(
            "SELECT rowid FROM crystals_fts WHERE crystals_fts MATCH ?"
            " ORDER BY bm25(crystals_fts) LIMIT ?",
            [fts_expression(words), limit],
        ).fetchall()
        return [row[0] for row in rows]

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()
