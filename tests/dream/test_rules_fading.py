"""Fading suggestions: keywords from a line's content that find its own note; open questions
and standing rules never fade."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dreams import offline_dream

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
        found = ws.store.search.last_mention(words)
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


def _on(day, hour):
    return datetime(2026, 3, day, hour, tzinfo=UTC)


def test_a_passed_event_leaves_as_a_pointer_saying_what_happened(ws, now):
    ws.note("The building inspector visits the extension on Tuesday March 17 at 10:00.", at=now)
    offline_dream(ws, now + timedelta(hours=1))
    ws.note("Cleared the hallway for the building inspector's visit.", at=_on(16, 9))
    assert "March 17" in offline_dream(ws, _on(16, 23)).body("active_context")
    ws.note(
        "The building inspector signed off the extension's foundations; the roof is next.",
        at=_on(17, 15),
    )
    assert "March 17" in offline_dream(ws, _on(17, 23)).body("active_context")  # still today
    state = offline_dream(ws, _on(18, 23))
    assert "March 17" not in state.body("active_context")
    [pointer] = [p for p in state.pointers() if "inspector" in f"{p.topic} {p.keywords}"]
    assert "signed off the extension's foundations" in pointer.topic, pointer
    assert "March 17" in pointer.topic, pointer


def test_a_passed_deadline_leaves_the_next_day_even_when_still_mentioned(ws, now):
    ws.note("RSVPs have to be back by Saturday March 14 so the caterer can fix the menu.", at=now)
    offline_dream(ws, now + timedelta(hours=1))
    ws.note("Chased the missing RSVPs by phone for the caterer.", at=_on(13, 23))
    assert "March 14" in offline_dream(ws, _on(14, 23)).body("active_context")
    state = offline_dream(ws, _on(15, 22))  # the chasing note is within two days: it still supports
    assert "March 14" not in state.body("active_context")
    [pointer] = [p for p in state.pointers() if "RSVPs" in p.topic]
    assert pointer.topic.startswith("RSVPs have to be back by Saturday March 14"), pointer
    assert pointer.topic.endswith("(passed)"), pointer
    assert "passed" not in pointer.keywords  # the mark is not a word to search for


def _moved_twice(ws):
    ws.note("The vendor demo is set for March 5 with the Lisbon team.", at=_on(2, 9))
    ws.note("Lisbon pushed the vendor demo to March 9.", at=_on(4, 9))
    ws.note("The vendor demo moved again, to March 12: their lead is out sick.", at=_on(10, 9))
    offline_dream(ws, _on(10, 23))


def test_a_moved_deadlines_newest_date_stays_in_view_after_it_passes_until_news_comes(ws):
    _moved_twice(ws)
    state = offline_dream(ws, _on(15, 23))  # three days past, nothing said of how it went
    assert "March 12" in state.body("active_context")
    assert "March 9" not in state.body("active_context")  # the older value is not current
    state = offline_dream(ws, _on(20, 23))  # past the week of grace: it leaves as a pointer
    assert "March 12" not in state.body("active_context")


def test_news_of_a_moved_deadline_lets_its_date_leave_the_next_day(ws):
    _moved_twice(ws)
    ws.note("The vendor demo went well; Lisbon signed the pilot.", at=_on(12, 17))
    state = offline_dream(ws, _on(13, 23))
    assert "March 12" not in state.body("active_context")


def test_a_moved_date_moved_again_later_does_not_stay(ws):
    _moved_twice(ws)
    ws.note("Lisbon postponed the vendor demo once more, to March 26.", at=_on(14, 9))
    state = offline_dream(ws, _on(15, 23))
    assert "March 26" in state.body("active_context")
    assert "March 12" not in state.body("active_context")
