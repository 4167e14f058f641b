"""Issue 35, item 3: a model is handed only the kinds of insight measured right nine times in
ten, and only items naming their evidence, read from the request the real Anthropic SDK sent
to the local fake Messages API."""

from __future__ import annotations

import json

from fake_anthropic import FakeAnthropic

from dreamer.config import Settings
from dreamer.dream.inputs import SENT_KINDS
from dreamer.dream.insights import Insights
from dreamer.dream.synth import DreamInputs
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.memory.state import WorkingMemory

QUESTION = "Should the events table be partitioned by day or by customer?"
ANSWER = "The events table holds 1.9 billion rows."


def found() -> Insights:
    """One item of every kind, each with evidence, and a skill without any."""
    return Insights(
        topics=[{"label": "events table", "keywords": ["events"], "crystal_ids": [4], "size": 1}],
        contradictions=[
            {
                "kind": "value",
                "subject": ["queue"],
                "older": {"id": 2, "text": "Queue: bull", "at": "2026-03-01T09:00:00Z"},
                "newer": {"id": 5, "text": "Queue: pg-boss", "at": "2026-03-09T09:00:00Z"},
            }
        ],
        fading_topics=[
            {
                "topic": "Kitchen quotes",
                "keywords": "kitchen quotes",
                "line": "- Kitchen quotes",
                "last_seen": "2026-03-01T09:00:00Z",
                "crystal_ids": [1],
            }
        ],
        curiosity_gaps=[{"question": QUESTION, "source": "note", "crystal_ids": [3]}],
        answered_questions=[
            {
                "question": QUESTION,
                "answer": ANSWER,
                "at": "2026-03-10T09:00:00Z",
                "crystal_ids": [3, 6],
            }
        ],
        emerging_skills=[
            {
                "skill": "Vacuuming staging",
                "occurrences": 2,
                "confidence": 50,
                "crystal_ids": [7, 8],
            },
            {
                "skill": "Recalling deploy checklist",
                "occurrences": 4,
                "confidence": 60,
                "crystal_ids": [],
            },
        ],
        upcoming=[
            {
                "text": "Load test on 2026-03-20",
                "date": "2026-03-20",
                "at": "2026-03-02T09:00:00Z",
                "crystal_ids": [9],
                "said_by": "user",
            },
            {"text": "- Launch on 2026-03-30", "date": "2026-03-30", "at": None, "crystal_ids": []},
        ],
    )


def sent(now) -> dict:
    fake = FakeAnthropic()
    fake.tool_use(TOOL_NAME, {})
    inputs = DreamInputs(
        now=now,
        old=WorkingMemory(),
        notes=[],
        crystals=[],
        insights=found(),
        hormones={"dopamine": 0.1, "cortisol": 0.1, "oxytocin": 0.1},
        mood="calm",
    )
    ClaudeSynthesizer(Settings(), client=fake.client()).synthesize(inputs)
    text = fake.last.json["messages"][0]["content"][0]["text"]
    return json.loads(text.split("<insights>\n", 1)[1].split("\n</insights>", 1)[0])


def test_a_withheld_kind_is_not_in_the_request(now):
    data = sent(now)
    for kind in ("contradictions", "curiosity_gaps", "answered_questions", "emerging_skills"):
        assert kind not in SENT_KINDS
        assert kind not in data
    assert QUESTION not in json.dumps(data) and "pg-boss" not in json.dumps(data)
    assert data["fading_topics"][0]["crystal_ids"] == [1]
    assert data["topics"][0]["label"] == "events table"  # a sent kind still goes


def test_an_item_without_evidence_is_left_out(now):
    data = sent(now)
    assert [u["date"] for u in data["upcoming"]] == ["2026-03-20"]


def test_each_item_carries_its_evidence_speaker_and_age(now):
    upcoming = sent(now)["upcoming"][0]
    assert upcoming["crystal_ids"] == [9]
    assert upcoming["said_by"] == "user"
    assert upcoming["age_days"] == (now - now.replace(day=2, hour=9, minute=0)).days
