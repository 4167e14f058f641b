"""Issue 23, item 5: the insights of a dream request refer to state lines instead of repeating
them, read from the request the real Anthropic SDK sent to the local fake Messages API."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from fake_anthropic import FakeAnthropic

from dreamer.config import Settings
from dreamer.dream import inputs as request_inputs
from dreamer.dream.insights import Insights
from dreamer.dream.synth import DreamInputs
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.memory.scratch import Note
from dreamer.memory.state import WorkingMemory
from dreamer.support import tokens

STALE = "Kitchen renovation quotes due from three contractors"
DEADLINE = "Acme quarterly report due 2026-06-12"
OLD = WorkingMemory(
    {
        "phenotype": "- Patient, precise.",
        "bond": "- Maya, product lead at Acme.",
        "niche": "",
        "active_context": f"- Draft section 2 of the report.\n- {STALE}.\n- {DEADLINE}",
        "crystal_pointers": "",
        "curiosity_gaps": "",
        "emerging_skills": "",
    }
)
NEWER = "Maya moved the Acme quarterly report to 2026-06-26"


def insights(now) -> Insights:
    """What the rules would say: a fading state line and a change of a state line's value."""
    return Insights(
        fading_topics=[
            {
                "topic": "Kitchen renovation quotes",
                "keywords": "kitchen renovation quotes",
                "line": f"- {STALE}.",
                "last_seen": None,
                "crystal_ids": [3],
            }
        ],
        contradictions=[
            {
                "kind": "deadline",
                "subject": ["acme", "report"],
                "older": {
                    "id": None,
                    "text": DEADLINE,
                    "at": "2026-03-01T09:00:00Z",
                    "source": "state",
                },
                "newer": {"id": 7, "text": NEWER, "at": "2026-03-12T09:00:00Z", "source": "note"},
            }
        ],
    )


@pytest.fixture(autouse=True)
def contradictions_sent(monkeypatch):
    """These tests are about how a sent item refers to the state; contradictions are withheld
    from a model by default (their measured precision), so they are sent here."""
    monkeypatch.setattr(
        request_inputs, "SENT_KINDS", (*request_inputs.SENT_KINDS, "contradictions")
    )


def request(now, found: Insights) -> str:
    fake = FakeAnthropic()
    fake.tool_use(TOOL_NAME, {})
    inputs = DreamInputs(
        now=now,
        old=OLD,
        notes=[Note(now - timedelta(hours=1), 0.8, NEWER)],
        crystals=[],
        insights=found,
        hormones={"dopamine": 0.1, "cortisol": 0.1, "oxytocin": 0.1},
        mood="calm",
    )
    ClaudeSynthesizer(Settings(), client=fake.client()).synthesize(inputs)
    return fake.last.json["messages"][0]["content"][0]["text"]


def insights_of(sent: str) -> dict:
    return json.loads(sent.split("<insights>\n", 1)[1].split("\n</insights>", 1)[0])


def test_insights_refer_to_state_lines_by_section_and_number(now):
    sent = request(now, insights(now))
    data = insights_of(sent)
    assert data["fading_topics"][0]["state"] == "active_context:2"
    assert "line" not in data["fading_topics"][0]
    older = data["contradictions"][0]["older"]
    assert older["state"] == "active_context:3" and "text" not in older
    assert data["contradictions"][0]["newer"]["text"] == NEWER  # a note is not a state line
    # Each state line is in the request once: in the state block.
    assert sent.count(STALE) == 1 and sent.count(DEADLINE) == 1
    assert "third non-empty line of that section" in sent


def test_referring_saves_the_repeated_tokens(now):
    referred = insights_of(request(now, insights(now)))
    spelled = request_inputs.offered(insights(now).to_dict(), now)
    spelled = {key: value for key, value in spelled.items() if value}
    saved = tokens.count(json.dumps(spelled)) - tokens.count(json.dumps(referred))
    assert saved >= tokens.count(STALE + DEADLINE) - 6


@pytest.mark.parametrize("line", [f"- {STALE} and the garden", "- Kitchen"])
def test_a_line_the_state_does_not_hold_is_spelled_out(now, line):
    found = insights(now)
    found.fading_topics[0]["line"] = line
    data = insights_of(request(now, found))
    assert data["fading_topics"][0]["line"] == line and "state" not in data["fading_topics"][0]
