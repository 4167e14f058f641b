"""Crystal Pointers: a topic carries the value in a whole phrase, and one topic is one pointer
whatever words its notes use."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from dreams import offline_dream

from dreamer.dream import insights
from dreamer.dream.rules.context import Context
from dreamer.dream.rules.pointers import MAX_POINTERS, _topic, write_pointers
from dreamer.dream.synth import DreamInputs
from dreamer.memory.state import Pointer, from_fields, parse_pointers, render_pointers


def test_a_topic_ends_on_the_newest_value_not_on_the_old_one():
    topic = _topic("- Deadline: The billing API deadline moved from March 20 to March 27 for QA.")
    assert "March 27" in topic and not topic.endswith("March 20")


def test_a_topic_carries_the_value_from_a_later_clause():
    topic = _topic(
        "- The trustees met on Monday about it; they agreed to bring the ask down to £32,000."
    )
    assert "£32,000" in topic


def test_a_short_parenthesis_is_not_taken_for_the_topic():
    topic = _topic("Changed Marta's Lisbon seats to aisle seats (12C and 12D) on KL1691.")
    assert topic.startswith("Changed Marta's Lisbon seats")


def test_a_lead_in_gives_way_to_what_it_introduces():
    topic = _topic(
        "- Task: Talked it through with my advisor (Helen Marsh): chrF++ will be the headline "
        "score, and COMET goes into the appendix with a caveat about Twi coverage."
    )
    assert topic.startswith("chrF++ will be the headline score"), topic
    # A lead-in that says as much as what follows still names the topic.
    topic = _topic("Kwame has gone off Weights & Biases after the free tier ran out: use MLflow.")
    assert topic.startswith("Kwame has gone off Weights & Biases"), topic


def test_a_statement_names_the_topic_before_a_question():
    topic = _topic("Nate, can you believe it? I'm finally filming my own movie from the script!")
    assert topic.startswith("I'm finally filming my own movie"), topic


@pytest.mark.slow
def test_one_task_over_four_days_in_different_words_is_one_pointer(ws, now):
    notes = [
        "Wrote the place cards for tables 1 to 3 in blue ink.",
        "Place cards for tables 4 to 6 are done.",
        "Finished place cards for tables 7 and 8.",
        "Last place cards written, for the top table.",
    ]
    for day, text in enumerate(notes):
        ws.note(text, importance=0.5, at=now + timedelta(days=day))
        offline_dream(ws, now + timedelta(days=day, hours=12))
    for day in range(4, 12):
        ws.note(
            f"The caterer confirmed menu item {day}.", importance=0.6, at=now + timedelta(days=day)
        )
        state = offline_dream(ws, now + timedelta(days=day, hours=12))
    cards = [p for p in state.pointers() if "place card" in f"{p.topic} {p.keywords}".lower()]
    assert len(cards) <= 1, [p.topic for p in cards]
    assert all(p.topic.count("related note") <= 1 for p in state.pointers())


THINGS = "paper toner stamps envelopes labels folders pens tape staples ink binders cards "
THINGS += "boxes markers clips pads trays"


def _capped(ws, now, *, very_old: bool):
    """Old pointers at the cap, the important one last (the oldest place), and a line of 0.4
    chatter leaving Active Context."""
    pointers = []
    for n, thing in enumerate(THINGS.split()[: 16 if very_old else 17]):
        ws.note(
            f"Checked the {thing} order for the office.",
            importance=0.5,
            at=now - timedelta(days=5, hours=n),
        )
        pointers.append(Pointer(f"Checked the {thing} order", f"checked {thing} order"))
    if very_old:
        ws.note("Renamed the photos of the old site.", importance=0.4, at=now - timedelta(days=120))
        pointers.append(Pointer("Renamed the photos of the old site", "renamed photos old site"))
    ws.note(
        "Never book a supplier without a written quote.",
        importance=0.9,
        at=now - timedelta(days=20),
    )
    pointers.append(
        Pointer("Never book a supplier without a written quote", "supplier written quote")
    )
    ws.note("Sorted the receipts drawer by month.", importance=0.4, at=now - timedelta(days=3))
    old = from_fields(
        {
            "active_context": "- Sorted the receipts drawer by month.",
            "crystal_pointers": render_pointers(pointers),
        }
    )
    found = insights.compute(ws.store, [], [], now, old)
    ctx = Context.of(DreamInputs(now, old, [], [], found, {}, "steady"), found)
    body = write_pointers(old, found.fading_topics, [], [], ctx, 10_000)
    return [p.topic for p in parse_pointers(body)]


def test_an_important_pointer_outlives_chatter_under_the_cap(ws, now):
    topics = _capped(ws, now, very_old=False)
    assert len(topics) == MAX_POINTERS
    assert "Never book a supplier without a written quote" in topics
    assert not any("receipts" in t for t in topics), topics  # the lightest: it does not enter


def test_a_very_old_unimportant_pointer_goes_first(ws, now):
    topics = _capped(ws, now, very_old=True)
    assert len(topics) == MAX_POINTERS
    assert "Never book a supplier without a written quote" in topics
    assert "Renamed the photos of the old site" not in topics
    assert any("receipts" in t for t in topics), topics


@pytest.mark.slow
def test_points_of_one_measured_series_are_one_pointer(ws, now):
    notes = [
        "Tile trial, first sample: 30cm tiles with 2mm grout look too busy in the hall.",
        "The 45cm porcelain looks calmer, the best of the samples so far.",
        "60cm tiles came out too big for the narrow hall floor.",
        "Last sample of the trial: 20cm tiles look busier still. We keep the 45cm porcelain.",
    ]
    for day, text in enumerate(notes):
        ws.note(text, importance=0.6, at=now + timedelta(days=day))
        offline_dream(ws, now + timedelta(days=day, hours=12))
    for day in range(4, 12):
        at = now + timedelta(days=day)
        ws.note(f"The plumber confirmed fitting {day}.", importance=0.6, at=at)
        state = offline_dream(ws, now + timedelta(days=day, hours=12))
    samples = [p for p in state.pointers() if re.search(r"\d+cm", f"{p.topic} {p.keywords}")]
    assert len(samples) <= 1, [p.topic for p in samples]
