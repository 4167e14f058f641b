"""Upcoming: a date still ahead is an event; a pattern of the week never is."""

from __future__ import annotations

from datetime import timedelta

from dreamer.dream.rules.ageing import find_upcoming
from dreamer.memory.state import WorkingMemory


def _upcoming(ws, now, *texts):
    for text in texts:
        ws.note(text, at=now - timedelta(hours=1))
    return {
        item["text"]
        for item in find_upcoming(ws.store, [], ws.store.crystals.select(), WorkingMemory(), now)
    }


def test_a_weekly_pattern_is_not_dated_as_an_event(ws, now):
    found = _upcoming(
        ws,
        now,
        "Tomasz is on site Monday to Thursday while the extension goes up.",
        "The plasterers work Tuesday-Friday this month.",
        "Weekly review with Sam on Friday at 10.",
        "The building inspector visits on Thursday.",
    )
    assert found == {"The building inspector visits on Thursday."}
