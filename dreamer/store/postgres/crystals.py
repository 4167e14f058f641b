"""Crystals in PostgreSQL: insert, read, change (audited), and the rows lifecycle and vectors
need. Every query is one workspace's (``workspace = self.ws``)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from dreamer.store.base import Crystal, VectorRow
from dreamer.store.crystal import NewCrystal
from dreamer.store.postgres.base import (
    Connected,
    float16_blobs,
    fold,
    reported,
    vector,
)
from dreamer.store.shared import LIVE, TOMBSTONE_COLUMNS
from dreamer.support.times import iso

# A text's index entry and its length in tokens (BM25's document length), from one parameter.
INDEXED = (
    "(SELECT v FROM to_tsvector('dreamer', %s) v)",
    "(SELECT coalesce(sum(array_length(u.positions, 1)), 0) FROM unnest(to_tsvector('dreamer',"
    " %s)) u)",
)
# Vectors travel as pgvector's binary form and are converted in one go (float16_blobs).
VECTOR_COLUMNS = "id, source, lifecycle, vector_send(embedding), embedder"


class CrystalTables(Connected):
    """The ``crystals`` table and its audit trail."""

    def add_crystal(self, crystal: NewCrystal) -> tuple[int, bool]:
        """Insert a crystal unless one with the same content exists; return (id, created)."""
        row = crystal.columns()
        row["embedding"] = vector(crystal.embedding)
        stamp = iso(crystal.at)
        detail = json.dumps(
            {"source": crystal.source, "lifecycle": crystal.lifecycle}, ensure_ascii=False
        )
        with self.transaction():
            found = self.find_by_hash(row["content_hash"])
            if found is not None:
                return found, False
            # One statement: the index entry and its length, the next id of this workspace
            # (with the token total BM25 needs), the row, and its audit line.
            crystal_id = int(
                self._one(
                    "WITH v AS (SELECT t AS tsv, (SELECT coalesce(sum(array_length(u.positions,"
                    " 1)), 0) FROM unnest(t) u) AS len FROM to_tsvector('dreamer', %s) t),"
                    " seq AS (UPDATE workspaces SET crystal_seq = crystal_seq + 1,"
                    " token_total = token_total + (SELECT len FROM v) WHERE id = %s"
                    " RETURNING crystal_seq),"
                    f" created AS (INSERT INTO crystals (workspace, id, {', '.join(row)},"
                    " created_at, updated_at, tsv, doc_len) SELECT %s, seq.crystal_seq,"
                    f" {', '.join(['%s'] * len(row))}, %s, %s, v.tsv, v.len"
                    " FROM seq, v RETURNING id),"
                    " audited AS (INSERT INTO audit (workspace, at, crystal_id, action, detail)"
                    " SELECT %s, %s, id, 'created', %s FROM created),"
                    " counted AS (INSERT INTO terms (workspace, lexeme, docs) SELECT %s,"
                    " u.lexeme, 1 FROM v, unnest(v.tsv) u ON CONFLICT (workspace, lexeme)"
                    " DO UPDATE SET docs = terms.docs + 1),"
                    " posted AS (INSERT INTO postings (workspace, lexeme, crystal_id, tf, doc_len)"
                    " SELECT %s, u.lexeme, created.id, array_length(u.positions, 1), v.len"
                    " FROM created, v, unnest(v.tsv) u)"
                    " SELECT id FROM created",
                    [
                        fold(crystal.text),
                        self.ws,
                        self.ws,
                        *row.values(),
                        stamp,
                        stamp,
                        self.ws,
                        stamp,
                        detail,
                        self.ws,
                        self.ws,
                    ],
                )
            )
            return crystal_id, True

    def _add_tokens(self, count: int) -> None:
        if count:
            self._run(
                "UPDATE workspaces SET token_total = token_total + %s WHERE id = %s",
                [count, self.ws],
            )

    def crystals_by_id(self, ids: Sequence[int]) -> list[Crystal]:
        """The crystals with these ids (missing ids are left out), by id."""
        if not ids:
            return []
        return self._select(f"id = ANY(?) AND {LIVE}", [_ids(ids)], "id")

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
            where.append("source = ANY(?)")
            params.append(list(sources))
        if lifecycles is not None:
            where.append("lifecycle = ANY(?)")
            params.append(list(lifecycles))
        return self._select(" AND ".join(where), params, "id DESC" if newest_first else "id", limit)

    def touched_since(self, since: str, limit: int) -> list[Crystal]:
        """Crystals created or found by a search since ``since``, newest first."""
        return self._select(
            f"(created_at >= ? OR last_accessed_at >= ?) AND {LIVE}",
            [since, since],
            "id DESC",
            limit,
        )

    def forget_crystal(self, crystal_id: int, *, reason: str, at: datetime) -> Crystal:
        """Empty a crystal (text, vector) for good, keep a tombstone; return it as it was."""
        with self.transaction():
            crystal = self.get(crystal_id)
            self._tombstone(
                crystal.id, {**crystal.to_dict(), "forgotten_at": iso(at), "reason": reason}
            )
            length = self._doc_len(crystal.id)
            self._count_terms(crystal.id, -1)
            self._run(
                "UPDATE crystals SET text = '', embedding = NULL, embedder = NULL, origin = NULL,"
                " lifecycle = 'forgotten', content_hash = %s, updated_at = %s,"
                " tsv = ''::tsvector, doc_len = 0 WHERE workspace = %s AND id = %s",
                [f"forgotten:{crystal.id}", iso(at), self.ws, crystal.id],
            )
            self._add_tokens(-length)
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
        folded = fold(text)
        with self.transaction():
            self.get(crystal_id)
            before = self._doc_len(crystal_id)
            self._count_terms(crystal_id, -1)
            after = self._one(
                "UPDATE crystals SET text = %s, content_hash = %s, embedding = %s, embedder = %s,"
                f" updated_at = %s, tsv = {INDEXED[0]}, doc_len = {INDEXED[1]}"
                " WHERE workspace = %s AND id = %s RETURNING doc_len",
                [
                    text,
                    self._unique_hash(text, crystal_id),
                    vector(embedding),
                    embedder if embedding else None,
                    iso(at),
                    folded,
                    folded,
                    self.ws,
                    crystal_id,
                ],
            )
            self._add_tokens(int(after) - before)
            self._count_terms(crystal_id, 1)
            self.audit(crystal_id, action, detail, at)

    def _count_terms(self, crystal_id: int, delta: int) -> None:
        """Add ``delta`` to the document count of every stem in a crystal's index entry, and
        add (1) or delete (-1) the crystal's postings.

        A stem no crystal holds any more is deleted: a forgotten word must not stay a row.
        """
        self._run(
            "INSERT INTO terms (workspace, lexeme, docs) SELECT c.workspace, u.lexeme, %s"
            " FROM crystals c, unnest(c.tsv) u WHERE c.workspace = %s AND c.id = %s"
            " ON CONFLICT (workspace, lexeme) DO UPDATE SET docs = terms.docs + excluded.docs",
            [delta, self.ws, crystal_id],
        )
        if delta > 0:
            self._run(
                "INSERT INTO postings (workspace, lexeme, crystal_id, tf, doc_len)"
                " SELECT c.workspace, u.lexeme, c.id, array_length(u.positions, 1), c.doc_len"
                " FROM crystals c, unnest(c.tsv) u WHERE c.workspace = %s AND c.id = %s",
                [self.ws, crystal_id],
            )
            return
        self._run(
            "DELETE FROM terms t USING crystals c, unnest(c.tsv) u WHERE c.workspace = %s"
            " AND c.id = %s AND t.workspace = c.workspace AND t.lexeme = u.lexeme"
            " AND t.docs <= 0",
            [self.ws, crystal_id],
        )
        self._run(
            "DELETE FROM postings p USING crystals c, unnest(c.tsv) u WHERE c.workspace = %s"
            " AND c.id = %s AND p.workspace = c.workspace AND p.lexeme = u.lexeme"
            " AND p.crystal_id = c.id",
            [self.ws, crystal_id],
        )

    def _doc_len(self, crystal_id: int) -> int:
        return int(
            self._one(
                "SELECT doc_len FROM crystals WHERE workspace = %s AND id = %s",
                [self.ws, crystal_id],
            )
        )

    def tombstones(self) -> list[dict[str, Any]]:
        """Every tombstone, by id: what a forget keeps (no text), with the row's kind."""
        names = [column.split(".")[1] for column in TOMBSTONE_COLUMNS.split(", ")]
        rows = self._all(
            f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones t JOIN crystals c"
            " ON c.workspace = t.workspace AND c.id = t.crystal_id WHERE t.workspace = %s"
            " ORDER BY t.crystal_id",
            [self.ws],
        )
        return [dict(zip(names, values, strict=True)) for values in rows]

    def restore_tombstone(self, row: Mapping[str, Any], at: datetime) -> int:
        """Append an emptied crystal row and its tombstone as a forget leaves them; its id."""
        with self.transaction():
            crystal_id = int(
                self._one(
                    "UPDATE workspaces SET crystal_seq = crystal_seq + 1 WHERE id = %s"
                    " RETURNING crystal_seq",
                    [self.ws],
                )
            )
            self._run(
                "INSERT INTO crystals (workspace, id, text, source, semantic_type, importance,"
                " lifecycle, created_at, updated_at, access_count, content_hash, tsv, doc_len)"
                " VALUES (%s, %s, '', %s, %s, %s, 'forgotten', %s, %s, 0, %s, ''::tsvector, 0)",
                [
                    self.ws,
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
        """The highest crystal id (0 when empty): ids only grow, so it is a watermark. Inside
        ``reading``, the one its change mark was taken with."""
        mark = self.change_mark() if self._pinned() else None
        if mark is not None:
            return mark[1]
        return int(self._one("SELECT crystal_seq FROM workspaces WHERE id = %s", [self.ws]))

    def latest_actions(self, action: str, rows: int) -> dict[int, str]:
        """For each crystal with an ``action`` row among the newest ``rows`` audit rows: the
        time of its newest such row (read by the database, not decoded row by row)."""
        found = self._all(
            'SELECT crystal_id, max(at COLLATE "C") FROM (SELECT crystal_id, action, at'
            " FROM audit WHERE workspace = %s ORDER BY id DESC LIMIT %s) newest"
            " WHERE action = %s AND crystal_id IS NOT NULL GROUP BY crystal_id",
            [self.ws, int(rows), action],
        )
        return {int(crystal_id): at for crystal_id, at in found}

    # --- lifecycle and vectors --------------------------------------------------------------

    def _vector_rows(self, where: str, params: list[Any], limit: int) -> list[VectorRow]:
        rows = self._all(
            f"SELECT {VECTOR_COLUMNS} FROM crystals WHERE workspace = %s AND {where}"
            " ORDER BY id LIMIT %s",
            [self.ws, *params, limit],
            binary=True,
        )
        blobs: list[Any] = float16_blobs([row[3] for row in rows])  # None: no vector yet
        return [
            VectorRow(row[0], row[1], row[2], blob, row[4])
            for row, blob in zip(rows, blobs, strict=True)
        ]

    def vectors_after(self, after_id: int, limit: int) -> list[VectorRow]:
        """Crystals above ``after_id`` (by id, at most ``limit``), with their vectors if any."""
        return self._vector_rows("id > %s", [after_id], limit)

    def _blocks(
        self, where: str, params: list[Any], after: int, block: int
    ) -> Iterator[list[VectorRow]]:
        # Page by id rather than hold a cursor open across yields.
        while rows := self._vector_rows(f"id > %s AND {where}", [after, *params], block):
            yield rows
            after = rows[-1].id

    def vector_blocks(self, below_id: int, embedder: str, block: int) -> Iterator[list[VectorRow]]:
        """Active crystals below ``below_id`` with vectors made by ``embedder``, in blocks."""
        return self._blocks(
            "id < %s AND lifecycle NOT IN ('archived', 'forgotten') AND embedder = %s",
            [below_id, embedder],
            0,
            block,
        )

    def vectors_between(
        self, after_id: int, up_to_id: int, embedder: str, block: int
    ) -> Iterator[list[VectorRow]]:
        """Crystals with vectors made by ``embedder`` and ids in (after_id, up_to_id], by id."""
        return self._blocks("id <= %s AND embedder = %s", [up_to_id, embedder], after_id, block)

    def vectors_of(self, ids: Sequence[int], embedder: str) -> list[tuple[int, bytes]]:
        """(id, vector) of the given crystals that have one made by ``embedder``."""
        if not ids:
            return []
        rows = self._all(
            "SELECT id, vector_send(embedding) FROM crystals WHERE workspace = %s"
            " AND id = ANY(%s) AND embedder = %s AND embedding IS NOT NULL ORDER BY id",
            [self.ws, _ids(ids), embedder],
            binary=True,
        )
        blobs = float16_blobs([row[1] for row in rows])
        return [(row[0], blob) for row, blob in zip(rows, blobs, strict=True) if blob]

    def unembedded(
        self, after_id: int = 0, up_to_id: int | None = None, limit: int | None = None
    ) -> list[tuple[int, str, str]]:
        """(id, source, text) of live crystals with no vector at all, ids in (after, up_to].

        Asked before every search (a fresh note is embedded first): that none waits is kept
        while the change mark stays."""
        kept = self.kept("unembedded")
        asked = (after_id, up_to_id, limit)
        if kept is not None and asked in kept:
            return []
        rows = self._all(
            f"SELECT id, source, text FROM crystals WHERE workspace = %s AND embedding IS NULL"
            f" AND {LIVE} AND id > %s AND id <= %s ORDER BY id LIMIT %s",
            [self.ws, after_id, up_to_id if up_to_id is not None else 2**62, limit],
        )
        if kept is not None and not rows:
            kept[asked] = True
        return [(row[0], row[1], row[2]) for row in rows]

    def set_vectors(self, vectors: Sequence[tuple[int, bytes]], embedder: str) -> None:
        """Store new vectors made by ``embedder`` (a re-embedding: the memory is unchanged)."""
        with self.transaction(), reported(), self.conn.cursor() as cursor:
            cursor.executemany(
                "UPDATE crystals SET embedding = %s, embedder = %s"
                " WHERE workspace = %s AND id = %s AND lifecycle != 'forgotten'",
                [(vector(blob), embedder, self.ws, crystal_id) for crystal_id, blob in vectors],
            )


def _ids(ids: Sequence[int]) -> list[int]:
    """Ids as a bigint array parameter (ids beyond bigint cannot exist: left out)."""
    return [int(i) for i in ids if 0 < int(i) < 2**63]
