"""A note's semantic type, guessed from its words when the writer gave none."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamer.store import kinds
from dreamer.store.kinds import SEMANTIC_TYPES, infer_type


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Remember to always run the linter", "directive"),
        ("User DISLIKES tabs because they render unevenly", "directive"),  # the first rule wins
        ("Deploys fail on Fridays because the cache is cold", "mental_model"),
        ("The billing service runs on Postgres 16", "world_fact"),
        ("The billing service is down today", "experience"),  # a fact of today is an event
        ("Met Ada at the conference", "experience"),
        ("", "experience"),
    ],
)
def test_a_note_s_type_is_guessed_from_its_words(text, kind):
    assert infer_type(text) == kind
    assert kind in SEMANTIC_TYPES


def _guessed_by_the_patterns_alone(text: str) -> str:
    for kind, pattern, _ in kinds._PATTERNS:
        if re.search(pattern, text, re.I) and not (
            kind == "world_fact" and re.search(kinds._NOW, text, re.I)
        ):
            return kind
    return "experience"


# Every alternative of the patterns, pieces of them, their neighbours in other words, and what
# sits around a word; the last few are letters that match an ASCII one when case is ignored.
_PIECES = [
    "always", "Never", "prefer", "prefers", "don't", "dont", "do not", "please", "MUST",
    "should", "want", "wants", "like", "dislikes", "hates", "call me", "remember to", "because",
    "means that", "so that", "pattern", "tends to", "usually", "whenever", "is", "are", "was",
    "lives", "works at", "work for", "born", "located", "costs", "runs on", "today", "just",
    "now", "don", "wor", "ru", "n", "s", "ing", "th", "Th", "a", " ", " ", "'", ".", "-", "_",
    "7", "\n", "é", "ſ", "K", "İ", "ſhould", "İs", "alwayſ",
]  # fmt: skip


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=10))
def test_a_pattern_skipped_for_want_of_its_stems_could_not_have_matched(parts):
    # A pattern is compiled and run only when its stems are in an ASCII text; the guess must be
    # the one the patterns alone give, whatever the text.
    text = "".join(parts)
    assert infer_type(text) == _guessed_by_the_patterns_alone(text)
