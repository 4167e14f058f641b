"""The Bond's rules: standing rules stated once, people named with any role, habits that are
not dates. Each cue word of ``STANDING_CUES`` has its own case."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from dreams import offline_dream

from dreamer.dream import dates
from dreamer.dream.rules import bond

RULES = {
    "never": "Ines's rule: the band is never booked before the venue confirms the date.",
    "always": "Quotes are always sent to Joel before anything is ordered.",
    "nothing": "Nothing gets booked or paid until the supplier sends a written quote.",
    "no": "No phone calls to Sam before 10:00; a text first, then a call if it is urgent.",
    "any": "Any budget line above 5,000 pounds is sent with two quotes attached.",
    "every": "Every invoice is paid from the joint account, not the business one.",
    "whenever": "Whenever a trade is booked, the deposit stays under 30% of the job.",
    "rule": "Board rule: grant drafts are sent to two trustees before submission.",
}


def test_every_cue_has_a_case():
    assert set(RULES) == set(bond.STANDING_CUES)


@pytest.mark.parametrize("cue", sorted(RULES))
def test_a_standing_rule_stated_once_is_in_the_bond_and_stays(ws, now, cue):
    ws.note(RULES[cue], importance=0.8, type="directive", at=now)
    first = offline_dream(ws, now + timedelta(hours=1))
    assert RULES[cue].split()[2] in first.body("bond")
    # Ten quiet days later (no note repeats it) it has not faded.
    ws.note("Sorted the inbox by supplier.", importance=0.2, at=now + timedelta(days=10))
    later = offline_dream(ws, now + timedelta(days=10, hours=1))
    assert RULES[cue].split()[2] in later.body("bond")


def test_a_one_off_instruction_naming_an_errand_is_not_a_standing_rule(ws, now):
    ws.note("Booked the florist for the chapel.", importance=0.7, type="directive", at=now)
    state = offline_dream(ws, now + timedelta(hours=1))
    assert "florist" not in state.body("bond")


@pytest.mark.parametrize(
    "sentence, name",
    [
        ("Declan Foley, the practice manager, sorted out the summer rota.", "Declan Foley"),
        ("Pieter de Wit is the huismeester of the new building.", "Pieter de Wit"),
        ("Prof. Helen Marsh is Kwame's advisor; they meet on Tuesdays.", "Helen Marsh"),
        ("Marek Nowak of Nowak Build is the main contractor for the extension.", "Marek Nowak"),
        ("Oluwaseun Adeyemi, Byte Club's safeguarding lead, signs off every plan.", "Adeyemi"),
    ],
)
def test_someone_named_once_with_any_role_is_in_the_bond(ws, now, sentence, name):
    ws.note(sentence, importance=0.6, at=now)
    ws.note("Replied to the newsletter.", importance=0.2, at=now + timedelta(days=3))
    state = offline_dream(ws, now + timedelta(days=3, hours=1))
    assert name in state.body("bond")


@pytest.mark.parametrize(
    "text", ["nothing after 17:30 on a Tuesday", "any Friday works", "every Monday at 9"]
)
def test_a_habit_is_not_a_date(text):
    assert dates.mentioned(text, datetime(2026, 5, 6)) == []


def test_a_weekday_is_still_a_date():
    assert dates.mentioned("the fitting is on Tuesday", datetime(2026, 5, 6)) == [
        datetime(2026, 5, 12).date()
    ]
