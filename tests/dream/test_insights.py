"""Insights: topics, contradictions, curiosity gaps, emerging skills, fading topics."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from dreamer.dream import insights
from dreamer.memory import state as wm
from dreamer.memory.scratch import Note


def notes_into(ws, now, texts, start_hours=48):
    for i, text in enumerate(texts):
        ws.note(text, at=now - timedelta(hours=start_hours - i * 3))
    return ws.store.crystals.select()


def test_topics_group_crystals_by_shared_keywords(ws, now):
    crystals = notes_into(
        ws,
        now,
        [
            "Acme report deadline is Friday",
            "Drafted the Acme report introduction",
            "Kitchen tiles arrive Monday",
            "Kitchen plumber booked",
            "Watched a documentary about owls",
        ],
    )
    topics = insights.compute(ws.store, [], crystals, now, None).topics
    groups = {frozenset(t["crystal_ids"]) for t in topics}
    assert frozenset({1, 2}) in groups and frozenset({3, 4}) in groups
    assert frozenset({5}) in groups
    assert "acme" in topics[0]["keywords"] or "kitchen" in topics[0]["keywords"]


def test_contradictions_newest_supersedes_preference_and_deadline(ws, now):
    crystals = notes_into(
        ws,
        now,
        [
            "User prefers dark mode in the editor",
            "Acme report deadline is Friday March 13",
            "User prefers tea over coffee",
            "User now prefers light mode in the editor",
            "Acme report deadline moved to Wednesday March 18",
        ],
    )
    found = insights.compute(ws.store, [], crystals, now, None).contradictions
    pairs = {(c["older"]["text"], c["newer"]["text"]) for c in found}
    assert (
        "User prefers dark mode in the editor",
        "User now prefers light mode in the editor",
    ) in pairs
    assert (
        "Acme report deadline is Friday March 13",
        "Acme report deadline moved to Wednesday March 18",
    ) in pairs
    assert all("tea" not in c["older"]["text"] for c in found)
    assert {c["kind"] for c in found} == {"preference", "deadline"}


def test_a_note_can_supersede_a_line_of_the_old_bond(ws, now):
    old = wm.parse(
        "# Working Memory State\n\n## The Bond\n- User prefers dark mode in the editor\n"
    )
    crystals = notes_into(ws, now, ["User switched to light mode in the editor"])
    found = insights.compute(ws.store, [], crystals, now, old).contradictions
    assert found and found[0]["older"]["source"] == "state"


@pytest.mark.slow
def test_curiosity_gaps_from_questions_and_empty_searches(ws, now):
    crystals = notes_into(
        ws,
        now,
        [
            "What timezone is the Acme client in?",
            "Need to find out which Postgres version prod runs",
            "Deployed the thing.",
        ],
    )
    ws.search("quantum knitting patterns", now=now)
    gaps = insights.compute(ws.store, [], crystals, now, None).curiosity_gaps
    sources = {(g["source"], g["question"].split()[0]) for g in gaps}
    assert ("note", "What") in sources and ("note", "Need") in sources
    assert any(g["source"] == "search" and "quantum knitting" in g["question"] for g in gaps)
    assert len(gaps) == 3


@pytest.mark.slow
def test_emerging_skills_from_repeated_tasks_boosted_by_recall(ws, now):
    notes_into(
        ws,
        now,
        [
            "Deployed the staging server",
            "Wrote the weekly report",
            "Deployed staging again after the fix",
            "Deployed staging with flags",
        ],
    )
    before = insights.compute(ws.store, [], [], now, None).emerging_skills
    assert [(s["skill"], s["occurrences"]) for s in before] == [("Deploying staging", 3)]
    for _ in range(3):
        ws.search("staging deploy", now=now)
    after = insights.compute(ws.store, [], [], now, None).emerging_skills
    assert after[0]["confidence"] > before[0]["confidence"]


def test_task_pattern():
    assert insights.task_pattern("Fixed the flaky webhook test") == ("fixing", "flaky")
    assert insights.task_pattern("Wrote release notes") == ("writing", "release")
    assert insights.task_pattern("The weather is nice") is None


def test_fading_topics_are_old_context_lines_without_recent_support(ws, now):
    old_crystal_time = now - timedelta(days=10)
    ws.note("Kitchen renovation quotes from three contractors", at=old_crystal_time)
    old = wm.parse(
        "# Working Memory State\n\n## Active Context\n"
        "- Kitchen renovation quotes pending\n- Acme report in progress\n"
    )
    fresh = notes_into(ws, now, ["Acme report draft reviewed by Sam"])[1:]
    fading = insights.compute(ws.store, [], fresh, now, old).fading_topics
    assert [f["topic"] for f in fading] == ["Kitchen renovation quotes pending"]
    assert fading[0]["keywords"].startswith("kitchen renovation")
    assert fading[0]["last_seen"] is not None


def test_rotated_notes_count_as_evidence(ws, now):
    note = Note(now, 0.7, "Should we move the standup to 10am?")
    gaps = insights.compute(ws.store, [note], [], now, None).curiosity_gaps
    assert gaps[0]["question"] == "Should we move the standup to 10am?"


def test_to_dict_is_json_with_the_documented_keys(ws, now):
    crystals = notes_into(ws, now, ["User prefers dark mode", "User prefers light mode now"])
    data = insights.compute(ws.store, [], crystals, now, None).to_dict()
    assert list(data) == [
        "topics",
        "contradictions",
        "curiosity_gaps",
        "emerging_skills",
        "fading_topics",
        "answered_questions",
        "upcoming",
        "people",
    ]
    json.dumps(data)
    assert set(data["topics"][0]) == {"label", "keywords", "crystal_ids", "size"}


def test_a_gap_closes_once_a_later_search_finds_something(ws, now):
    ws.search("quantum knitting patterns", now=now - timedelta(hours=2))
    assert insights.compute(ws.store, [], [], now, None).curiosity_gaps
    ws.note("Quantum knitting patterns are in the blue binder", at=now - timedelta(hours=1))
    ws.search("quantum knitting patterns", now=now)
    assert insights.compute(ws.store, [], [], now, None).curiosity_gaps == []


@pytest.mark.slow
def test_a_search_repeated_three_times_is_a_recurring_need(ws, now):
    ws.note("The deploy checklist lives in docs/deploy.md", at=now - timedelta(days=1))
    for hours in (5, 3, 1):
        ws.search("deploy checklist", now=now - timedelta(hours=hours))
    skills = insights.compute(ws.store, [], [], now, None).emerging_skills
    assert {
        "skill": "Recalling deploy checklist",
        "occurrences": 3,
        "confidence": 50,
        "crystal_ids": [],
    } in skills
