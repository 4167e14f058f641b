"""Emerging skills: named by the repeated action and its whole object, counted from every note."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer.dream import insights
from dreamer.dream.rules import skills
from dreamer.memory import lifecycle


def test_a_skill_is_named_by_its_action_and_whole_object(ws, now):
    for name in ("orders", "customers", "invoices", "payments", "refunds", "ledger", "users"):
        ws.note(
            f"Wrote the dbt staging model for {name} with tests.",
            importance=0.6,
            at=now - timedelta(days=1),
        )
    skills = insights.compute(ws.store, [], [], now, None).emerging_skills
    assert skills[0]["skill"] == "Writing dbt staging model"
    assert skills[0]["occurrences"] == 7


def test_different_objects_of_one_verb_are_named_in_the_plural(ws, now):
    for name in ("invoice", "payments", "ledger"):
        ws.note(f"Refactored the {name} module.", importance=0.6, at=now - timedelta(days=1))
    skills = insights.compute(ws.store, [], [], now, None).emerging_skills
    assert skills[0]["skill"] == "Refactoring modules"


def test_a_skill_seen_seven_times_counts_seven_after_its_notes_fade(ws, now):
    # Three identical notes are one crystal with two sightings; four more differ in wording.
    for day in range(3):
        ws.note("Deployed the staging cluster.", importance=0.6, at=now + timedelta(days=day))
    for day, detail in enumerate(("after the migration", "for the demo", "twice", "again")):
        ws.note(
            f"Deployed the staging cluster {detail}.",
            importance=0.6,
            at=now + timedelta(days=3 + day),
        )
    later = now + timedelta(days=40)
    report = lifecycle.run(ws, later)
    assert report.faded  # the notes really lost importance: below the routine line now
    assert all(c.importance < skills.ROUTINE_BELOW for c in ws.store.crystals.select())
    found = insights.compute(ws.store, [], [], later, None).emerging_skills
    assert found[0]["skill"] == "Deploying staging cluster"
    assert found[0]["occurrences"] == 7


@pytest.mark.slow
def test_a_chore_written_as_routine_stays_no_skill_after_fading(ws, now):
    for day in range(4):
        ws.note(f"Emptied the kitchen bin {day}.", importance=0.2, at=now + timedelta(days=day))
    later = now + timedelta(days=40)
    lifecycle.run(ws, later)
    assert insights.compute(ws.store, [], [], later, None).emerging_skills == []


def test_searching_for_a_skill_raises_its_confidence_and_other_searches_do_not(ws, now):
    for name in ("orders", "customers"):
        ws.note(f"Wrote the dbt staging model for {name}.", importance=0.6, at=now)

    def confidence() -> int:
        found = insights.compute(ws.store, [], [], now + timedelta(hours=1), None)
        return found.emerging_skills[0]["confidence"]

    def searched(query: str) -> None:  # logged as found nothing: no access counts change
        ws.store.search.record_search(now, query, "both", [], None, gap=False)

    alone = confidence()
    searched("weekend hiking routes")
    searched("lasagne for six")
    assert confidence() == alone
    for query in ("how do I build a staging model", "staging tests", "the Staging runbook"):
        searched(query)
    assert confidence() == alone + 15  # 5 a search naming it
