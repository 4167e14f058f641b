"""Changed amounts and choices: a newer statement that moves a budget or drops a choice is sent
as a contradiction of the older one; a different amount of another thing is not."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer.dream import insights
from dreamer.dream.rules.values import find_changed_words
from dreamer.memory.state import from_fields
from dreamer.retrieval.embed import embedder_for


def _item(text, at):
    return {"id": None, "text": text, "at": at, "source": "note"}


def test_a_budget_raised_in_other_words_is_a_changed_value():
    older = _item("Kitchen budget agreed at £38,000 with Hannah.", "2026-03-01T10:00:00Z")
    newer = _item("Hannah can now spend up to £45k on the kitchen.", "2026-03-09T10:00:00Z")
    [pair] = find_changed_words([newer, older])
    assert pair["older"] is older and pair["newer"] is newer
    assert pair["kind"] == "value"


@pytest.mark.slow
def test_a_budget_raised_in_words_it_shares_with_no_note_is_paired_by_meaning():
    # No content word in common: only the embedder says "spend" and "budget" are one subject.
    older = _item("Renovation budget agreed at £38,000.", "2026-03-01T10:00:00Z")
    newer = _item("We can now spend up to £45k.", "2026-03-09T10:00:00Z")
    assert find_changed_words([older, newer]) == []  # words alone cannot tell
    [pair] = find_changed_words([older, newer], embedder_for("auto"))
    assert pair["older"] is older and pair["newer"] is newer


def test_instead_of_names_the_choice_it_drops():
    older = _item("Flooring: oak boards for the hall.", "2026-03-01T10:00:00Z")
    newer = _item("We will lay limestone instead of oak.", "2026-03-09T10:00:00Z")
    [pair] = find_changed_words([older, newer])
    assert pair["older"] is older


def test_amounts_of_other_things_and_unchanged_amounts_are_no_change():
    items = [
        _item("Paid £200 for the tiles.", "2026-03-01T10:00:00Z"),
        _item("The new fridge costs £900 now.", "2026-03-09T10:00:00Z"),
        _item("Kitchen budget is £38,000.", "2026-03-01T11:00:00Z"),
        _item("The kitchen budget is now confirmed: £38,000.", "2026-03-09T11:00:00Z"),
    ]
    assert find_changed_words(items) == []


@pytest.mark.slow
def test_the_dream_request_carries_both_changes_as_contradictions(ws, now):
    old = from_fields(
        {"active_context": "- Budget: kitchen £38,000\n- Worktop: oiled oak, from the timber yard"}
    )
    ws.note("Hannah can now spend up to £45k on the kitchen.", at=now)
    ws.note("Hannah changed her mind: quartz composite instead of oak.", at=now)
    found = insights.compute(
        ws.store, [], ws.store.crystals.select(), now + timedelta(hours=1), old, ws.embedder
    )
    pairs = {(p["older"]["text"], p["newer"]["text"]) for p in found.contradictions}
    assert ("Budget: kitchen £38,000", "Hannah can now spend up to £45k on the kitchen.") in pairs
    assert (
        "Worktop: oiled oak, from the timber yard",
        "Hannah changed her mind: quartz composite instead of oak.",
    ) in pairs


def test_a_person_instead_of_another_and_a_question_answered_are_no_change():
    items = [
        _item("Aoife runs the diabetes clinic with the practice nurse.", "2026-03-01T10:00:00Z"),
        _item("Should we buy a deck oven or rent one?", "2026-03-02T10:00:00Z"),
        _item(
            "The practice nurse runs the diabetes clinic from now on instead of Aoife.",
            "2026-03-09T10:00:00Z",
        ),
        _item("Decided: we rent a deck oven instead of buying one.", "2026-03-09T11:00:00Z"),
    ]
    assert find_changed_words(items) == []
