"""The search's cheaper steps rank exactly as before: the same ids, the same scores to the bit.

``tests/search_before.py`` keeps the search as it was before its fixed costs were cut (numpy
over a few hundred candidates, a wrapper per step); every query here runs through both on a
generated workspace (session turns and notes with WordLlama's vectors), with the vector file
held open and without, each search type, two limits, each embedder's fusion, and the word step
of a large store.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from search_before import FUSIONS as FUSIONS_BEFORE
from search_before import fuse_before, search_before

from dreamer.retrieval import search as search_module
from dreamer.retrieval import static, vectors
from dreamer.retrieval.search import FUSION, FUSIONS, _fuse, search

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not static.available(), reason="wordllama is not installed"),
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A workspace of 2,000 synthetic crystals with vectors, and the time they were made."""
    from synthetic import NOW, bulk_load

    from dreamer.memory.workspace import Workspace

    ws = Workspace.open(
        tmp_path_factory.mktemp("identical") / "ws", overrides={"embedder": "wordllama"}
    )
    ws.init()
    bulk_load(ws, 2000, random.Random(5), NOW - timedelta(hours=1))
    # A few archived and important ones, so the boost has every term to weigh.
    ws.store.db.execute("UPDATE crystals SET lifecycle = 'archived' WHERE id % 11 = 0")
    ws.store.db.execute("UPDATE crystals SET importance = 0.9 WHERE id % 7 = 0")
    ws.store.db.conn.commit()
    yield ws, NOW
    ws.close()
    vectors.clear_cache()


def _queries(count: int, seed: int) -> list[str]:
    """Synthetic questions, words no crystal holds (the vector step alone), and mixes."""
    from synthetic import synthetic_query, synthetic_text

    rng = random.Random(seed)
    out = [synthetic_query(rng) for _ in range(count)]
    out += [synthetic_text(rng)[:60] for _ in range(count // 4)]
    out += ["zzqx wibble", "the", "kiln", "quarterly roadmap postmortem migration", "Grace"]
    return out


def _current(fusion: str):
    """The search's fusion of this name today (search_before holds its own copies)."""
    return FUSION if fusion == "default" else FUSIONS[fusion]


def _compare(ws, now, queries, *, fusion=None, types=("both", "conversations", "facts")):
    compared = found = 0
    for n, query in enumerate(queries):
        search_type = types[n % len(types)]
        limit = (6, 10)[n % 2]
        expected = search_before(
            ws.store,
            ws.embedder,
            ws.settings,
            query,
            now=now,
            limit=limit,
            search_type=search_type,
            fusion=FUSIONS_BEFORE[fusion] if fusion else None,
        )
        hits = search(
            ws.store,
            ws.embedder,
            ws.settings,
            query,
            now=now,
            limit=limit,
            search_type=search_type,
            record=False,
            fusion=_current(fusion) if fusion else None,
        )
        assert [(hit.id, hit.score) for hit in hits] == expected, query
        compared += 1
        found += bool(expected)
    return compared, found


@pytest.mark.parametrize("held", [False, True], ids=["store", "held-file"])
@pytest.mark.parametrize("fusion", ["default", "minilm"])
def test_every_search_ranks_as_before(generated, held, fusion):
    ws, now = generated
    vectors.clear_cache()
    if held:
        vectors.index_for(ws.store, ws.embedder)
    scans = vectors.scans
    compared, found = _compare(ws, now, _queries(120, seed=3), fusion=fusion)
    assert found > compared * 0.8
    assert vectors.scans - scans > 20  # weak word matches scanned every vector, too


def test_a_large_stores_word_step_ranks_as_before(generated, monkeypatch):
    ws, now = generated
    # What a store of 20,000 crystals or more does with common words, at this size.
    monkeypatch.setattr(search_module, "COMMON_MIN_CRYSTALS", 100)
    monkeypatch.setattr(search_module, "COMMON_MAX", 40)
    compared, found = _compare(ws, now, _queries(80, seed=4))
    assert found > compared * 0.8


@pytest.mark.parametrize("fusion", ["default", "minilm"])
def test_the_fusion_adds_the_very_floats_numpy_added(generated, fusion):
    """Before the rounding a search's scores get: each fused score to the last bit."""
    import numpy as np

    ws, _ = generated
    rng = random.Random(8)
    for _ in range(300):
        ids = rng.sample(range(1, 2100), rng.randrange(1, 300))  # past 2,000: no such crystal
        cosines = np.array([rng.uniform(0.08, 0.9) for _ in ids], dtype=np.float32).tolist()
        semantic = list(zip(ids, cosines, strict=True))
        contextual = {i: rng.random() * 4 for i in rng.sample(ids, len(ids) // 2)}
        contextual.update((rng.randrange(1, 2000), rng.random()) for _ in range(5))
        known = {row[0]: row for row in ws.store.search.rank_rows(rng.sample(ids, len(ids) // 3))}
        fused = {i: score / 4.5 for i, score in contextual.items()}
        expected, expected_known = dict(fused), dict(known)
        fuse_before(
            ws.store, FUSIONS_BEFORE[fusion], expected, semantic, contextual, expected_known
        )
        _fuse(ws.store, _current(fusion), fused, semantic, contextual, known)
        assert fused == expected
        assert known == expected_known


def test_a_store_reached_through_a_link_shares_its_real_paths_vector_file(tmp_path, now):
    """The process keeps one vector index per database file: a store opened by a symlinked
    path finds the one its real path opened (the path is resolved once per store)."""
    from dreamer.memory.workspace import Workspace

    real = Workspace.open(tmp_path / "real")
    real.note("The kiln parts ship on Monday from the Leeds warehouse", at=now)
    real.search("kiln", now=now)  # gives the note its vector
    (tmp_path / "link").symlink_to(tmp_path / "real")
    linked = Workspace.open(tmp_path / "link")
    try:
        assert linked.store.path != real.store.path
        first = vectors.index_for(real.store, real.embedder)
        assert vectors.index_for(linked.store, linked.embedder) is first
        assert vectors.held(linked.store, linked.embedder) is first
    finally:
        linked.close()
        real.close()
        vectors.clear_cache()
