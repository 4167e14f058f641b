"""The Bond's rules: standing rules and conventions stated once, people named with any role,
habits that are not dates; a decision, a request or an assistant's promise is no Bond line.
Each cue word of ``STANDING_CUES`` has its own case."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from dreams import offline_dream

from dreamer.agents import speakers
from dreamer.agents.claude_code import Exchange
from dreamer.dream import dates
from dreamer.dream.rules import bond
from dreamer.store import NewCrystal

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


def _said(ws, now, prompt: str, answer: str = "Understood.") -> None:
    """One captured exchange, stored the way the ingest stores it: each part with its speaker,
    kind and weight (dreamer.agents.speakers)."""
    exchange = Exchange(session_id="s1", uuid=prompt[:20], at=now, user=prompt, assistant=answer)
    for part in speakers.split(exchange, []):
        ws.index(
            NewCrystal(
                part.text,
                source="sessions",
                importance=part.importance,
                at=now,
                semantic_type=part.semantic_type,
                speaker=part.speaker,
            )
        )


def _bond_after(ws, now, *prompts: str) -> str:
    for i, prompt in enumerate(prompts):
        _said(ws, now + timedelta(minutes=i), prompt)
    _said(ws, now + timedelta(days=2), "Tidy the inbox.", "Archived 40 old threads.")
    return offline_dream(ws, now + timedelta(days=2, hours=1)).body("bond")


@pytest.mark.parametrize(
    "prompt, words",
    [
        ("How the shop's books work: every receipt goes in the blue folder, by month.", "blue"),
        ("For the clinic, each patient letter is signed by the duty doctor.", "duty doctor"),
        ("Naming in this repo: we name branches feat/<ticket>-<slug>.", "feat/<ticket>-<slug>"),
        ("Our lab keeps one notebook per experiment, numbered from the start date.", "notebook"),
    ],
)
def test_a_convention_the_user_stated_once_in_a_session_is_in_the_bond(ws, now, prompt, words):
    assert words in _bond_after(ws, now, prompt)


@pytest.mark.parametrize(
    "prompt, words",
    [
        # a decision or its reversal: news for Active Context, not a standing rule
        ("Scrap the gym plan. The bikes will live in the shed after all; less to carry.", "shed"),
        ("New logo. We call it the fox mark; the old one looked like a bank's.", "fox mark"),
        ("We went with the blue tiles: every room upstairs gets them.", "blue tiles"),
        # a request for once, and a question
        ("Check every invoice against the bank statement.", "invoice"),
        ("Is every invoice numbered the same way?", "invoice"),
    ],
)
def test_a_decision_a_request_or_a_question_of_the_user_is_not_in_the_bond(ws, now, prompt, words):
    assert words not in _bond_after(ws, now, prompt)


def test_the_users_own_facts_about_themselves_are_still_in_the_bond(ws, now):
    bond = _bond_after(ws, now, "I live in Ghent with my partner and our two cats.")
    assert "Ghent" in bond


@pytest.mark.parametrize(
    "prompt, words",
    [
        ("My working hours are 8 to 4 Oslo time.", "Oslo"),
        ("My timezone is Lisbon; book calls in WET.", "Lisbon"),
        ("My main laptop is a ThinkPad with 16 GB.", "ThinkPad"),
    ],
    ids=["hours", "timezone", "laptop"],
)
def test_a_fact_the_user_states_about_their_own_things_is_in_the_bond(ws, now, prompt, words):
    assert words in _bond_after(ws, now, prompt)


def test_my_followed_by_news_is_no_fact_about_the_user(ws, now):
    assert "conference" not in _bond_after(ws, now, "My talk at the conference went well today.")


def test_an_assistant_promise_or_claim_sets_no_convention(ws, now):
    _said(ws, now, "Tidy the invoices folder.", "I'll keep every invoice in the blue folder.")
    _said(ws, now, "Sort the scans.", "Every scan goes in /archive/<year> on the NAS.")
    bond = offline_dream(ws, now + timedelta(hours=1)).body("bond")
    assert "blue folder" not in bond and "archive" not in bond


def test_a_person_named_mid_sentence_by_the_user_is_their_own_line(ws, now):
    bond = _bond_after(
        ws, now, "Ask my editor at Kestrel Books, Dana Whitfield, about the cover by May 3."
    )
    assert "Dana Whitfield (Kestrel Books) is the user's editor." in bond
    assert "Kestrel Books is" not in bond and "cover" not in bond  # the person, not the errand


def test_a_long_convention_is_kept_in_whole_sentences_or_not_at_all(ws, now):
    rule = "Every invoice is numbered INV-YYYY-NNN and filed under the month it was paid."
    talk = " ".join(["The old scheme mixed years, months and clients in no order at all."] * 3)
    bond = _bond_after(ws, now, f"{talk} {rule}")
    assert "INV-YYYY-NNN" in bond
    assert "…" not in bond and "no order" not in bond


def test_the_users_own_i_and_my_are_never_the_agents_self(ws, now):
    _said(ws, now, "My landlord moved the inspection again, to the 14th.")
    _said(ws, now, "I live in Ghent with my partner and our two cats.")
    state = offline_dream(ws, now + timedelta(hours=1))
    assert "landlord" not in state.body("phenotype") and "Ghent" not in state.body("phenotype")


def test_someone_the_assistant_named_is_not_a_person_the_user_named(ws, now):
    _said(ws, now, "Send the rota over.", "Sent it to Marta Sousa, the practice manager.")
    bond = offline_dream(ws, now + timedelta(hours=1)).body("bond")
    assert "Marta Sousa" not in bond
