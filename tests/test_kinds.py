"""A note's semantic type, guessed from its words when the writer gave none."""

from __future__ import annotations

import pytest

from dreamer.kinds import SEMANTIC_TYPES, infer_type


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
