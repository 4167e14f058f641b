"""A newer statement that names the old value beside the new one states the old one as past."""

from __future__ import annotations

from datetime import timedelta

from dreams import offline_dream

from dreamer.dream.rules.supersession import restated
from dreamer.memory.state import parse

OLDER = "Sara wants every invoice drafted in Google Docs."
NEWER = (
    "Sara has given up on Google Docs after the sharing mess: from now on draft every invoice "
    "in Notion instead."
)


def test_the_clause_restating_the_old_value_is_marked_past():
    line = restated(NEWER, OLDER)
    assert line.startswith("From now on draft every invoice in Notion instead"), line
    assert "(previously: Sara has given up on Google Docs after the sharing mess)" in line


def test_a_newer_statement_with_only_the_new_value_or_a_date_is_left_as_it_is():
    assert restated("From now on draft every invoice in Notion.", OLDER) == (
        "From now on draft every invoice in Notion."
    )
    # The clause with a date is a value of its own, not the old one restated.
    dated = "Sara drafts every invoice in Google Docs on May 4: the Notion trial starts now."
    assert restated(dated, OLDER) == dated


def test_the_bond_states_the_new_tool_and_the_old_one_only_as_past(ws, now):
    ws.note(OLDER, importance=0.7, type="directive", at=now)
    offline_dream(ws, now + timedelta(hours=1))
    ws.note(NEWER, importance=0.8, type="directive", at=now + timedelta(days=3))
    offline_dream(ws, now + timedelta(days=3, hours=1))
    bond = parse(ws.memory_md.read_text(encoding="utf-8")).body("bond")
    assert "Notion" in bond
    for line in bond.split("\n"):
        assert "Google Docs" not in line or "previously" in line, bond
