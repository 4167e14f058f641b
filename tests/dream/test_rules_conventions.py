"""Conventions: how things are always done, told apart from a request, a report and a decision.
Each cue word of ``EVERY``, ``HOW``, ``HABITS`` and ``CHANGE`` has its own case, in words no
scenario of the quality bench uses."""

from __future__ import annotations

import pytest

from dreamer.dream.rules import conventions

EVERY = {
    "every": "Filing: every receipt goes in the blue folder, by month.",
    "each": "For the clinic, each patient letter is signed by the duty doctor.",
    "all": "All invoices are numbered INV-YYYY-NNN.",
    "any": "Any migration must have a down step.",
}

HOW = {
    "is": "Each patient letter is signed by the duty doctor.",
    "are": "All the rotas are shared in the team calendar.",
    "has": "Every recipe card has the allergens in red.",
    "have": "All the hire bikes have a lock number on the frame.",
    "must": "Any migration must have a down step.",
    "should": "Every pull request should link its ticket.",
    "go": "All receipts go in the shoebox under the desk; goes for the van too.",
    "get": "Every new volunteer gets a buddy for the first month.",
    "stay": "All drafts stay in the shared drive until they are final.",
    "live": "All the test fixtures live under tests/data.",
    "belong": "Every spare key belongs on the hook by the door.",
    "need": "Each grant report needs two signatures.",
    "end": "All our branch names end in the ticket number.",
    "start": "Each meeting note starts with the date in ISO form.",
}

HABITS = {
    "use": "We use British spelling in the newsletter.",
    "keep": "We keep the spare keys with the neighbour at number 12.",
    "name": "We name branches feat/<ticket>-<slug>.",
    "store": "We store the scans on the NAS under /archive/<year>.",
    "put": "I put the paid bills in the green tray.",
    "file": "We file expense claims under the month they were paid.",
    "label": "We label the freezer boxes with the date and what is inside.",
    "tag": "We tag releases as vYYYY.MM.DD.",
    "write": "We write the minutes in the shared doc, one heading per meeting.",
    "follow": "We follow the council's style guide for letters to tenants.",
}

# The same shapes, said as a change at one time: a decision, not how things are.
CHANGE = {
    "now": "We use the community hall for rehearsals now.",
    "instead": "We keep the minutes in the wiki instead.",
    "after all": "All the tiles go in the hallway after all; the kitchen gets lino.",
    "anymore": "All the invoices are not printed anymore.",
    "no longer": "Every order is no longer confirmed by phone.",
    "switched": "We switched: every recipe is in metric units.",
    "settled": "Settled it: all the reports are in PDF.",
    "decided": "We decided that every reviewer gets a checklist.",
    "go with": "Let's go with this: each service has its own repository.",
    "went with": "We went with it: every service has its own repository.",
    "again": "Every build is red again.",
}


def test_every_cue_has_a_case():
    assert set(EVERY) == set(conventions.EVERY)
    assert set(HOW) == set(conventions.HOW)
    assert set(HABITS) == set(conventions.HABITS)
    assert set(CHANGE) == set(conventions.CHANGE)


@pytest.mark.parametrize("text", [*EVERY.values(), *HOW.values(), *HABITS.values()])
def test_how_things_are_always_done_is_a_convention(text):
    assert conventions.stated(text)


@pytest.mark.parametrize("cue", sorted(CHANGE))
def test_a_decision_is_not_a_convention(cue):
    assert conventions.stated(CHANGE[cue]) is None
    assert conventions.changes(CHANGE[cue])


def test_someones_wish_over_a_whole_class_is_a_convention():
    assert conventions.stated("The auditor wants all receipts scanned before filing.")
    assert conventions.stated("Our landlord expects every repair reported in writing.")


@pytest.mark.parametrize(
    "text",
    [
        "Check every invoice against the bank statement.",  # a request: it begins with its verb
        "Add a test per endpoint.",
        "Label every freezer box from the weekend batch.",
        "All 12 builds are green.",  # a report, counted
        "Each of the three sensors is offline.",
        "Is every invoice numbered?",  # a question
        "Does each room have a key?",
        "We talked about the rota.",  # no habit
        "The van needs a service.",  # one thing, not a class
        "every receipt goes in the",  # a fragment: no way of doing things
    ],
)
def test_a_request_a_report_a_question_or_a_fragment_is_no_convention(text):
    assert conventions.stated(text) is None


def test_only_the_sentences_that_state_it_are_kept():
    text = "Quick one about the archive. We store the scans on the NAS under /archive/<year>."
    assert conventions.stated(text) == "We store the scans on the NAS under /archive/<year>."
