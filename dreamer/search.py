"""Hybrid retrieval: FTS5 BM25 and vector similarity, fused by reciprocal rank, then boosted.

1. Lexical: the query's words (never its syntax: every word is quoted, so FTS5 operators in a
   query are just text) are OR-ed and ranked by BM25 over a Porter-stemmed index.
2. Semantic: cosine similarity between the query's embedding and every crystal's, from an
   in-process matrix that grows incrementally (crystal text never changes, so neither does
   its vector).
3. Fusion: ``score = Σ 1 / (RRF_K + rank)`` over the lists a crystal appears in.
4. Boost: ``score × (1 + IMPORTANCE_BOOST × importance + RECENCY_BOOST × 2^(-age / half-life))``.

``search_type`` picks ``conversations`` (source ``sessions``), ``facts`` (everything else) or
``both``; ``memory.search.sources`` can take sessions out entirely. Every search is logged and
counts as an access of what it returned; a search with no lexical hit and no close vector is
recorded as a curiosity gap.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import numpy as np

from .config import Settings
from .embed import Embedder, from_blob
from .errors import UsageError
from .store import Store
from .times import iso, parse_iso

SEARCH_TYPES = ("conversations", "facts", "both")
RRF_K = 60
CANDIDATES = 60
IMPORTANCE_BOOST = 0.3
RECENCY_BOOST = 0.2
RECENCY_HALF_LIFE_DAYS = 30.0
ARCHIVED_FACTOR = 0.85
GAP_SIMILARITY = 0.25
MIN_SIMILARITY = 0.08  # below this a vector match is noise, not a candidate
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    "a about an and are as at be been but by can could did do does for from had has have he her "
    "hers him his how i if in into is it its me my of on or our she so than that the their them "
    "then there these they this to was we were what when where which who whom why will with "
    "would you your".split()
)


@dataclass
class Hit:
    """One search result."""

    id: int
    text: str
    score: float
    source: str
    semantic_type: str
    importance: float
    lifecycle: str
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def query_terms(query: str) -> list[str]:
    """The words of a query worth matching, lower-cased, stop words removed, in order."""
    words = [w.lower() for w in _WORD.findall(query)]
    kept = [w for w in words if w not in _STOP]
    return list(dict.fromkeys(kept or words))


def fts_expression(terms: list[str]) -> str:
    """An FTS5 MATCH expression that ORs quoted terms (so no query text is FTS syntax)."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


class _VectorIndex:
    """Crystal vectors of one database, loaded once and extended as crystals are added."""

    def __init__(self, dim: int):
        self.max_id = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.sessions = np.zeros(0, dtype=bool)
        self.matrix = np.zeros((0, dim), dtype=np.float32)

    def refresh(self, store: Store) -> None:
        newest = store.db.execute("SELECT coalesce(max(id), 0) FROM crystals").fetchone()[0]
        if newest < self.max_id:  # the database was replaced under us
            self.__init__(self.matrix.shape[1])
        if newest == self.max_id:
            return
        rows = store.db.execute(
            "SELECT id, source, embedding FROM crystals WHERE id > ? AND embedding IS NOT NULL"
            " ORDER BY id",
            [self.max_id],
        ).fetchall()
        if rows:
            self.ids = np.concatenate([self.ids, np.array([r[0] for r in rows], dtype=np.int64)])
            self.sessions = np.concatenate(
                [self.sessions, np.array([r[1] == "sessions" for r in rows], dtype=bool)]
            )
            self.matrix = np.vstack([self.matrix, np.stack([from_blob(r[2]) for r in rows])])
        self.max_id = newest


_indexes: dict[tuple[str, str], _VectorIndex] = {}
_indexes_lock = threading.Lock()


def _vector_index(store: Store, embedder: Embedder) -> _VectorIndex:
    key = (str(store.path.resolve()), embedder.name)
    with _indexes_lock:
        index = _indexes.get(key)
        if index is None:
            index = _indexes[key] = _VectorIndex(embedder.dim)
        index.refresh(store)
    return index


def _source_filter(search_type: str, settings: Settings) -> tuple[bool, bool]:
    """(include sessions, include everything else)."""
    if search_type not in SEARCH_TYPES:
        raise UsageError(
            f"unknown search type {search_type!r}; use one of {', '.join(SEARCH_TYPES)}"
        )
    sessions = search_type in ("conversations", "both") and settings.sessions_searchable()
    facts = search_type in ("facts", "both") and "memory" in settings.search_sources
    return sessions, facts


def _lexical(store: Store, terms: list[str], sessions: bool, facts: bool,
             limit: int) -> list[int]:
    if not terms:
        return []
    where = "" if sessions and facts else (
        " AND c.source = 'sessions'" if sessions else " AND c.source != 'sessions'"
    )
    rows = store.db.execute(
        "SELECT c.id FROM crystals_fts JOIN crystals c ON c.id = crystals_fts.rowid"
        f" WHERE crystals_fts MATCH ?{where} ORDER BY bm25(crystals_fts) LIMIT ?",
        [fts_expression(terms), limit],
    ).fetchall()
    return [row[0] for row in rows]


def _semantic(index: _VectorIndex, vector: np.ndarray, sessions: bool, facts: bool,
              limit: int) -> tuple[list[int], float]:
    if not len(index.ids) or not vector.any():
        return [], 0.0
    scores = index.matrix @ vector
    if not (sessions and facts):
        scores = np.where(index.sessions == sessions, scores, -np.inf)
    take = min(limit, len(scores))
    top = np.argpartition(-scores, take - 1)[:take]
    top = top[np.argsort(-scores[top])]
    top = top[scores[top] > MIN_SIMILARITY]
    best = float(scores[top[0]]) if len(top) else 0.0
    return [int(index.ids[i]) for i in top], best


def _boost(hit_importance: float, created_at: str, lifecycle: str, now: datetime) -> float:
    age_days = max(0.0, (now - parse_iso(created_at)).total_seconds() / 86400.0)
    recency = 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
    factor = 1.0 + IMPORTANCE_BOOST * hit_importance + RECENCY_BOOST * recency
    return factor * (ARCHIVED_FACTOR if lifecycle == "archived" else 1.0)


def search(
    store: Store,
    embedder: Embedder,
    settings: Settings,
    query: str,
    *,
    now: datetime,
    limit: int = 6,
    search_type: str = "both",
    record: bool = True,
) -> list[Hit]:
    """Find the crystals that best answer query; log the search and count the accesses."""
    if limit < 1:
        raise UsageError(f"limit must be at least 1, not {limit}")
    sessions, facts = _source_filter(search_type, settings)
    if not query.strip() or not (sessions or facts):
        return []
    terms = query_terms(query)
    depth = max(CANDIDATES, limit * 4)
    lexical = _lexical(store, terms, sessions, facts, depth)
    vector = embedder.embed([query])[0]
    semantic, best_similarity = _semantic(
        _vector_index(store, embedder), vector, sessions, facts, depth
    )
    fused: dict[int, float] = {}
    for ranking in (lexical, semantic):
        for rank, crystal_id in enumerate(ranking):
            fused[crystal_id] = fused.get(crystal_id, 0.0) + 1.0 / (RRF_K + rank + 1)
    hits: list[Hit] = []
    if fused:
        marks = ",".join("?" * len(fused))
        rows = store.db.execute(
            "SELECT id, text, source, semantic_type, importance, lifecycle, created_at"
            f" FROM crystals WHERE id IN ({marks})",
            list(fused),
        ).fetchall()
        for row in rows:
            score = fused[row[0]] * _boost(row[4], row[6], row[5], now)
            hits.append(Hit(row[0], row[1], round(score, 6), row[2], row[3], row[4], row[5],
                            row[6]))
        hits.sort(key=lambda hit: (-hit.score, -hit.id))
        hits = hits[:limit]
    if record:
        _record(store, query, search_type, hits, now,
                gap=not lexical and best_similarity < GAP_SIMILARITY)
    return hits


def _record(store: Store, query: str, search_type: str, hits: list[Hit], now: datetime,
            gap: bool) -> None:
    ids = [hit.id for hit in hits]
    with store.write() as db:
        db.execute(
            "INSERT INTO searches (at, query, search_type, result_ids, top_score)"
            " VALUES (?, ?, ?, ?, ?)",
            [iso(now), query, search_type, json.dumps(ids), hits[0].score if hits else None],
        )
        if gap:
            db.execute(
                "INSERT INTO gaps (at, query, top_score) VALUES (?, ?, ?)",
                [iso(now), query, hits[0].score if hits else None],
            )
        store.record_access(ids, now)
