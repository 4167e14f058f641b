"""Issue 35, item 3: each insight names the crystals that say it and who said the first."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer.dream import insights
from dreamer.memory import state as wm

QUESTION = "Need to find out which Postgres version prod runs"
ANSWER = "Decided: prod runs Postgres 16, found which version in the deploy notes."


def test_a_gap_and_an_upcoming_date_name_their_crystal(ws, now):
    ws.note("What timezone is the Acme client in?", at=now - timedelta(hours=5))
    ws.note("The Acme review is on 2026-03-20.", at=now - timedelta(hours=4))
    crystals = ws.store.crystals.select()
    found = insights.compute(ws.store, [], crystals, now, None)
    by_text = {c.text: c.id for c in crystals}
    gap = found.curiosity_gaps[0]
    assert gap["crystal_ids"] == [by_text["What timezone is the Acme client in?"]]
    assert gap["said_by"] == "agent"  # ws.note is an agent writing a note
    upcoming = next(u for u in found.upcoming if u["date"] == "2026-03-20")
    assert upcoming["crystal_ids"] == [by_text["The Acme review is on 2026-03-20."]]


def test_an_answered_question_names_the_question_and_the_answer(ws, now):
    ws.note(QUESTION, at=now - timedelta(hours=6))
    ws.note(ANSWER, at=now - timedelta(hours=2))
    crystals = ws.store.crystals.select()
    found = insights.compute(ws.store, [], crystals, now, None)
    assert found.answered_questions, found.curiosity_gaps
    ids = {c.text: c.id for c in crystals}
    assert found.answered_questions[0]["crystal_ids"] == [ids[QUESTION], ids[ANSWER]]


@pytest.mark.slow
def test_a_fading_line_names_its_last_note(ws, now):
    ws.note("Kitchen renovation quotes from three contractors", at=now - timedelta(days=10))
    old = wm.parse(
        "# Working Memory State\n\n## Active Context\n- Kitchen renovation quotes pending\n"
    )
    found = insights.compute(ws.store, [], [], now, old).fading_topics
    kitchen = ws.store.crystals.select()[0]
    assert found[0]["crystal_ids"] == [kitchen.id]


def test_a_line_whose_note_was_written_again_yesterday_does_not_fade(ws, now):
    text = "Format the changed files before the review"
    ws.note(text, at=now - timedelta(days=10))
    ws.note(text, at=now - timedelta(days=1))  # the same words again: a sighting, no new crystal
    assert len(ws.store.crystals.select()) == 1
    old = wm.parse(f"# Working Memory State\n\n## Active Context\n- {text}\n")
    assert insights.compute(ws.store, [], [], now, old).fading_topics == []
