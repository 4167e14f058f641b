"""Issue 23, item 5: the guards' critiques do not mislead. Dates are not Bond terms, and a
pointer that leads nowhere is told to the model once and never committed under a guessed
keyword. Whole dreams go through the real Anthropic SDK and the local fake Messages API."""

from __future__ import annotations

import json
from datetime import timedelta

from fake_anthropic import FakeAnthropic

from dreamer.dream import guards
from dreamer.dream.cycle import CARRIED, run, verify_pointers
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.memory.state import WorkingMemory, from_fields, parse

OLD_BOND = (
    "- Maya Okafor: physiotherapist, Lisbon; dentist on Friday 2026-06-12 at 9am.\n"
    "- Quarterly review in September, then June 30th planning."
)
NEW_BOND = "- Maya Okafor: physiotherapist, Lisbon; dentist moved to 2026-07-03."


def state(bond: str) -> WorkingMemory:
    bodies = {key: "" for key in ("phenotype", "niche", "active_context", "curiosity_gaps")}
    return WorkingMemory({**bodies, "bond": bond, "crystal_pointers": "", "emerging_skills": ""})


def test_dates_are_not_bond_terms():
    terms = {surface for _, surface in guards.bond_terms(OLD_BOND).values()}
    assert {"maya", "okafor", "physiotherapist", "lisbon", "dentist"} <= terms
    assert not terms & {"friday", "2026-06-12", "9am", "september", "june", "30th"}


def test_a_bond_whose_dates_moved_is_not_drift():
    report = guards.check(state(NEW_BOND), state(OLD_BOND))
    assert "bond_drift" not in report.failed, report.critiques


def test_a_drift_critique_names_no_date_as_lost():
    report = guards.check(state("- Prefers tea."), state(OLD_BOND))
    critique = next(
        c for c, g in zip(report.critiques, report.failed, strict=True) if g == "bond_drift"
    )
    lost = critique.split("lost: ", 1)[1].split(";", 1)[0].split(", ")
    assert "physiotherapist" in lost and "okafor" in lost
    assert not set(lost) & {"friday", "2026-06-12", "9am", "september", "june", "30th"}


NOTES = [
    "Booked the plumber appointment for Tuesday morning",
    "Maya wants the Acme report draft by Friday",
    "Fixed the flaky login test in the billing service",
]
ANSWER = {
    "phenotype": "- Careful, concise collaborator.",
    "bond": "- Maya: product lead at Acme.",
    "niche": "",
    "active_context": "- Acme report draft due Friday.\n- Plumber on Tuesday morning.",
    "crystal_pointers": [
        {"topic": "Dentist appointment", "keywords": "dentist molar"},
        {"topic": "Login test fix", "keywords": "flaky login test"},
    ],
    "curiosity_gaps": "",
    "emerging_skills": [],
}


def test_a_pointer_that_leads_nowhere_is_told_once_and_never_guessed(ws, now):
    for i, text in enumerate(NOTES):
        ws.note(text, importance=0.7, at=now - timedelta(hours=5 - i))
    fake = FakeAnthropic()
    fake.tool_use(TOOL_NAME, ANSWER)
    fake.tool_use(TOOL_NAME, ANSWER)  # the revision keeps it: not told again
    synth = ClaudeSynthesizer(ws.settings, client=fake.client())
    result = run(ws, now=now, force=True, synthesizer=synth)
    assert result.committed and result.revisions == 1
    fake.assert_all_used()
    revision = json.dumps(fake.last.json["messages"][1:])
    assert revision.count("leads nowhere") == 1 and "Dentist appointment" in revision
    # Recorded once, in the result and the journal.
    assert len(result.pointer_fixes) == 1 and "'Dentist appointment'" in result.pointer_fixes[0]
    assert (
        ws.store.journal.get_dream(result.dream_id)["inputs"]["pointer_fixes"]
        == result.pointer_fixes
    )
    # Committed without it, never as a pointer to "appointment" (the plumber's).
    pointers = parse(ws.memory_md.read_text()).pointers()
    assert [p.topic for p in pointers] == ["Login test fix"]
    assert "appointment" not in ws.memory_md.read_text().split("## Crystal Pointers", 1)[1]


def test_a_dead_pointer_the_old_state_had_is_left_out_and_says_so(ws, now):
    for i, text in enumerate(NOTES):
        ws.note(text, importance=0.7, at=now - timedelta(hours=5 - i))
    old = from_fields(ANSWER, base=state(""))
    kept, dead = verify_pointers(ws, old, now, old)
    assert [p.topic for p in kept.pointers()] == ["Login test fix"]
    assert dead == [
        "pointer 'Dentist appointment' leads nowhere: `dentist molar` finds no memory of its "
        "topic" + CARRIED
    ]
    # A pointer this dream wrote is not marked: the cycle tells the model about it.
    _, dead = verify_pointers(ws, old, now, state(""))
    assert not dead[0].endswith(CARRIED)
