"""Changed values: a newer note on the same subject with another date supersedes a plan that
had not happened yet, whatever its words; passed dates, other people and habits do not."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dreams import offline_dream

from dreamer.dream.rules.values import find_changed_values
from dreamer.memory.state import parse
from dreamer.retrieval.embed import embedder_for


def _item(text, at):
    return {"id": None, "text": text, "at": at, "source": "note"}


@pytest.fixture(scope="module")
def embedder():
    return embedder_for("auto")


@pytest.mark.slow
def test_a_plan_moved_in_other_words_is_superseded(embedder):
    older = _item(
        "Booked Van Dijk Removals; their lorry loads the house on Tuesday October 6.",
        "2026-09-14T11:00:00Z",
    )
    newer = _item(
        "Van Dijk rang: they can't make the 6th and will come on Thursday October 8.",
        "2026-09-17T09:30:00Z",
    )
    [pair] = find_changed_values([older, newer], embedder)
    assert pair["older"] is older and pair["newer"] is newer


@pytest.mark.slow
def test_a_date_already_passed_is_history_not_a_changed_plan(embedder):
    older = _item("The invoice export deadline moved to March 20.", "2026-03-09T09:10:00Z")
    newer = _item(
        "The invoice export is feature-complete; UAT starts Monday March 30.",
        "2026-03-27T15:00:00Z",
    )
    assert find_changed_values([older, newer], embedder) == []


@pytest.mark.slow
def test_the_same_words_about_other_people_are_another_subject(embedder):
    older = _item("Dentist check-up for Daan on April 3, the morning slot.", "2026-03-10T09:00:00Z")
    newer = _item(
        "Dentist check-up for Marta on April 10, the morning slot.", "2026-03-11T09:00:00Z"
    )
    assert find_changed_values([older, newer], embedder) == []


def test_a_weekday_alone_is_a_habit_here(embedder):
    older = _item(
        "Posted the Friday status in #billing-dev: CSV export done.", "2026-03-06T15:30:00Z"
    )
    newer = _item(
        "Posted the Friday status in #billing-dev: templates in review.", "2026-03-13T15:40:00Z"
    )
    assert find_changed_values([older, newer], embedder) == []


def test_without_an_embedder_the_rule_does_nothing():
    older = _item("The locum starts on Monday June 1.", "2026-05-04T10:00:00Z")
    newer = _item("The locum now starts on Monday June 8.", "2026-05-08T10:00:00Z")
    assert find_changed_values([older, newer], None) == []


def test_after_the_next_dream_the_old_date_is_not_current(ws, now):
    ws.note(
        "Dr. Tomás Ruane will start as the practice's locum on Monday June 1.",
        importance=0.8,
        at=now,
    )
    offline_dream(ws, now + timedelta(hours=1))
    ws.note(
        "Bad news on the locum: Tomás's registration is held up, so he starts June 8.",
        importance=0.8,
        at=now + timedelta(days=2),
    )
    offline_dream(ws, now + timedelta(days=2, hours=1))
    state = parse(ws.memory_md.read_text(encoding="utf-8"))
    current = state.body("active_context") + state.body("bond")
    assert "June 8" in current and "June 1" not in current
