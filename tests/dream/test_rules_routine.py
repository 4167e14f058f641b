"""Routine notes stay searchable crystals and take no Active Context line nor pointer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dreams import offline_dream

from dreamer.dream.rules.routine_notes import is_routine
from dreamer.memory.state import parse


@pytest.mark.parametrize(
    "text, importance, routine",
    [
        ("Emptied the downloads folder.", 0.2, True),  # below 0.4: chatter whatever it says
        ("Dentist for Daan on April 3.", 0.3, True),
        ("Place cards for tables 4 to 6 are done.", 0.5, True),  # plain: no date, no name
        ("Dentist check-up for Daan on April 3.", 0.5, False),  # a name and a date
        ("The rehearsal is on June 22.", 0.5, False),  # a date
        ("Sent the letter to Harehills Academy.", 0.5, False),  # a name
        ("Place cards for tables 4 to 6 are done.", 0.6, False),  # rated above 0.5
    ],
)
def test_what_is_routine(text, importance, routine):
    assert is_routine(text, importance) is routine


@pytest.mark.slow
def test_a_plain_step_of_work_is_searchable_but_not_in_the_state(ws, now):
    ws.note("Place cards for tables 4 to 6 are done.", importance=0.5, at=now)
    ws.note("The rehearsal is on June 22 in room 4.31.", importance=0.5, at=now)
    offline_dream(ws, now + timedelta(hours=1))
    memory = ws.memory_md.read_text(encoding="utf-8")
    state = parse(memory)
    assert "Place cards" not in memory
    assert "June 22" in state.body("active_context")
    assert any("Place cards" in hit.text for hit in ws.search("place cards tables"))
