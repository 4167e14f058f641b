"""Curiosity gaps: a question closes when a later note answers it, in its words or in others."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dreams import offline_dream

from dreamer.dream import insights
from dreamer.memory.state import parse

QUESTION = (
    "Not sure yet: does the new lab courier, Medilink, collect blood samples on Fridays as "
    "well, or should reception stop booking Friday blood tests?"
)


def test_a_question_answered_in_other_words_closes(ws, now):
    ws.note(QUESTION, importance=0.7, at=now)
    assert "Medilink" in offline_dream(ws, now + timedelta(hours=1)).body("curiosity_gaps")
    ws.note(
        "Medilink rang back: their van does a pickup every weekday at 15:00, Fridays included.",
        importance=0.6,
        at=now + timedelta(days=2),
    )
    ws.note("Restocked the printer paper.", importance=0.2, at=now + timedelta(days=2, hours=1))
    state = offline_dream(ws, now + timedelta(days=2, hours=2))
    assert "Medilink" not in state.body("curiosity_gaps")


@pytest.mark.slow
def test_an_unrelated_later_note_does_not_close_a_question(ws, now):
    ws.note(QUESTION, importance=0.7, at=now)
    offline_dream(ws, now + timedelta(hours=1))
    ws.note("Booked the window cleaner for Friday morning.", at=now + timedelta(days=2))
    ws.note("Restocked the printer paper.", importance=0.2, at=now + timedelta(days=2, hours=1))
    state = offline_dream(ws, now + timedelta(days=2, hours=2))
    assert "Medilink" in state.body("curiosity_gaps")


TWO = "Does the marquee need its own generator? Who pays the caterer's deposit of £600?"
TWO_STATE = f"# Working Memory State\n\n## Curiosity Gaps\n- {TWO}\n"


def test_two_questions_in_one_gap_bullet_are_answered_one_by_one(ws, now):
    ws.memory_md.write_text(TWO_STATE, encoding="utf-8")
    ws.note(
        "Agreed with Ines: her parents pay the caterer's deposit of £600 this week.",
        importance=0.6,
        at=now,
    )
    found = insights.compute(ws.store, [], ws.store.crystals.select(), now, parse(TWO_STATE))
    assert [a["question"] for a in found.answered_questions] == [
        "Who pays the caterer's deposit of £600?"
    ]
    gaps = offline_dream(ws, now + timedelta(hours=1)).body("curiosity_gaps")
    assert "generator?" in gaps and "deposit" not in gaps, gaps


def test_a_gap_from_a_search_with_only_a_weak_hit_does_not_say_it_found_nothing(ws, now):
    for text in (
        "Ada's flight to Lisbon leaves on Friday morning",
        "The quarterly report is due on April 3",
        "Mia plays the saxophone on weekends",
        "Deploys happen on Tuesdays after the standup",
        "The staging build of the report generator works",
    ):
        ws.note(text, at=now)
    hits = ws.search("holiday travel plans", now=now)
    assert hits  # it found something, only nothing close: a gap all the same
    gaps = offline_dream(ws, now + timedelta(hours=1)).body("curiosity_gaps")
    assert "holiday travel plans" in gaps
    assert "found nothing" not in gaps
    assert "(a search found no close match)" in gaps
