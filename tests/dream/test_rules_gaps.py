"""Curiosity gaps: a question closes when a later note answers it, in its words or in others."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dreams import offline_dream

from dreamer.dream import insights
from dreamer.dream.rules.gaps import OPEN_MARKERS, answer_to, questions
from dreamer.memory.state import parse
from dreamer.store import NewCrystal

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


@pytest.mark.parametrize("marker", OPEN_MARKERS)
def test_a_question_left_open_in_a_session_is_a_gap_and_an_asked_one_is_not(ws, now, marker):
    for i, text in enumerate(["Ran the nightly load.", "Reviewed the models.", "Checked costs."]):
        ws.note(text, at=now - timedelta(hours=5 - i))
    for text in (
        f"{marker.capitalize()}: should the events table be partitioned by day or by customer?",
        "How do we rotate the JWT signing keys?",
    ):
        ws.index(NewCrystal(text, source="sessions", importance=0.6, at=now, speaker="user"))
    gaps = offline_dream(ws, now + timedelta(hours=1)).body("curiosity_gaps")
    assert "partitioned by day or by customer" in gaps
    assert "JWT" not in gaps  # asked of the agent, and answered there


@pytest.mark.parametrize(
    "text",
    [
        "Still undecided: monthly or annual billing for the pro plan.",
        "Not sure yet whether the venue takes card payments for the deposit.",
        "We haven't decided which runner image to pin for the release builds.",
        "It's still an open question whether the bakery opens on Sundays in winter.",
        "Olga is undecided between the two quotes for the roof repair.",
    ],
)
def test_a_question_left_open_without_a_question_mark_is_a_question(text):
    assert questions(text) == [text]


@pytest.mark.parametrize(
    "text",
    [
        "Not sure.",  # nothing is left open
        "Decided: the blue tiles for the kitchen floor.",
        "The undecided voters were the theme of the podcast.",
        "Ran the nightly export; it finished in four minutes.",
    ],
)
def test_a_statement_is_no_question(text):
    assert questions(text) == []


ASKED = "Which courier should carry the frozen lab samples to the city hospital on Fridays?"


@pytest.mark.parametrize(
    "answer",
    [
        "We went with Medilink for the Friday lab samples.",
        "Let's go with Medilink for the Friday lab samples.",
        "We opted for Medilink on the Friday lab samples.",
        "Picked Medilink for the Friday lab samples.",
        "We're sticking with Medilink for the Friday lab samples.",
        "We'll stick with Medilink for the Friday lab samples.",
    ],
)
def test_a_choice_made_answers_a_question(answer):
    later = [(answer, "2026-03-05T10:00:00Z")]
    assert answer_to(ASKED, "2026-03-04T10:00:00Z", later)[0] == answer
    plain = [("Medilink carried the Friday lab samples.", "2026-03-05T10:00:00Z")]
    assert answer_to(ASKED, "2026-03-04T10:00:00Z", plain) == ("", "")


def _said(ws, at, user, assistant):
    ws.index(NewCrystal(user, source="sessions", importance=0.6, at=at, speaker="user"))
    ws.index(NewCrystal(assistant, source="sessions", importance=0.5, at=at, speaker="assistant"))


NEWSLETTER = (
    "Still undecided: should the club newsletter go out weekly or every two weeks this winter"
)


def test_a_reply_to_another_question_does_not_close_an_open_one(ws, now):
    _said(ws, now, NEWSLETTER, "Noted, the newsletter rhythm is still open.")
    assert "newsletter" in offline_dream(ws, now + timedelta(hours=1)).body("curiosity_gaps")
    _said(
        ws,
        now + timedelta(days=1),
        "Is 'e-mail' hyphenated in the club newsletter style?",
        "No, the club newsletter style writes email without a hyphen.",
    )
    gaps = offline_dream(ws, now + timedelta(days=1, hours=1)).body("curiosity_gaps")
    assert "newsletter" in gaps
    _said(
        ws,
        now + timedelta(days=2),
        "We settled it: the club newsletter goes out fortnightly through the winter.",
        "Scheduled the club newsletter for every other Thursday until March.",
    )
    gaps = offline_dream(ws, now + timedelta(days=2, hours=1)).body("curiosity_gaps")
    assert "newsletter" not in gaps


def test_a_question_the_assistant_leaves_open_is_no_gap(ws, now):
    _said(
        ws,
        now,
        "Bump the date library in the booking service.",
        "Open question for later: should I also regenerate the lockfile of the booking app?",
    )
    gaps = offline_dream(ws, now + timedelta(hours=1)).body("curiosity_gaps")
    assert "lockfile" not in gaps


def test_a_rhetorical_question_in_a_session_is_no_gap(ws, now):
    _said(
        ws,
        now,
        "Who doesn't love a green build on a Friday? Merge the docs branch.",
        "Merged the docs branch; the build is green.",
    )
    gaps = offline_dream(ws, now + timedelta(hours=1)).body("curiosity_gaps")
    assert "green build" not in gaps
