"""Fading suggestions: keywords from a line's content that find its own note; open questions
and standing rules never fade."""

from __future__ import annotations

from datetime import timedelta

from dreamer.dream.rules.ageing import find_fading
from dreamer.memory.state import from_fields


def _old(*lines):
    return from_fields({"active_context": "\n".join(f"- {line}" for line in lines)})


def test_fading_keywords_come_from_the_content_and_find_the_lines_note(ws, now):
    ws.note("Budget for the kitchen extension is £38,000.", at=now - timedelta(days=9))
    ws.note("Chose oak worktops for the kitchen island.", at=now - timedelta(days=8))
    old = _old(
        "Baseline: budget for the kitchen extension is £38,000",
        "Decided 2026-02-20: oak worktops for the kitchen island",
    )
    fading = find_fading(ws.store, old, [], [], now)
    assert [f["line"] for f in fading] == [
        line.strip() for line in old.body("active_context").split("\n")
    ]
    for item in fading:
        words = item["keywords"].split()
        assert words, item
        assert not {"baseline", "decided", "2026-02-20", "may"} & set(words)
        assert all(w in item["line"].lower() for w in words)
        found = ws.store.last_mention(words)
        assert found is not None and item["last_seen"] == found


def test_keywords_that_find_no_note_are_not_suggested(ws, now):
    old = _old("May: quarterly offsite venue shortlist")
    fading = find_fading(ws.store, old, [], [], now)
    assert fading[0]["keywords"] == "" and fading[0]["last_seen"] is None


def test_an_open_decision_and_a_standing_weekly_review_never_fade(ws, now):
    ws.note("Spent an afternoon on the garden fence.", at=now - timedelta(days=9))
    old = _old(
        "Open decision: quartz or laminate for the utility room?",
        "Weekly review with Sam every Friday at 10",
        "Garden fence repaint",
    )
    fading = find_fading(ws.store, old, [], [], now)
    assert [f["line"] for f in fading] == ["- Garden fence repaint"]
