"""The word index a dream uses for novelty and near-duplicates gives the pairwise answers."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamer.dream import inputs
from dreamer.dream.jaccard import WordIndex, jaccard
from dreamer.store import Crystal
from dreamer.support.words import stems

WORDS = [f"w{i}" for i in range(14)]  # few words, so overlaps near any threshold are common
word_sets = st.lists(st.sets(st.sampled_from(WORDS), max_size=12), max_size=25)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    indexed=word_sets,
    asked=word_sets,
    threshold=st.sampled_from([0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0]),
)
def test_index_answers_as_pairwise_comparison(indexed, asked, threshold):
    index = WordIndex(WordIndex.frequencies([*indexed, *asked]))
    for words in indexed:
        index.add(words, threshold)
    for words in asked:
        pairwise = [jaccard(words, other) for other in indexed if words]
        assert index.best(words) == max(pairwise, default=0)
        assert index.reaches(words, threshold) == any(v >= threshold for v in pairwise)


def _pairwise_select(crystals, room, now, state_lines):
    """The selection as it was before the index: every pair compared."""
    known = [stems(line) for line in state_lines if line.strip()]

    def key(c):
        words = stems(c.text[: inputs.CLIP_CHARS])
        first = c.semantic_type == "directive" or bool(inputs._CORRECTION.search(c.text[:400]))
        hours = max(0.0, (now - datetime.fromisoformat(c.created_at)).total_seconds() / 3600)
        overlap = max((jaccard(words, o) for o in known if words), default=0)
        score = c.importance + 0.3 / (1.0 + hours / 24.0) + 0.2 * (1.0 - overlap)
        return (0.0 if first else 1.0, -round(score, 6), -c.id)

    chosen, covered, used, seen = [], [], 0, []
    for c in sorted(crystals, key=key):
        words = stems(c.text[: inputs.CLIP_CHARS])
        if words and any(jaccard(words, o) >= inputs.NEAR_DUPLICATE for o in seen):
            covered.append(c.id)
            continue
        cost = inputs.tokens.count(inputs.note_line(c)) + 1
        if used + cost > room:
            continue
        used += cost
        chosen.append(c.id)
        seen.append(words)
    return chosen, covered


def test_selection_matches_pairwise_selection_on_repetitive_notes():
    rng = random.Random(5)
    now = datetime(2026, 3, 12, 12, tzinfo=UTC)
    vocab = "deploy staging invoice Ada Priya report migration cache login budget fix ship".split()
    crystals = [
        Crystal(
            id=i,
            text=" ".join(rng.choice(vocab) for _ in range(rng.randrange(3, 9))),
            source="scratch",
            semantic_type=rng.choice(["world_fact", "directive", "task"]),
            importance=round(rng.uniform(0.2, 0.9), 2),
            lifecycle="generated",
            created_at=(now - timedelta(hours=rng.randrange(0, 72))).isoformat(),
            updated_at=now.isoformat(),
            last_accessed_at=None,
            access_count=0,
            dopamine=None,
            cortisol=None,
            oxytocin=None,
            content_hash=str(i),
            parent_id=None,
            origin=None,
            consolidated_at=None,
        )
        for i in range(1, 400)
    ]
    state = ["- Ada ships the staging deploy", "- the invoice report budget", ""]
    for room in (300, 3_000, 100_000):
        got = inputs.select(crystals, room, now, state)
        chosen, covered = _pairwise_select(crystals, room, now, state)
        assert [c.id for c in got.chosen] == chosen
        assert got.covered == covered
        assert covered  # the notes repeat each other: near-duplicates were found
