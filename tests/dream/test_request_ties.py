"""Issue 23, item 5: where the request would break a tie (the hormones), it states the tie
instead of picking one by name. Read from the request the fake Messages API recorded."""

from __future__ import annotations

import pytest
from fake_anthropic import FakeAnthropic

from dreamer.config import Settings
from dreamer.dream.synth import DreamInputs
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.memory.state import WorkingMemory


def sent(now, **changes) -> str:
    fake = FakeAnthropic()
    fake.tool_use(TOOL_NAME, {})
    values = dict(
        now=now,
        old=WorkingMemory(),
        notes=[],
        crystals=[],
        insights=None,
        hormones={"dopamine": 0.15, "cortisol": 0.10, "oxytocin": 0.20},
        mood="calm",
    )
    ClaudeSynthesizer(Settings(), client=fake.client()).synthesize(
        DreamInputs(**(values | changes))
    )
    return fake.last.json["messages"][0]["content"][0]["text"]


def peak(lift: float, reason: str) -> dict:
    return {
        "peak": 0.5,
        "at": "2026-03-12T10:00:00Z",
        "lift": lift,
        "stimuli": 1,
        "causes": [{"reason": reason}],
    }


def test_a_tie_between_peaks_is_stated_not_broken_by_name(now):
    period = {
        "since": "2026-03-11T14:30:00Z",
        "dominant": "dopamine",  # what a pick by name would say
        "peaks": {"dopamine": peak(0.3, "shipped"), "cortisol": peak(0.3, "deadline")},
    }
    text = sent(now, period=period)
    assert "Dominant hormone" not in text
    assert "Tied hormones: **cortisol**" in text and "**dopamine**" in text
    assert "+0.30" in text and "neither leads" in text
    assert "Active Context and Curiosity Gaps and Emerging Skills alike" in text


@pytest.mark.parametrize("lifts, dominant", [((0.3, 0.2), "dopamine"), ((0.2, 0.3), "cortisol")])
def test_a_clear_peak_leads_alone(now, lifts, dominant):
    period = {
        "since": "2026-03-11T14:30:00Z",
        "dominant": dominant,
        "peaks": {"dopamine": peak(lifts[0], "shipped"), "cortisol": peak(lifts[1], "deadline")},
    }
    text = sent(now, period=period)
    assert f"Dominant hormone: **{dominant}**" in text and "Tied" not in text


def test_a_tie_of_levels_now_is_stated(now):
    # Without a period, the levels now: dopamine and cortisol both 0.30 above their rest.
    rest = Settings().hormone_rest
    levels = {"dopamine": rest["dopamine"] + 0.3, "cortisol": rest["cortisol"] + 0.3}
    text = sent(now, hormones=levels | {"oxytocin": rest["oxytocin"]})
    assert "Tied hormones: **cortisol**" in text and "Dominant hormone" not in text
