"""`dream bench insights`: each kind's rule tells a right suggestion from a wrong one, and the
bench judges the insights a real offline dream computed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from dreamer_bench import insight_precision as bench
from dreamer_bench.quality import SCENARIO_DIR

from dreamer.store import Crystal

NOW = datetime(2026, 3, 12, 9, 0, tzinfo=UTC)


def crystal(cid: int, text: str, at: str) -> Crystal:
    return Crystal(
        cid,
        text,
        "note",
        "fact",
        0.5,
        "generated",
        at,
        at,
        None,
        0,
        None,
        None,
        None,
        f"h{cid}",
        None,
        None,
        None,
    )


WORLD = bench._World(
    [
        crystal(
            1, "Open question: which queue library for the billing jobs?", "2026-03-02T09:00:00Z"
        ),
        crystal(2, "The billing jobs queue library is pg-boss.", "2026-03-05T09:00:00Z"),
        crystal(3, "Vacuumed the staging database.", "2026-03-06T09:00:00Z"),
        crystal(4, "Vacuumed staging again after the load.", "2026-03-07T09:00:00Z"),
        crystal(5, "Priya Raman, my manager, wants the report.", "2026-03-08T09:00:00Z"),
    ],
    NOW,
    {3: ["2026-03-11T09:00:00Z"]},
)
ASKED, TOLD = WORLD.crystals[0].text, WORLD.crystals[1].text


@pytest.mark.parametrize(
    "kind, item, right",
    [
        ("answered_questions", {"question": ASKED, "answer": TOLD}, True),
        ("answered_questions", {"question": TOLD, "answer": ASKED}, False),  # answer first
        ("upcoming", {"date": "2026-03-13"}, True),
        ("upcoming", {"date": "2026-03-12"}, False),
        (
            "emerging_skills",
            {"skill": "Vacuuming staging", "occurrences": 3, "crystal_ids": [3, 4]},
            True,
        ),
        (
            "emerging_skills",
            {"skill": "Vacuuming staging", "occurrences": 4, "crystal_ids": [3, 4]},
            False,
        ),
        (
            "emerging_skills",
            {"skill": "Recalling staging", "occurrences": 4, "crystal_ids": []},
            False,
        ),
        (
            "contradictions",
            {
                "subject": ["queue"],
                "older": {"text": "Queue: bull", "at": "2026-03-01T00:00:00Z"},
                "newer": {"text": "Queue: pg-boss", "at": "2026-03-05T00:00:00Z"},
            },
            True,
        ),
        (
            "contradictions",
            {
                "subject": ["queue"],
                "older": {"text": "Queue: bull", "at": "2026-03-05T00:00:00Z"},
                "newer": {"text": "Queue: pg-boss", "at": "2026-03-05T00:00:00Z"},
            },
            False,
        ),  # said at once: no newer side
        (
            "curiosity_gaps",
            {"question": "When is the offsite?", "at": "2026-03-01T00:00:00Z"},
            True,
        ),
        ("curiosity_gaps", {"question": ASKED, "at": "2026-03-02T09:00:00Z"}, False),
        ("fading_topics", {"keywords": "kitchen quotes"}, True),
        ("fading_topics", {"keywords": "staging vacuum"}, False),  # written again on 03-11
        ("fading_topics", {"keywords": "x", "passed": "2026-03-11"}, True),
        ("people", {"name": "Priya Raman", "role": "manager"}, True),
        ("people", {"name": "Priya Raman", "role": "dentist"}, False),
    ],
)
def test_each_rule_tells_right_from_wrong(kind, item, right):
    assert bench.RULES[kind](item, WORLD) is right


def test_the_bench_judges_a_real_scenario(tmp_path: Path):
    judged = bench.judge_scenario(SCENARIO_DIR / "outage.toml", tmp_path)
    table = bench.precision(judged)
    assert table["topics"]["count"] > 0 and table["upcoming"]["count"] > 0
    assert all(row["right"] <= row["count"] for row in table.values())
    assert all(j.evidenced for j in judged if j.kind == "topics")
