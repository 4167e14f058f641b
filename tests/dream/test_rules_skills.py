"""Emerging skills: named by the repeated action and its object (or its kind of object),
counted once an action from notes and captured exchanges."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer.dream import insights
from dreamer.dream.rules import skills, verbs
from dreamer.dream.rules.insight_results import Insights
from dreamer.memory import lifecycle, repeats
from dreamer.memory.state import parse as parse_state
from dreamer.store import NewCrystal


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
    for name in ("orders", "customers", "invoices"):  # three: twice is no habit yet
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


def _exchange(ws, at, asked: str, answered: str | None = None, asker: str = "user") -> None:
    """One captured exchange, as the ingest stores it: the request and the answer share its
    time, and a text said before is a sighting of its crystal."""
    for text, speaker in ((asked, asker), (answered, "assistant")):
        if text is not None:
            before = {c.id for c in ws.store.crystals.select()}
            crystal = NewCrystal(text, source="sessions", importance=0.5, at=at, speaker=speaker)
            crystal_id = ws.index(crystal, embed=False)
            if crystal_id in before:
                repeats.record(ws.store, crystal_id, at)


def _found(ws, when) -> list[tuple[str, int]]:
    return [(s["skill"], s["occurrences"]) for s in skills.find_skills(ws.store, when)]


def test_requests_on_things_of_one_kind_are_one_skill_counted_once_an_exchange(ws, now):
    for day, table in enumerate(("users", "orders", "invoices")):
        _exchange(
            ws,
            now + timedelta(days=day),
            f"Migrate the {table} table to the new schema.",
            f"Migrated {table}: 3 columns renamed.",
        )
    assert _found(ws, now + timedelta(days=4)) == [("Migrating tables", 3)]


def test_numbered_things_make_a_plural_skill(ws, now):
    for day, number in enumerate((12, 31, 40, 47)):
        _exchange(ws, now + timedelta(days=day), f"Review PR #{number}.", f"Reviewed PR #{number}.")
    for day, chapter in enumerate((2, 5, 7)):
        at = now + timedelta(days=day, hours=3)
        _exchange(ws, at, f"Translate chapter {chapter} into German.")
        ws.note(f"Translated chapter {chapter} into German.", importance=0.6, at=at)
    assert _found(ws, now + timedelta(days=5)) == [
        ("Reviewing PRs", 4),
        ("Translating chapters", 3),
    ]


def test_differently_named_things_with_a_value_are_named_in_a_list(ws, now):
    for day, (name, version) in enumerate(
        (
            ("django", "5.0"),
            ("celery", "5.4"),
            ("redis-py", "5.1"),
            ("boto3", "1.34"),
            ("pydantic", "2.7"),
        )
    ):
        _exchange(
            ws, now + timedelta(days=day), f"Upgrade {name} to {version}.", f"Upgraded {name}."
        )
    found = skills.find_skills(ws.store, now + timedelta(days=6))
    assert [(s["skill"], s["occurrences"]) for s in found] == [
        ("Upgrading django, celery, redis-py and others", 5)
    ]
    asked = {c.id for c in ws.store.crystals.select() if c.speaker == "user"}
    assert set(found[0]["crystal_ids"]) == asked  # each request, as its evidence


def test_unrelated_objects_of_one_verb_are_no_skill(ws, now):
    for day, text in enumerate(
        ("Add a retry to the webhook client.", "Add that index.", "Add Lena as a reviewer.")
    ):
        _exchange(ws, now + timedelta(days=day), text, "Added it.")
    assert _found(ws, now + timedelta(days=4)) == []


def test_promises_questions_and_tool_output_are_no_actions(ws, now):
    for day, name in enumerate(("numpy", "scipy", "pandas", "polars")):
        at = now + timedelta(days=day)
        _exchange(ws, at, f"Should we bump {name} to 2.0?", f"I'll bump {name} to 2.0 tomorrow.")
        crystal = NewCrystal(
            f"Bumped {name} to 2.0 in requirements.lock", "sessions", 0.5, at, speaker="tool"
        )
        ws.index(crystal, embed=False)
    assert _found(ws, now + timedelta(days=5)) == []


def test_one_action_twice_on_one_day_counts_once(ws, now):
    # The same request in two sessions of a day, the note of it, then once on a second day.
    for hours in (1, 5):
        _exchange(ws, now + timedelta(hours=hours), "Vacuum the events table.", "Vacuumed events.")
    ws.note("Vacuumed the events table.", importance=0.6, at=now + timedelta(hours=6))
    _exchange(ws, now + timedelta(days=1), "Vacuum the events table.", "Vacuumed events.")
    assert _found(ws, now + timedelta(days=2)) == []  # two days: twice, no habit yet
    _exchange(ws, now + timedelta(days=2), "Vacuum the events table.", "Vacuumed events.")
    assert _found(ws, now + timedelta(days=3)) == [("Vacuuming events table", 3)]


def test_a_repeated_exchange_counts_each_day_it_was_seen_again(ws, now):
    _exchange(ws, now, "Rotate the API keys for staging.", "Rotated the staging API keys.")
    ids = [c.id for c in ws.store.crystals.select()]
    for day in (3, 9):
        for crystal_id in ids:
            repeats.record(ws.store, crystal_id, now + timedelta(days=day))
    assert _found(ws, now + timedelta(days=10)) == [("Rotating API keys", 3)]


def test_generic_verbs_name_no_skill(ws, now):
    for form in sorted(verbs.GENERIC):
        for day, thing in enumerate(("billing", "search", "upload")):
            ws.note(
                f"{form.capitalize()} the {thing} module again", 0.6, at=now + timedelta(days=day)
            )
    assert _found(ws, now + timedelta(days=4)) == []


def test_a_skill_that_grew_replaces_its_older_name(ws, now):
    old = parse_state(
        "## Emerging Skills\n"
        "- Upgrading django, celery and boto3 → Confidence: 65% | Occurrences: 3\n"
        "- Writing reports → Confidence: 50% | Occurrences: 2\n"
    )
    found = Insights(
        emerging_skills=[
            {
                "skill": "Upgrading django, celery, boto3 and pydantic",
                "occurrences": 4,
                "confidence": 80,
                "crystal_ids": [1, 2],
            }
        ]
    )
    body = skills.write_skills(old, found, 2_000)
    assert body.split("\n") == [
        "- Upgrading django, celery, boto3 and pydantic → Confidence: 80% | Occurrences: 4",
        "- Writing reports → Confidence: 50% | Occurrences: 2",
    ]
