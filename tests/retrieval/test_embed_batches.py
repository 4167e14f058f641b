"""Embedding in bounded batches: however many texts wait, an embedder is handed at most
``BATCH_TEXTS`` texts and ``BATCH_CHARS`` characters a call, and every text still gets the
vector it would get alone."""

from __future__ import annotations

import numpy as np

from dreamer import Workspace
from dreamer.agents import export
from dreamer.retrieval.embed import (
    BATCH_CHARS,
    BATCH_TEXTS,
    EMBED_MAX_CHARS,
    HashingEmbedder,
    embed_texts,
)
from dreamer.retrieval.reindex import embed_waiting, reindex
from dreamer.service import consolidation
from dreamer.store import NewCrystal


class RecordingEmbedder:
    """The hashing embedder under another name, noting the size of every call it gets."""

    def __init__(self, name: str = "recording-hashing") -> None:
        self._inner = HashingEmbedder()
        self.name = name
        self.dim = self._inner.dim
        self.calls: list[tuple[int, int]] = []  # (texts, characters) of each call

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append((len(texts), sum(len(text) for text in texts)))
        return self._inner.embed(texts)


def _texts(count: int) -> list[str]:
    """Texts of many lengths; every 30th so long that a few fill a batch's characters."""
    lengths = (40, 300, 1_500)
    return [
        f"note {i} about the kiln firing schedule "
        * ((30_000 if i % 30 == 0 else lengths[i % 3]) // 40 + 1)
        for i in range(count)
    ]


def _waiting(ws: Workspace, texts: list[str], now) -> list[int]:
    rows = [
        NewCrystal(text, importance=0.5, source="sessions", semantic_type="episodic", at=now)
        for text in texts
    ]
    return [crystal_id for crystal_id, _ in ws.store.crystals.add_crystals(rows)]


def _assert_bounded(calls: list[tuple[int, int]]) -> None:
    assert calls, "the embedder was never called"
    for texts, chars in calls:
        assert texts <= BATCH_TEXTS
        assert chars <= BATCH_CHARS or texts == 1  # one long text is clipped on its own


def test_embed_texts_hands_the_embedder_bounded_batches_and_keeps_each_vector():
    recorder = RecordingEmbedder()
    texts = _texts(300)
    vectors = embed_texts(recorder, texts)
    _assert_bounded(recorder.calls)
    assert sum(texts for texts, _ in recorder.calls) == 300
    alone = np.stack([HashingEmbedder().embed([text[:EMBED_MAX_CHARS]])[0] for text in texts])
    assert np.allclose(vectors, alone)  # in the callers' order, whatever the batching
    assert embed_texts(recorder, []).shape == (0, recorder.dim)


def test_waiting_notes_are_embedded_a_bounded_batch_at_a_time(tmp_path, now):
    recorder = RecordingEmbedder()
    with Workspace.open(tmp_path / "ws", embedder=recorder) as ws:
        ws.init()
        ids = _waiting(ws, _texts(300), now)
        seen: list[tuple[int, int]] = []
        done = embed_waiting(
            ws.store, recorder, limit=10_000, progress=lambda d, t: seen.append((d, t))
        )
        assert done == 300 and ws.store.vectors.unembedded() == []
        assert all(ws.get(crystal_id).embedder == recorder.name for crystal_id in ids)
        _assert_bounded(recorder.calls)
        assert seen[-1] == (300, 300) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_consolidation_tick_and_a_reindex_embed_in_bounded_batches(tmp_path, now):
    first = RecordingEmbedder()
    with Workspace.open(tmp_path / "ws", embedder=first) as ws:
        ws.init()
        _waiting(ws, _texts(150), now)
        consolidation.tick(ws, now)
        assert ws.store.vectors.unembedded() == []
        _assert_bounded(first.calls)
    second = RecordingEmbedder("recording-hashing-2")  # a change of embedder: all stale
    with Workspace.open(tmp_path / "ws", embedder=second) as ws:
        seen: list[tuple[int, int]] = []
        assert reindex(ws.store, second, progress=lambda d, t: seen.append((d, t))) >= 150
        _assert_bounded(second.calls)
        assert seen[-1][0] == seen[-1][1]


def test_an_import_embeds_in_bounded_batches(tmp_path, now):
    with Workspace.open(tmp_path / "from") as source:
        source.init()
        for text in _texts(150):
            source.note(text[:20_000], at=now)
        export.export_all(source, tmp_path / "all.jsonl", now)
    recorder = RecordingEmbedder()
    with Workspace.open(tmp_path / "to", embedder=recorder) as ws:
        ws.init()
        seen: list[tuple[int, int]] = []
        export.import_all(
            ws, export.read(tmp_path / "all.jsonl"), now, progress=lambda d, t: seen.append((d, t))
        )
        assert ws.store.vectors.unembedded() == []
        _assert_bounded(recorder.calls)
        assert seen and seen[-1][0] == seen[-1][1] and seen[-1][1] >= 150
