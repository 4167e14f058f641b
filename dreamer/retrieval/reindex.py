"""Re-embedding: every crystal's vector made by the workspace's current embedder.

Vectors record the embedder that made them (name and version), and search compares only
vectors of the current embedder, so after a change of embedder (a new default, an upgrade, a
setting) older crystals are found by their words only until they are re-embedded. That
happens in the background, a batch per consolidation tick, or at once with ``dream reindex``.

A crystal with no vector at all is a note a fresh ``dream note`` wrote without loading the
embedder (its cold start): ``embed_waiting`` gives it one at the next search in any process
(which loads the embedder anyway) or the next tick. In-process indexes pick such late vectors up
by themselves (``dreamer.retrieval.vectors``), so this needs no reload of theirs.
"""

from __future__ import annotations

import weakref
from typing import Any

from dreamer.retrieval.embed import Embedder, embed_texts, to_blob
from dreamer.store import Store
from dreamer.support.progress import Progress

BATCH = 256  # crystals read, embedded and written per transaction
TICK_LIMIT = 5_000  # crystals a consolidation tick re-embeds; the rest wait for the next
WAITING_LIMIT = 256  # notes without a vector a search embeds before it ranks


def reindex(
    store: Store,
    embedder: Embedder,
    *,
    limit: int | None = None,
    progress: Progress | None = None,
) -> int:
    """Give up to ``limit`` stale crystals (all by default) a vector from ``embedder``,
    ``BATCH`` at a time; ``progress(done, total)`` counts crystals."""
    total = store.vectors.count_stale_vectors(embedder.name) if progress else 0
    if limit is not None:
        total = min(total, limit)
    done = 0
    while limit is None or done < limit:
        size = BATCH if limit is None else min(BATCH, limit - done)
        stale = store.vectors.stale_vectors(embedder.name, size)
        if not stale:
            break
        _store_vectors(store, embedder, [(crystal_id, text) for crystal_id, text in stale])
        done += len(stale)
        if progress:
            progress(done, max(total, done))
    if done:
        from dreamer.retrieval.vectors import GENERATION_KEY, clear_cache

        # Indexes other processes built hold the old vectors: tell them to reload.
        generation = int(store.records.get_meta(GENERATION_KEY) or 0) + 1
        store.records.set_meta(GENERATION_KEY, str(generation))
        clear_cache()
    return done


# Each store's change mark when it was last found with no crystal waiting for a vector: until
# the mark moves (a note written here or by another process), no search need look again.
_none_waiting: weakref.WeakKeyDictionary[Store, Any] = weakref.WeakKeyDictionary()


def embed_waiting(
    store: Store,
    embedder: Embedder,
    *,
    limit: int = WAITING_LIMIT,
    progress: Progress | None = None,
) -> int:
    """Give up to ``limit`` crystals that have no vector yet theirs (oldest first), ``BATCH``
    at a time, so memory stays flat however many wait; ``progress(done, total)`` counts
    crystals, ``total`` being ``limit`` or what waits, whichever is fewer."""
    mark = store.change_mark()  # before the look-up: a note written after it moves the mark
    if mark is not None and _none_waiting.get(store) == mark:
        return 0
    total = min(limit, store.vectors.count_stale_vectors(embedder.name)) if progress else 0
    done = after = 0
    while done < limit:
        waiting = store.vectors.unembedded(after, None, min(BATCH, limit - done))
        if not waiting:
            break
        _store_vectors(store, embedder, [(crystal_id, text) for crystal_id, _, text in waiting])
        done += len(waiting)
        after = waiting[-1][0]  # on past any the store did not take (forgotten meanwhile)
        if progress:
            progress(done, max(total, done))
    if not done and mark is not None:
        _none_waiting[store] = mark
    return done


def _store_vectors(store: Store, embedder: Embedder, rows: list[tuple[int, str]]) -> None:
    """Embed the texts of (id, text) rows and store their vectors, in one transaction."""
    vectors = embed_texts(embedder, [text for _, text in rows])
    store.vectors.set_vectors(
        [
            (crystal_id, to_blob(vector))
            for (crystal_id, _), vector in zip(rows, vectors, strict=True)
        ],
        embedder.name,
    )
