"""Forget requests said in other words: recognised by a cue (one case per entry of CUES and of
REFERENCES), their target found by meaning, one clear target or none."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer import run_dream
from dreamer.dream import forget_requests
from dreamer.dream.forget_requests import parse

CUE_CASES = {
    "a removal verb on what was said": "Actually, scrap what I told you about my lipid results.",
    "let it go": "Nadia's personal situation was mentioned earlier; let that go, please.",
    "not kept": "Ines would rather none of that was kept; it is Clara's news to tell.",
    "no trace": "Sam wants no trace of the pay figure he mentioned.",
}
REFERENCE_CASES = {
    "told": "Please drop what I told you about the loan.",
    "said": "Please drop what I said about the loan.",
    "mentioned": "Drop what I mentioned on the loan.",
    "wrote": "Scrap what I wrote on the loan.",
    "written": "The loan figure should never have been written down.",
    "noted": "Scrap what you noted on the loan.",
    "shared": "Drop what I shared on the loan.",
    "bit about": "Remove the bit about the loan.",
    "on record": "The loan should not be on record.",
    "trace": "No trace of the loan, please.",
    "with us": "The loan shouldn't stay with us.",
    "anywhere": "I'd rather the loan wasn't kept anywhere.",
    "in memory": "The loan should not stay in memory.",
    "in here": "I don't want the loan kept in here.",
    "none of that": "None of that loan business should be kept.",
    "notes": "The loan thing shouldn't stay in my notes.",
    "memory": "I'd rather the loan didn't stick around in your memory.",
}
# Said in other words as people say them in a session (each phrasing a case of its own cue).
SAID = [
    "Marco would rather none of that personal stuff about him stayed in my notes.",
    "Please let what I said about my sister's health go.",
    "About Ravi: he'd prefer that the health thing didn't linger in my notes.",
]


def test_every_cue_and_reference_has_a_case():
    assert set(CUE_CASES) == set(forget_requests.CUES)
    assert set(REFERENCE_CASES) == set(forget_requests.REFERENCES)


@pytest.mark.parametrize("cue", sorted(CUE_CASES))
def test_each_cue_makes_an_indirect_request(cue):
    request = parse(CUE_CASES[cue])
    assert request is not None and not request.direct and request.words


@pytest.mark.parametrize("text", SAID)
def test_requests_said_in_a_session_in_other_words(text):
    request = parse(text)
    assert request is not None and not request.direct and request.words


@pytest.mark.parametrize("reference", sorted(REFERENCE_CASES))
def test_each_reference_makes_an_indirect_request(reference):
    request = parse(REFERENCE_CASES[reference])
    assert request is not None and "loan" in request.words


@pytest.mark.parametrize(
    "text",
    [
        "We don't keep bread overnight.",  # a cue, but nothing said is referred to
        "The sourdough starter was kept in the fridge.",
        "Told the caterer the menu is final.",  # a reference, but no cue
        "Don't forget to call Mia at 5",
    ],
)
def test_ordinary_notes_are_not_requests(text):
    assert parse(text) is None


def _notes(ws, now, texts):
    for i, text in enumerate(texts):
        ws.note(text, importance=0.6, at=now - timedelta(hours=10 - i))


def test_a_request_in_other_words_forgets_its_one_clear_target(ws, now):
    private = "Aoife's own blood test came back: total cholesterol 6.4 mmol/L."
    _notes(
        ws,
        now,
        [
            private,
            "Declan Foley, the practice manager, sorted out the summer rota.",
            "The locum starts on Monday June 1, three days a week.",
        ],
    )
    ws.note(
        'Aoife: "Actually, scrap what I told you about my lipid results."',
        at=now - timedelta(hours=1),
    )
    result = run_dream(ws, now=now, force=True)
    memory = ws.memory_md.read_text(encoding="utf-8")
    [resolution] = ws.store.journal.get_dream(result.dream_id)["inputs"]["forget_requests"]
    assert resolution["outcome"] == "forgotten" and len(resolution["forgotten"]) == 1
    assert "6.4" not in memory and "lipid" not in memory
    assert all("6.4" not in hit.text for hit in ws.search("Aoife cholesterol blood test"))
    assert "locum" in memory  # nothing else went


def test_an_unclear_request_in_other_words_forgets_nothing_and_needs_confirmation(ws, now):
    _notes(
        ws,
        now,
        [
            "The loan from the credit union is 12,000 euros over five years.",
            "The loan from Joel's parents is 5,000 euros, no interest.",
            "The kitchen tiles arrive on Thursday.",
        ],
    )
    ws.note("I'd rather that wasn't kept anywhere.", at=now - timedelta(hours=1))
    result = run_dream(ws, now=now, force=True)
    [resolution] = ws.store.journal.get_dream(result.dream_id)["inputs"]["forget_requests"]
    assert resolution["outcome"] == "needs confirmation"
    assert ws.store.forgetting.tombstone_count() == 0
    assert "wasn't kept anywhere" not in ws.memory_md.read_text(encoding="utf-8")


def test_two_near_targets_are_unclear_by_meaning(ws, now):
    _notes(
        ws,
        now,
        [
            "Sam's new salary is 78,000 euros gross a year.",
            "Priti's new salary is 64,000 euros gross a year.",
        ],
    )
    ws.note("Please drop what I said about the salary.", at=now - timedelta(hours=1))
    result = run_dream(ws, now=now, force=True)
    [resolution] = ws.store.journal.get_dream(result.dream_id)["inputs"]["forget_requests"]
    assert resolution["outcome"] == "needs confirmation"
    assert ws.store.forgetting.tombstone_count() == 0
