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
from collections.abc import Callable
from typing import Any

from dreamer.retrieval.embed import Embedder, embed_texts, to_blob
from dreamer.store import Store

BATCH = 256  # crystals embedded and written per transaction
TICK_LIMIT = 5_000  # crystals a consolidation tick re-embeds; the rest wait for the next
WAITING_LIMIT = 256  # notes without a vector a search embeds before it ranks


def reindex(
    store: Store,
    embedder: Embedder,
    *,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Give up to ``limit`` stale crystals (all by default) a vector from ``embedder``."""
    done = 0
    while limit is None or done < limit:
        size = BATCH if limit is None else min(BATCH, limit - done)
        stale = store.vectors.stale_vectors(embedder.name, size)
        if not stale:
            break
        vectors = embed_texts(embedder, [text for _, text in stale])
        store.vectors.set_vectors(
            [
                (crystal_id, to_blob(vector))
                for (crystal_id, _), vector in zip(stale, vectors, strict=True)
            ],
            embedder.name,
        )
        done += len(stale)
        if progress:
            progress(len(stale))
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


def embed_waiting(store: Store, embedder: Embedder, *, limit: int = WAITING_LIMIT) -> int:
    """Give up to ``limit`` crystals that have no vector yet theirs (oldest first)."""
    mark = store.change_mark()  # before the look-up: a note written after it moves the mark
    if mark is not None and _none_waiting.get(store) == mark:
        return 0
    waiting = store.vectors.unembedded(0, None, limit)
    if not waiting:
        if mark is not None:
            _none_waiting[store] = mark
        return 0
    vectors = embed_texts(embedder, [text for _, _, text in waiting])
    store.vectors.set_vectors(
        [
            (crystal_id, to_blob(vector))
            for (crystal_id, _, _), vector in zip(waiting, vectors, strict=True)
        ],
        embedder.name,
    )
    return len(waiting)
