"""Emerging skills: named by the repeated action and its whole object, counted from every note."""

from __future__ import annotations

from datetime import timedelta

from dreamer.dream import insights


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
