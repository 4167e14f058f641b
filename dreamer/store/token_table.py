"""A tokenizer's vocabulary and merge ranks in an indexed SQLite file, read a few rows at a time.

The storage half of ``dreamer.retrieval.bpe`` (the BPE algorithm is there; the SQL is here, as
all SQL is): looked up by a fresh process instead of building the whole tokenizer.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path


class TokenTableFile:
    """An open, read-only token table."""

    def __init__(self, path: Path):
        self.path = path
        self._conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False
        )

    def close(self) -> None:
        """Close the file."""
        self._conn.close()

    def token_ids(self, tokens: set[str]) -> dict[str, int]:
        """{token: id} of the given tokens that are in the vocabulary."""
        return self._lookup("SELECT token, id FROM vocab WHERE token IN ({})", tokens)

    def merge_ranks(self, pairs: set[str]) -> dict[str, int]:
        """{"left right": rank} of the given pairs that are merges."""
        return self._lookup("SELECT pair, rank FROM merges WHERE pair IN ({})", pairs)

    def _lookup(self, sql: str, keys: set[str]) -> dict[str, int]:
        if not keys:
            return {}
        rows = self._conn.execute(sql.format(", ".join("?" * len(keys))), list(keys))
        return {row[0]: row[1] for row in rows.fetchall()}


def write_token_table(path: Path, vocab: Mapping[str, int], merges: Iterable[str]) -> None:
    """Write a token table to ``path`` atomically (a temp file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temp.unlink(missing_ok=True)
    conn = sqlite3.connect(temp)
    try:
        with conn:
            conn.execute("CREATE TABLE vocab (token TEXT PRIMARY KEY, id INTEGER) WITHOUT ROWID")
            conn.execute("CREATE TABLE merges (pair TEXT PRIMARY KEY, rank INTEGER) WITHOUT ROWID")
            conn.executemany("INSERT INTO vocab VALUES (?, ?)", vocab.items())
            # A pair listed twice keeps its first (lowest) rank, as the tokenizer does.
            conn.executemany(
                "INSERT OR IGNORE INTO merges VALUES (?, ?)",
                ((pair, rank) for rank, pair in enumerate(merges)),
            )
    finally:
        conn.close()
    os.replace(temp, path)
