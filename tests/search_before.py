"""The search as it ranked before its fixed costs were cut: what tests compare the search with.

The body of ``dreamer.retrieval.search.search`` and the steps it ran (reading the context
rows, the kinds of vector matches, the fusion and the boost in numpy, the candidates' cosines,
the vector scan), kept as they were, without the search log, with the weights as they were
(copied here, not imported). The steps the cuts left as they were (the word step, the frequency
look-up) and the context sweep (compared with its dense form by
``tests/retrieval/test_search_context.py``) are imported.
``tests/retrieval/test_search_identical.py`` checks the search gives the very ids and scores
this gives.
"""

from __future__ import annotations

from datetime import datetime
from operator import itemgetter
from typing import Any

import numpy as np

from dreamer.config import Settings
from dreamer.retrieval.embed import Embedder, embed_texts
from dreamer.retrieval.search import (
    Fusion,
    Words,
    _context_scores,
    _julian,
    _lexical,
    _source_filter,
    attainable,
    query_terms,
)
from dreamer.retrieval.vectors import (
    NOTE,
    SESSION,
    SKETCH_DIM,
    VectorIndex,
    held,
    index_for,
    matvec,
    widen,
)
from dreamer.store import Store
from dreamer.store.base import RankRow

# The weights as they were, written out here rather than imported from the search: a weight
# changed there makes tests/retrieval/test_search_identical.py fail instead of moving both sides.
IMPORTANCE_BOOST = 0.3
RECENCY_BOOST = 0.1
RECENCY_HALF_LIFE_DAYS = 30.0
ARCHIVED_FACTOR = 0.85
LEXICAL_DEPTH = 60
VECTOR_DEPTH = 60
CONTEXT_WEIGHTS = (0.5, 0.25)
CONTEXT_SOURCES = frozenset({"sessions"})
MIN_SIMILARITY = 0.08
RESCORE = 8
FUSIONS = {
    "default": Fusion(
        normalise="attainable",
        vector_weight={"sessions": 0.25, "notes": 0.4},
        scan_below=0.4,
        margin_weight=1.0,
        margin_rank=5,
        absent_weight=0.5,
        vector_floor=0.0,
    ),
    "minilm": Fusion(
        normalise="attainable",
        vector_weight={"sessions": 0.4, "notes": 0.8},
        scan_below=0.4,
        margin_weight=2.0,
        margin_rank=5,
        absent_weight=1.0,
        vector_floor=0.15,
    ),
}


def fusion_before(embedder: Embedder) -> Fusion:
    """The fusion this embedder had (its name up to the first "-"; the default one else)."""
    return FUSIONS.get(embedder.name.split("-", 1)[0], FUSIONS["default"])


def _rows(store: Store, ids: list[int]) -> list[RankRow]:
    """(id, source, julian day, importance, archived) of the given crystals."""
    return store.search.rank_rows(ids)


def _in_context(
    store: Store, lexical: dict[int, float], known: dict[int, tuple[Any, ...]] | None = None
) -> dict[int, float]:
    """Each candidate's score plus its neighbours' and its episode's (see the module doc).

    ``known`` collects the rows read on the way (id -> row), so the boost need not read them.
    """
    if not lexical:
        return {}
    reach = len(CONTEXT_WEIGHTS)
    rows = _rows(store, sorted(lexical))
    # Only transcript turns have neighbours worth reading (sets and maps: hundreds of ids).
    turns = [row[0] for row in rows if row[1] in CONTEXT_SOURCES]
    near: set[int] = set()
    for distance in range(1, reach + 1):
        near.update(map(distance.__add__, turns), map((-distance).__add__, turns))
    near.difference_update(lexical)
    rows += _rows(store, sorted(near))
    if known is not None:
        known.update(zip(map(itemgetter(0), rows), rows, strict=True))
    return _context_scores(rows, lexical)


def _kinds(store: Store, known: dict[int, tuple[Any, ...]], ids: list[int]) -> dict[int, bool]:
    """Whether each crystal is a session transcript turn (rows read once, kept in known)."""
    missing = set(ids).difference(known)
    if missing:
        found = _rows(store, sorted(missing))
        known.update(zip(map(itemgetter(0), found), found, strict=True))
    return {i: known[i][1] in CONTEXT_SOURCES for i in ids if i in known}


def search_before(
    store: Store,
    embedder: Embedder,
    settings: Settings,
    query: str,
    *,
    now: datetime,
    limit: int = 6,
    search_type: str = "both",
    fusion: Fusion | None = None,
) -> list[tuple[int, float]]:
    """(id, score) of the crystals that best answer query, as the search found them before."""
    sessions, facts = _source_filter(search_type, settings)
    if not query.strip() or not (sessions or facts):
        return []
    fusion = fusion or fusion_before(embedder)
    terms = query_terms(query)
    words = Words(store, terms)
    lexical = _lexical(store, terms, sessions, facts, max(LEXICAL_DEPTH, limit * 4), words)
    known: dict[int, tuple[Any, ...]] = {}
    contextual = _in_context(store, lexical, known)
    vector = embed_texts(embedder, [query])[0]
    top = max(contextual.values(), default=0.0)
    ceiling = (
        attainable(store, terms, fusion.absent_weight, words)
        if fusion.normalise == "attainable" and top
        else top
    )
    scale = max(ceiling, top)
    if len(contextual) >= limit and (scale == 0 or top / scale >= fusion.scan_below):
        # The words found enough: the vector re-ranks their candidates, read from the vector
        # file if this process holds it open and current, else straight from the store (cheap
        # at any size; a one-shot `dream search` never opens the vector file).
        semantic, best_similarity = cosines(store, vector, list(contextual), embedder)
    else:
        # Too few or too weak word matches (a paraphrase, a typo): scan every vector.
        index = index_for(store, embedder)
        semantic, best_similarity = nearest(
            index, vector, sessions, facts, max(VECTOR_DEPTH, limit * 4)
        )
        extra = cosines(store, vector, list(contextual), embedder, index)[0] if contextual else []
        semantic = list({**dict(extra), **dict(semantic)}.items())
    fused = {crystal_id: score / scale for crystal_id, score in contextual.items()} if top else {}
    if semantic:
        fuse_before(store, fusion, fused, semantic, contextual, known)
    hits: list[tuple[int, float]] = []
    if fused:
        missing = [i for i in fused if i not in known]
        if missing:
            known.update((row[0], row) for row in _rows(store, missing))
        rows = [known[i] for i in fused if i in known]
        newest = min(_julian(now), store.search.newest_day() or _julian(now))
        columns = list(zip(*rows, strict=True)) or [()] * 5
        ids = list(columns[0])
        day, importance, archived = (
            np.array(columns[column], dtype=np.float64) for column in (2, 3, 4)
        )
        recency = 0.5 ** (np.maximum(newest - day, 0.0) / RECENCY_HALF_LIFE_DAYS)
        boost = (1.0 + IMPORTANCE_BOOST * importance + RECENCY_BOOST * recency) * np.where(
            archived > 0, ARCHIVED_FACTOR, 1.0
        )
        scores = np.round(np.array([fused[i] for i in ids]) * boost, 6)
        # Best first; equal scores put the newer crystal (higher id) first.
        order = np.lexsort((-np.array(ids), -scores))[:limit]
        best = {ids[i]: float(scores[i]) for i in order}
        for row in store.search.hit_rows(list(best)):
            hits.append((row[0], best[row[0]]))
        hits.sort(key=lambda hit: (-hit[1], -hit[0]))
    return hits


def fuse_before(
    store: Store,
    fusion: Fusion,
    fused: dict[int, float],
    semantic: list[tuple[int, float]],
    contextual: dict[int, float],
    known: dict[int, tuple[Any, ...]],
) -> None:
    """The fusion step as the search ran it: columns in numpy."""
    # Columns: a search weighs hundreds of cosines.
    id_column, similarity_column = zip(*semantic, strict=True)
    kinds = _kinds(store, known, list(id_column))
    similarity = np.array(similarity_column, dtype=np.float64)
    weights = fusion.vector_weight
    weighed = np.where(
        [kinds.get(i, False) for i in id_column], weights["sessions"], weights["notes"]
    )
    margin = fusion.margin_weight * np.maximum(
        similarity - _pack_level(semantic, fusion.margin_rank), 0.0
    )
    value = np.array([fused.get(i, 0.0) for i in id_column]) + weighed * similarity + margin
    # Below the floor, a vector alone does not make a candidate.
    keep = (similarity >= fusion.vector_floor) | np.array([i in contextual for i in id_column])
    fused.update(
        (crystal_id, added)
        for crystal_id, added, kept in zip(id_column, value.tolist(), keep.tolist(), strict=True)
        if kept
    )


def _pack_level(semantic: list[tuple[int, float]], rank: int) -> float:
    """The cosine of the ``rank``-th best vector match: what "the rest" reach."""
    if len(semantic) < rank:
        return 1.0  # too few to tell a winner from the pack: no margin counts
    similarities = np.array([similarity for _, similarity in semantic])
    return float(-np.partition(-similarities, rank - 1)[rank - 1])


def nearest(
    index: VectorIndex, vector: np.ndarray, sessions: bool, facts: bool, limit: int
) -> tuple[list[tuple[int, float]], float]:
    """The vector scan as the search ran it (without its counters)."""
    head = index.header
    if head is None or not head.rows or not vector.any():
        return [], 0.0
    file = index.file
    query = matvec(index.projection.T, vector.astype(np.float32)).astype(np.float32)
    wanted = np.zeros(256, dtype=bool)  # by flag: whether a row of it is a candidate
    wanted[NOTE], wanted[SESSION] = facts, sessions
    rows = head.rows
    cached = index.cached(file, head)
    kept = None
    if cached is not None:
        flags, scales, sketches, kept = cached
        rough = matvec(sketches, query) * scales
        rough[~wanted[flags]] = -np.inf
    else:
        rough = np.full(rows, -np.inf, dtype=np.float32)
        widened = np.empty((file.block_rows, SKETCH_DIM), dtype=np.float32)
        buffer = np.empty(file.head_bytes, dtype=np.uint8)
        for block in range(-(-rows // file.block_rows)):
            start = block * file.block_rows
            take = min(file.block_rows, rows - start)
            flags, scales, sketches = file.head(block, take, buffer)
            np.copyto(widened[:take], sketches)
            scores = matvec(widened[:take], query) * scales
            rough[start : start + take] = np.where(wanted[flags], scores, -np.inf)
    take = min(limit * RESCORE, rows)
    shortlist = np.argpartition(rough, rows - take)[rows - take :]  # the best, no negated copy
    shortlist = np.sort(shortlist[np.isfinite(rough[shortlist])])
    if not len(shortlist):
        return [], 0.0
    chosen = kept[shortlist] if kept is not None else widen(file.vectors(shortlist))
    exact = matvec(chosen, vector)
    order = np.argsort(-exact, kind="stable")[:limit]
    order = order[exact[order] > MIN_SIMILARITY]
    best = float(exact[order[0]]) if len(order) else 0.0
    return [(int(shortlist[i]) + 1, float(exact[i])) for i in order], best


def vectors_of(self: VectorIndex, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, float32 vectors) of those of ``ids`` whose vector the file holds, by id: from
    the vectors kept in memory if a scan kept them (``cached``), else read from the file
    and widened."""
    # sorted(set()) rather than np.unique, whose check for masked arrays imports numpy.ma
    # (~10 ms of a fresh search's start)
    rows = np.array(sorted(set(ids)), dtype=np.int64) - 1
    rows = rows[(rows >= 0) & (rows < (self.header.rows if self.header else 0))]
    cache = self._cache
    if cache is None or cache[0] != (self._inode, self.header):
        flags, vectors = self.file.pick(rows)
    elif cache[4] is None:
        flags, vectors = self.file.pick(rows, cache[1][rows])
    else:
        flags = cache[1][rows]
        keep = (flags == NOTE) | (flags == SESSION)
        return rows[keep] + 1, cache[4][rows[keep]]
    keep = (flags == NOTE) | (flags == SESSION)
    return rows[keep] + 1, widen(vectors[keep])


def cosines(
    store: Store,
    vector: np.ndarray,
    ids: list[int],
    embedder: Embedder,
    index: VectorIndex | None = None,
) -> tuple[list[tuple[int, float]], float]:
    """(crystal id, cosine) of the given crystals above MIN_SIMILARITY; the best cosine.

    The vectors come from ``index`` (just brought up to date), else from the index this
    process holds if it is current (``held``), else from the store."""
    if not ids or not vector.any():
        return [], 0.0
    index = index or held(store, embedder)
    if index is not None:
        with index._lock:  # a reopened file must not close under the read
            found, matrix = vectors_of(index, ids)
    else:
        dim = embedder.dim
        rows = [
            row for row in store.vectors.vectors_of(ids, embedder.name) if len(row[1]) == 2 * dim
        ]
        found = np.array([row[0] for row in rows], dtype=np.int64)
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float16)
        matrix = widen(matrix.reshape(len(rows), dim))
    if not len(found):
        return [], 0.0
    exact = matvec(matrix, vector)
    similar = [
        (i, c) for i, c in zip(found.tolist(), exact.tolist(), strict=True) if c > MIN_SIMILARITY
    ]
    return similar, float(exact.max())
