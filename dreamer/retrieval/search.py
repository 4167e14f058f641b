"""Hybrid retrieval: FTS5 BM25 with conversational context, plus vectors, then boosted.

1. Lexical: the query's words (never its syntax: every word is quoted, so FTS5 operators in a
   query are just text), stop words dropped, are OR-ed and ranked by BM25 (k1 1.2, b 0.75) over
   a Porter-stemmed index; the best ``LEXICAL_DEPTH`` matches are candidates. In a store of
   ``COMMON_MIN_CRYSTALS`` or more, words found in over ``COMMON_SHARE`` of it (or in over
   ``COMMON_MAX`` crystals) only rank the crystals the rarer words find (BM25 scores every
   crystal a word is in: that is the cost). When every word is that common, the least common
   one finds, and first only the crystals holding another word of the query too: if at least
   the depth of them do, those are the candidates (with the scores the wider query gives
   them); else every crystal holding the least common word is ranked.
2. Context: a memory is often an answer whose words are in the turn before it ("Did you go to
   the support group?" / "Yes, yesterday, it was powerful"). So each crystal's lexical score
   adds ``CONTEXT_WEIGHTS`` times its neighbours' (the crystals one and two ids away), and
   ``EPISODE_WEIGHT`` times the best score in its episode; both only count crystals of the same
   source written within ``EPISODE_SECONDS`` of it (a session's turns), and only for session
   transcripts (``CONTEXT_SOURCES``): a note an agent writes is meant to stand on its own.
   A silent neighbour of a strong match becomes a candidate itself.
3. Semantic: cosine similarity between the query's embedding and the crystals', from an
   in-process matrix that grows incrementally (only vectors the current embedder made).
   Lexical scores are divided by what the query could attain at best (``attainable``: the sum
   of its terms' ``idf × (k1 + 1)``, BM25's ceiling, a term no crystal holds counting
   ``absent_weight`` times a term in one crystal), not by the best match found, so a single
   weak shared word stays weak and meaning can outrank it; then ``weight × cosine`` is added,
   the weight per source (``Fusion.vector_weight``), plus ``margin_weight ×`` how far a
   cosine stands above the ``margin_rank``-th best: a clear vector winner beats a weak word
   match, while a crystal holding most of the question's rare words keeps its lead. Each
   embedder has its own fusion (``fusion_for``): the static vectors' cosines are compressed,
   the sentence model's are not. When the words found ``limit`` candidates and the best
   reaches ``scan_below`` of the ceiling, the vector only re-ranks them (from the vectors the
   process holds if it loaded them, else read from the store); otherwise every vector is
   scanned for candidates too. Products run on the calling thread (``vectors.matvec``).
4. Boost: ``score × (1 + IMPORTANCE_BOOST × importance + RECENCY_BOOST × 2^(-age / half-life))``
   (× ``ARCHIVED_FACTOR`` for archived crystals). The age is measured from the newest crystal
   in the store (or ``now`` if earlier), not from ``now`` alone: a memory is "recent" relative
   to what else the agent knows, so an old but still current archive (LoCoMo's conversations
   are from 2023) is not flattened to "ancient", and a quiet month does not change rankings.
   The boost is mild on purpose: it breaks near-ties, it does not override what words say.

Measured on LoCoMo (``dream bench locomo``; docs/contributing/bench.md), categories 1-4: the
stemmed BM25 step alone gives recall@5/@10 0.547/0.627; the context step lifts that to
0.625/0.720 (plain BM25: 0.523/0.587). The fusion weights were tuned on conversations 0-4 and the
paraphrase dev probe, and checked on conversations 5-9 and the held-out paraphrase probe;
docs/contributing/bench.md has the figures per embedder and the trade-off (more weight on the
static vectors finds more paraphrases but loses LoCoMo recall).

``search_type`` picks ``conversations`` (source ``sessions``), ``facts`` (everything else) or
``both``; ``memory.search.sources`` can take sessions out entirely. Every search is logged and
counts as an access of what it returned (written in batches by the store, off the search's
path: docs/guides/notes-and-search.md); a search with no lexical hit and no close vector is
recorded as a curiosity gap. The store's term frequencies are looked up once a search (``Words``).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import asdict, dataclass, field
from datetime import datetime
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np

from dreamer.config import Settings
from dreamer.errors import UsageError
from dreamer.retrieval.embed import Embedder, embed_texts
from dreamer.retrieval.vectors import cosines, index_for, nearest
from dreamer.store import Store
from dreamer.store.base import PairedMatch, RankRow
from dreamer.store.kinds import SEARCH_TYPES
from dreamer.support.secrets import redact
from dreamer.support.times import as_utc
from dreamer.support.words import QUERY_STOP_WORDS, WORD

COMMON_SHARE = 0.02  # in a large store, words in more crystals than this only rank
COMMON_MIN_CRYSTALS = 20000
COMMON_MAX = 5000  # ... or in more crystals than this, so the cost stops growing with size
LEXICAL_DEPTH = 60  # BM25 candidates; their neighbours and episodes are scored from these
VECTOR_DEPTH = 60
FILTER_WIDTH = 3  # a filtered search ranks this many times more matches, then filters
CONTEXT_WEIGHTS = (0.5, 0.25)  # share of the score of the crystal 1 and 2 ids away
EPISODE_WEIGHT = 0.2  # share of the best score in the same episode
EPISODE_SECONDS = 1800.0
CONTEXT_SOURCES = frozenset({"sessions"})  # transcripts have turns; a note stands on its own
IMPORTANCE_BOOST = 0.3
RECENCY_BOOST = 0.1
RECENCY_HALF_LIFE_DAYS = 30.0
ARCHIVED_FACTOR = 0.85
GAP_SIMILARITY = 0.25


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
    words = [w.lower() for w in WORD.findall(query)]
    kept = [w for w in words if w not in QUERY_STOP_WORDS]
    return list(dict.fromkeys(kept or words))


def _source_filter(search_type: str, settings: Settings) -> tuple[bool, bool]:
    """(include sessions, include everything else)."""
    if search_type not in SEARCH_TYPES:
        raise UsageError(
            f"unknown search type {search_type!r}; use one of {', '.join(SEARCH_TYPES)}"
        )
    sessions = search_type in ("conversations", "both") and settings.sessions_searchable()
    facts = search_type in ("facts", "both") and "memory" in settings.search_sources
    return sessions, facts


def _lexical(
    store: Store,
    terms: list[str],
    sessions: bool,
    facts: bool,
    limit: int,
    words: Words | None = None,
) -> dict[int, float]:
    """BM25 scores (higher is better) of the best `limit` matches."""
    if not terms:
        return {}
    words = words if words is not None and words.terms == terms else Words(store, terms)
    rare, common = _split_common(store, terms, words)
    wide = limit if sessions and facts else FILTER_WIDTH * limit
    rows: list[tuple[int, float]] | None = None
    index = store.search
    if common and isinstance(index, PairedMatch) and _all_common(words, rare):
        # Every word is common (a large store): a crystal holding the least common word and
        # nothing else of the query ranks below those holding two, unless it is very short.
        # Ranking only those holding two is a fraction of the work when enough of them do.
        rows = index.fts_match_paired(rare, common, wide)
        if len(rows) < wide:
            rows = None  # too few hold two words: the least common word alone finds too
    if rows is None:
        rows = store.search.fts_match(rare, common, wide)
    if not (sessions and facts) and rows:
        kept = store.search.ids_of_kind([row[0] for row in rows], sessions)
        filtered = [row for row in rows if row[0] in kept][:limit]
        if len(filtered) < limit and len(rows) == wide:
            # Too few of the wider list pass the filter: rank the filtered matches exactly.
            filtered = store.search.fts_match_filtered(rare, common, sessions, limit)
        rows = filtered
    return {row[0]: max(row[1], 0.0) for row in rows}


class Words:
    """What a search knows of its words' frequencies: the store's size and, once asked, in
    how many crystals each word occurs (one look-up a search, shared by every step)."""

    def __init__(self, store: Store, terms: list[str]):
        self.store = store
        self.terms = terms
        self.total = store.crystals.max_crystal_id()
        self._counts: dict[str, int] | None = None

    @property
    def counts(self) -> dict[str, int]:
        """In how many crystals each term's stem occurs (asked of the store once)."""
        if self._counts is None:
            self._counts = self.store.search.term_frequencies(self.terms) if self.terms else {}
        return self._counts


def _split_common(
    store: Store, terms: list[str], words: Words | None = None
) -> tuple[list[str], list[str]]:
    """(rare, common) words of a query; common ones only in a large store (see below).

    BM25 must score every crystal a word occurs in, so a word found in 10% of 100k crystals
    costs more than the rest of the search together. In a store of ``COMMON_MIN_CRYSTALS`` or
    more, a word in over ``COMMON_SHARE`` of the crystals is common: it ranks the crystals the
    rare words find but finds none itself. A query of common words only keeps them all.
    Frequencies come from FTS5's own vocabulary, looked up by the stem FTS5 makes of each word.
    """
    if len(terms) < 2:
        return terms, []
    words = words if words is not None else Words(store, terms)
    total = words.total
    if total < COMMON_MIN_CRYSTALS:
        return terms, []
    counts = words.counts
    limit = _common_line(total)
    present = [term for term in terms if counts[term] > 0]
    if not present:
        return terms, []
    # With no rare word the least common one must be there: the most specific word asked.
    rare = [term for term in present if counts[term] <= limit] or [
        min(present, key=lambda term: counts[term])
    ]
    return rare, [term for term in present if term not in rare]


def _common_line(total: int) -> float:
    """A word in more crystals than this is common (in a store of ``COMMON_MIN_CRYSTALS``)."""
    return min(COMMON_SHARE * total, COMMON_MAX)


def _all_common(words: Words, rare: list[str]) -> bool:
    """Whether the words ``_split_common`` let find are common too (it kept the least common
    one because no word was rare)."""
    if words.total < COMMON_MIN_CRYSTALS:
        return False
    line = _common_line(words.total)
    return all(words.counts.get(term, 0) > line for term in rare)


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


# Each transcript source a code from 0 (every other source is -1: it has no turns).
_TALK = {name: code for code, name in enumerate(sorted(CONTEXT_SOURCES))}
_SLACK = 1e-6  # days: what a window look-up takes in beyond the window, then checks exactly


def _context_scores(rows: list[RankRow], lexical: dict[int, float]) -> dict[int, float]:
    """The scores of ``_in_context`` from the crystals' rows (candidates and neighbours).

    Columns, not a Python object per row, and no pair of crystals compared unless they can be
    neighbours (a sweep over ids) or of one episode (a sweep over time): a search reads
    hundreds of rows.
    """
    if not rows:
        return {}
    n = len(rows)
    id_column, source_column, day_column = list(zip(*rows, strict=True))[:3]
    ids = np.fromiter(id_column, np.int64, n)
    order = np.argsort(ids)
    ids = ids[order]
    source = np.fromiter(map(_TALK.get, source_column, repeat(-1)), np.int64, n)[order]
    talk = source >= 0
    day = np.fromiter(day_column, np.float64, n)[order]
    own = np.fromiter(map(lexical.get, ids.tolist(), repeat(0.0)), np.float64, n)
    window = EPISODE_SECONDS / 86400.0
    # Neighbours (same source, within the window, both turns): the crystal d ids away sits at
    # most d places away among the sorted ids. shares[d - 1]: weight x the own score of the
    # crystal d ids before, and of the one d ids after (0 where there is none).
    reach = len(CONTEXT_WEIGHTS)
    shares = [(np.zeros(n), np.zeros(n)) for _ in CONTEXT_WEIGHTS]
    weighed = [weight * own for weight in CONTEXT_WEIGHTS]  # each distance's share of own
    for step in range(1, min(reach, n - 1) + 1):
        gap = ids[step:] - ids[:-step]
        linked = (
            (source[step:] == source[:-step])
            & (source[:-step] >= 0)
            & (np.abs(day[step:] - day[:-step]) <= window)
        )
        for distance in range(step, reach + 1):
            share = weighed[distance - 1]
            pair = linked & (gap == distance)
            before, after = shares[distance - 1]
            after[:-step] = np.where(pair, share[step:], after[:-step])
            before[step:] = np.where(pair, share[:-step], before[step:])
    context = np.zeros(n)
    for before, after in shares:
        context += before
        context += after
    # The best own score among candidates of the same episode (same source, close in time);
    # only transcript turns have episodes. The matched turns sorted by source then time: each
    # turn's episode is a range of them.
    matched = np.flatnonzero((own > 0) & talk)
    episode = np.zeros(n)
    if len(matched):
        turns = np.flatnonzero(talk)
        matched = matched[np.lexsort((day[matched], source[matched]))]
        match_day, match_source = day[matched], source[matched]
        turn_day, turn_source = day[turns], source[turns]
        reach_days = window + _SLACK
        if len(_TALK) == 1:  # one transcript source: every turn and match share it
            low = np.searchsorted(match_day, turn_day - reach_days, "left")
            high = np.searchsorted(match_day, turn_day + reach_days, "right")
        else:
            low = np.zeros(len(turns), np.int64)
            high = np.zeros(len(turns), np.int64)
            for code in range(len(_TALK)):
                first, last = np.searchsorted(match_source, [code, code + 1])
                mine = turn_source == code
                days = match_day[first:last]
                low[mine] = first + np.searchsorted(days, turn_day[mine] - reach_days, "left")
                high[mine] = first + np.searchsorted(days, turn_day[mine] + reach_days, "right")
        counts = high - low
        pairs = int(counts.sum())
        if pairs:
            starts = np.cumsum(counts) - counts
            pair_turn = np.repeat(np.arange(len(turns)), counts)
            pair_match = np.arange(pairs) + np.repeat(low - starts, counts)
            close = np.abs(match_day[pair_match] - turn_day[pair_turn]) <= window
            values = np.where(close, own[matched][pair_match], 0.0)
            some = counts > 0
            episode[turns[some]] = np.maximum.reduceat(values, starts[some])
    total = own + context + EPISODE_WEIGHT * episode
    # A crystal with no word of the query and no matching neighbour stays out: the episode
    # alone says "this session", not "this memory".
    keep = (own > 0) | (context > 0)
    return dict(zip(ids[keep].tolist(), total[keep].tolist(), strict=True))


def _julian(moment: datetime) -> float:
    """A time as SQLite's julianday() gives it, to compare with stored times in numpy."""
    return as_utc(moment).timestamp() / 86400.0 + 2440587.5


@dataclass(frozen=True)
class Fusion:
    """How word scores and meaning scores combine into one ranking (see the module doc)."""

    # Word scores are divided by what the query could attain (its terms' BM25 ceiling), so one
    # weak shared word stays weak; "found" divides by the best match found instead.
    normalise: str = "attainable"
    vector_weight: dict[str, float] = field(
        default_factory=lambda: {"sessions": 0.25, "notes": 0.4}
    )
    # Below this share of the attainable word score, every vector is scanned for candidates
    # (0.4: on LoCoMo conversations 0-4 as good as 0.5, and a scan in a quarter of the
    # synthetic questions at 10k instead of nearly half; 0.3 lost notes recall).
    scan_below: float = 0.4
    # A clear vector winner: each candidate also gains ``margin_weight × (cosine - the
    # margin_rank-th best cosine)`` when positive, so a match standing above the pack of
    # vectors can beat a weak shared word, while the pack itself gains nothing.
    margin_weight: float = 0.0
    margin_rank: int = 5
    # How much a query word no crystal holds weighs in the attainable score (see attainable).
    absent_weight: float = 0.0
    # A crystal the words did not find joins on its vector alone only from this cosine up: the
    # sentence model gives unrelated short texts 0.1-0.15 (the static vectors' floor is lower).
    vector_floor: float = 0.0


# Each embedder's cosines mean something else: the static vectors' are compressed (unrelated
# texts still reach 0.3), the sentence model's spread out. So the fusion follows the embedder
# (its name up to the first "-"); tuned on LoCoMo conversations 0-4 and the paraphrase dev set.
FUSION = Fusion(absent_weight=0.5, margin_weight=1.0)
FUSIONS = {
    "minilm": Fusion(
        vector_weight={"sessions": 0.4, "notes": 0.8},
        absent_weight=1.0,
        margin_weight=2.0,
        vector_floor=0.15,
    ),
}


def fusion_for(embedder: Embedder) -> Fusion:
    """The fusion tuned for this embedder's vectors (the default one for others)."""
    return FUSIONS.get(embedder.name.split("-", 1)[0], FUSION)


BM25_K1 = 1.2  # FTS5's bm25() constant: a term's score approaches idf * (k1 + 1)


def attainable(
    store: Store, terms: list[str], absent: float = 0.0, words: Words | None = None
) -> float:
    """The highest BM25 score any crystal could get for these terms (FTS5's formula).

    A term no crystal holds counts ``absent`` times the weight of a term in one crystal: it
    is part of what was asked, so a match of the other words answers less of the question.
    ``words``: the frequencies this search already looked up (else asked of the store).
    """
    words = words if words is not None and words.terms == terms else Words(store, terms)
    total = max(words.total, 1)
    score = 0.0
    for count in words.counts.values():
        # As FTS5 does, a term in half the crystals or more weighs 1e-6. (The count may run
        # ahead of the total read a moment earlier, while others write.)
        ratio = (total - count + 0.5) / (count + 0.5)
        weight = (math.log(ratio) if ratio > 1 else 1e-6) * (BM25_K1 + 1.0)
        score += weight * (absent if count == 0 else 1.0)
    return score


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
    fusion: Fusion | None = None,
) -> list[Hit]:
    """Find the crystals that best answer query; log the search and count the accesses."""
    if limit < 1:
        raise UsageError(f"limit must be at least 1, not {limit}")
    sessions, facts = _source_filter(search_type, settings)
    if not query.strip() or not (sessions or facts):
        return []
    fusion = fusion or fusion_for(embedder)
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
        _fuse(store, fusion, fused, semantic, contextual, known)
    hits: list[Hit] = []
    if fused:
        # The rows of every candidate were read on the way (None: a crystal forgotten since)
        rows = [row for row in map(known.get, fused) if row is not None]
        newest = min(_julian(now), store.search.newest_day() or _julian(now))
        n = len(rows)
        columns = list(zip(*rows, strict=True)) or [()] * 5
        ids = columns[0]
        day, importance, archived = (
            np.fromiter(columns[column], np.float64, n) for column in (2, 3, 4)
        )
        recency = 0.5 ** (np.maximum(newest - day, 0.0) / RECENCY_HALF_LIFE_DAYS)
        boost = (1.0 + IMPORTANCE_BOOST * importance + RECENCY_BOOST * recency) * np.where(
            archived > 0, ARCHIVED_FACTOR, 1.0
        )
        scores = np.round(np.fromiter(map(fused.__getitem__, ids), np.float64, n) * boost, 6)
        # Best first; equal scores put the newer crystal (higher id) first.
        order = np.lexsort((-np.fromiter(ids, np.int64, n), -scores))[:limit].tolist()
        best = dict(zip([ids[i] for i in order], scores[order].tolist(), strict=True))
        for row in store.search.hit_rows(list(best)):
            crystal_id, text, source, kind, weight, lifecycle, created = row
            hits.append(
                Hit(crystal_id, text, best[crystal_id], source, kind, weight, lifecycle, created)
            )
        hits.sort(key=lambda hit: (-hit.score, -hit.id))
    if record:
        _record(
            store,
            redact(query).text if settings.redact_secrets else query,
            search_type,
            hits,
            now,
            gap=not lexical and best_similarity < GAP_SIMILARITY,
        )
    return hits


def _fuse(
    store: Store,
    fusion: Fusion,
    fused: dict[int, float],
    semantic: list[tuple[int, float]],
    contextual: dict[int, float],
    known: dict[int, tuple[Any, ...]],
) -> None:
    """Add each vector match's weighed cosine and margin to its word score in ``fused``
    (joining it there unless it is below the floor and the words did not find it).

    A loop over a few hundred plain floats: the arithmetic numpy did per element, in the
    same order, so the same bits, without building arrays for it.
    """
    missing = set(map(itemgetter(0), semantic)).difference(known)
    if missing:  # its kind decides its weight: rows read once, kept in known
        known.update((row[0], row) for row in _rows(store, sorted(missing)))
    pack = _pack_level(semantic, fusion.margin_rank)
    sessions_weight = fusion.vector_weight["sessions"]
    notes_weight = fusion.vector_weight["notes"]
    margin_weight, floor = fusion.margin_weight, fusion.vector_floor
    for crystal_id, similarity in semantic:
        # Below the floor, a vector alone does not make a candidate.
        if similarity >= floor or crystal_id in contextual:
            row = known.get(crystal_id)
            weight = (
                sessions_weight if row is not None and row[1] in CONTEXT_SOURCES else notes_weight
            )
            fused[crystal_id] = (
                fused.get(crystal_id, 0.0)
                + weight * similarity
                + margin_weight * max(similarity - pack, 0.0)
            )


def _pack_level(semantic: list[tuple[int, float]], rank: int) -> float:
    """The cosine of the ``rank``-th best vector match: what "the rest" reach."""
    if len(semantic) < rank:
        return 1.0  # too few to tell a winner from the pack: no margin counts
    return heapq.nlargest(rank, map(itemgetter(1), semantic))[-1]


def _record(
    store: Store, query: str, search_type: str, hits: list[Hit], now: datetime, gap: bool
) -> None:
    # The query arrives redacted (unless redaction is off): the log keeps it.
    store.search.record_search(
        now, query, search_type, [hit.id for hit in hits], hits[0].score if hits else None, gap=gap
    )
