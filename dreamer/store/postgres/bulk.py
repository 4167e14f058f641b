"""Many crystals at once on PostgreSQL: COPY into a staging table, then one statement per table.

Adding crystals one ``INSERT`` at a time costs a round trip and a statement per crystal, and
the term counts one upsert per stem. A bulk load instead copies the rows (binary, vectors
included) into a session-private staging table, reserves their ids in one update, and fills
``crystals``, ``postings``, ``terms``, the token total and the audit with one statement each.
A load that grows the table by a fifth or more is followed by ``ANALYZE``: right after a big
load the planner would otherwise plan on the empty table's statistics until autovacuum came.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dreamer.store.crystal import NewCrystal
from dreamer.store.postgres.base import Connected, fold, reported, vector
from dreamer.support.times import iso

# Postgres types of the crystal's columns that are not text (binary COPY needs each type).
TYPES = {
    "importance": "float8",
    "dopamine": "float8",
    "cortisol": "float8",
    "oxytocin": "float8",
    "parent_id": "bigint",
    "embedding": "vector",
}
# The staging table's columns and their types: the id, the folded text (for the index), the
# creation time and the audit detail, then the crystal's own columns (NewCrystal.columns).
STAGED = (
    ("id", "bigint"),
    ("folded", "text"),
    ("stamp", "text"),
    ("detail", "text"),
    *((name, TYPES.get(name, "text")) for name in NewCrystal.column_names()),
)
ANALYZE_GROWTH = 0.2  # analyze once the rows loaded since reach this share of the table


class BulkTables(Connected):
    """``add_crystals``: a batch of crystals in one transaction and a handful of statements."""

    _loaded = 0  # crystals this store loaded since it last analyzed

    def add_crystals(self, crystals: Sequence[NewCrystal]) -> list[tuple[int, bool]]:
        """``add_crystal`` for each, in one transaction; (id, created) of each, in order."""
        rows = [crystal.columns() for crystal in crystals]
        digests = [row["content_hash"] for row in rows]
        if not rows:
            return []
        with self.transaction():
            known: dict[str, int] = dict(
                self._all(
                    "SELECT content_hash, id FROM crystals WHERE workspace = %s"
                    " AND content_hash = ANY(%s)",
                    [self.ws, sorted(set(digests))],
                )
            )
            # The first row of each new text is created; a repeat gets its id, not created.
            fresh: dict[str, int] = {}
            for digest in digests:
                if digest not in known and digest not in fresh:
                    fresh[digest] = len(fresh)
            first = self._load(crystals, rows, digests, fresh)
        ids = {digest: first + order for digest, order in fresh.items()} | known
        made: set[str] = set()
        results: list[tuple[int, bool]] = []
        for digest in digests:
            results.append((ids[digest], digest in fresh and digest not in made))
            made.add(digest)
        if fresh and not self._depth:
            self._analyze_after(len(fresh))
        return results

    def _load(
        self,
        crystals: Sequence[NewCrystal],
        rows: list[dict[str, Any]],
        digests: list[str],
        fresh: dict[str, int],
    ) -> int:
        """Insert the rows whose digest is in ``fresh`` (its value: the order); the first id."""
        if not fresh:
            return 0
        count = len(fresh)
        top = int(
            self._one(
                "UPDATE workspaces SET crystal_seq = crystal_seq + %s WHERE id = %s"
                " RETURNING crystal_seq",
                [count, self.ws],
            )
        )
        first = top - count + 1
        columns = ", ".join(name for name, _ in STAGED)
        self._run(
            "CREATE TEMP TABLE IF NOT EXISTS crystal_load ("
            + ", ".join(f"{name} {kind}" for name, kind in STAGED)
            + ") ON COMMIT DELETE ROWS"
        )
        self._run("TRUNCATE crystal_load")
        seen: set[str] = set()
        with self._lock, reported(), self.conn.cursor() as cursor:
            with cursor.copy(f"COPY crystal_load ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types([kind for _, kind in STAGED])
                for crystal, row, digest in zip(crystals, rows, digests, strict=True):
                    if digest not in fresh or digest in seen:
                        continue
                    seen.add(digest)
                    copy.write_row(_staged(crystal, row, first + fresh[digest]))
        names = NewCrystal.column_names()
        self._run(
            f"INSERT INTO crystals (workspace, id, {', '.join(names)}, created_at, updated_at,"
            f" tsv, doc_len) SELECT %s, l.id, {', '.join('l.' + name for name in names)},"
            " l.stamp, l.stamp, v.tsv, v.len FROM crystal_load l, LATERAL (SELECT t AS tsv,"
            " (SELECT coalesce(sum(array_length(u.positions, 1)), 0) FROM unnest(t) u) AS len"
            " FROM to_tsvector('dreamer', l.folded) t) v ORDER BY l.id",
            [self.ws],
        )
        # The stems of the new crystals, once: their postings, their document counts, and
        # the token total BM25 divides by.
        self._run(
            "WITH u AS (SELECT c.id, c.doc_len, x.lexeme, array_length(x.positions, 1) AS tf"
            " FROM crystals c, unnest(c.tsv) x WHERE c.workspace = %s AND c.id BETWEEN %s AND %s),"
            " posted AS (INSERT INTO postings (workspace, lexeme, crystal_id, tf, doc_len)"
            " SELECT %s, lexeme, id, tf, doc_len FROM u ORDER BY lexeme, id),"
            " counted AS (INSERT INTO terms (workspace, lexeme, docs) SELECT %s, lexeme, count(*)"
            " FROM u GROUP BY lexeme ORDER BY lexeme ON CONFLICT (workspace, lexeme)"
            " DO UPDATE SET docs = terms.docs + excluded.docs)"
            " UPDATE workspaces SET token_total = token_total + (SELECT coalesce(sum(doc_len), 0)"
            " FROM crystals WHERE workspace = %s AND id BETWEEN %s AND %s) WHERE id = %s",
            [self.ws, first, top, self.ws, self.ws, self.ws, first, top, self.ws],
        )
        self._run(
            "INSERT INTO audit (workspace, at, crystal_id, action, detail)"
            " SELECT %s, stamp, id, 'created', detail FROM crystal_load ORDER BY id",
            [self.ws],
        )
        self._run("TRUNCATE crystal_load")
        return first

    def _analyze_after(self, loaded: int) -> None:
        """ANALYZE the tables a load grew once the rows loaded since reach a fifth of them."""
        self._loaded += loaded
        rows = self._one("SELECT reltuples FROM pg_class WHERE oid = 'crystals'::regclass")
        if self._loaded < ANALYZE_GROWTH * max(float(rows or 0), 0.0):
            return
        self._run("ANALYZE crystals, postings, terms")
        self._loaded = 0


def _staged(crystal: NewCrystal, row: dict[str, Any], crystal_id: int) -> list[Any]:
    """One staging row: what ``add_crystal`` would insert for this crystal."""
    detail = json.dumps(
        {"source": crystal.source, "lifecycle": crystal.lifecycle}, ensure_ascii=False
    )
    values = {**row, "embedding": vector(crystal.embedding)}
    return [crystal_id, fold(crystal.text), iso(crystal.at), detail, *values.values()]
