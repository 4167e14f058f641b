"""The context step's sweep gives the scores of the dense computation it replaced, exactly."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dreamer.retrieval import search
from dreamer.retrieval.search import _context_scores

pytestmark = pytest.mark.slow

# The weights as first written, copied rather than imported: a changed weight fails here.
CONTEXT_WEIGHTS = (0.5, 0.25)
EPISODE_SECONDS = 1800.0
EPISODE_WEIGHT = 0.2


def _reference(rows, lexical):
    """The context scores as first written: every turn against every matched turn."""
    id_column, source_column, day_column = list(zip(*rows, strict=True))[:3]
    ids = np.array(id_column, dtype=np.int64)
    order = np.argsort(ids)
    ids = ids[order]
    names = np.array(source_column)[order]
    _, source = np.unique(names, return_inverse=True)
    day = np.array(day_column, dtype=np.float64)[order]
    own = np.array([lexical.get(i, 0.0) for i in ids.tolist()], dtype=np.float64)
    talk = np.isin(names, list(search.CONTEXT_SOURCES))
    window = EPISODE_SECONDS / 86400.0
    context = np.zeros(len(ids))
    for distance, weight in enumerate(CONTEXT_WEIGHTS, start=1):
        for other_id in (ids - distance, ids + distance):
            at = np.clip(np.searchsorted(ids, other_id), 0, len(ids) - 1)
            same = (
                (ids[at] == other_id)
                & (source[at] == source)
                & talk
                & (np.abs(day[at] - day) <= window)
            )
            context += np.where(same, weight * own[at], 0.0)
    matched = np.flatnonzero((own > 0) & talk)
    episode = np.zeros(len(ids))
    if len(matched):
        turns = np.flatnonzero(talk)
        close = (source[turns, None] == source[None, matched]) & (
            np.abs(day[turns, None] - day[None, matched]) <= window
        )
        episode[turns] = np.where(close, own[None, matched], 0.0).max(axis=1)
    total = own + context + EPISODE_WEIGHT * episode
    keep = (own > 0) | (context > 0)
    return dict(zip(ids[keep].tolist(), total[keep].tolist(), strict=True))


def _random_case(rng, sources):
    """Rows (shuffled) and lexical scores: runs of ids with gaps, turns of several sessions
    in time (some exactly a window apart, some at one moment), notes between, ties."""
    step = EPISODE_SECONDS / 86400.0
    rows, crystal_id, day = [], rng.randrange(1, 50), 2460000.5 + rng.random()
    for _ in range(rng.randrange(1, 40)):
        source = rng.choice(sources)
        crystal_id += rng.choice((1, 1, 1, 2, 3, 7))
        day += rng.choice((0.0, 0.0, step, step / 3, 2 * step, rng.random() * step, 5.0))
        rows.append((crystal_id, source, day, round(rng.random(), 2), rng.randrange(2)))
    picked = rng.sample(rows, rng.randrange(1, len(rows) + 1))
    scores = (0.0, 1.5, 1.5, 2.25, 3.0)
    lexical = {
        row[0]: rng.choice(scores) if rng.random() < 0.5 else rng.random() * 5 for row in picked
    }
    rng.shuffle(rows)
    return rows, lexical


@pytest.mark.parametrize("talk", [("sessions",), ("sessions", "chat")], ids=["one", "two"])
def test_context_scores_are_the_dense_computations_exactly(monkeypatch, talk):
    monkeypatch.setattr(search, "CONTEXT_SOURCES", frozenset(talk))
    monkeypatch.setattr(search, "_TALK", {name: code for code, name in enumerate(sorted(talk))})
    rng = random.Random(11)
    sources = ["sessions", "sessions", "sessions", "scratch", "memory", "chat"]
    compared = with_context = 0
    for _ in range(3000):
        rows, lexical = _random_case(rng, sources)
        expected = _reference(rows, lexical)
        assert _context_scores(rows, lexical) == expected
        compared += 1
        with_context += any(score != lexical.get(i, 0.0) for i, score in expected.items())
    assert with_context > compared // 2  # most cases exercise the neighbours and episodes
    assert _context_scores([], {}) == {}
