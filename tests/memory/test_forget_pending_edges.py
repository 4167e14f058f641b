"""The edges of waiting forget requests: what one keeps and shows, the refusals that say how to
go on, what confirming and dismissing leave, and how a forget made another way answers or
cleans them."""

from __future__ import annotations

import json

import pytest

from dreamer.errors import UsageError
from dreamer.memory import forget_pending
from dreamer.memory.forget_pending import (
    MAX_MATCHES,
    Pending,
    after_forget,
    close,
    confirm,
    dismiss,
    get,
    lines,
    pending_forget_requests,
    record,
)


def stored(ws) -> dict[str, dict]:
    return {key: json.loads(value) for key, value in ws.store.records.meta_items("forget_request.")}


def test_a_request_keeps_at_most_fifty_matches(ws):
    record(ws.store, Pending(7, "every note about cats", list(range(1, 80)), "too many"))
    [waiting] = pending_forget_requests(ws)
    assert waiting.matches == list(range(1, MAX_MATCHES + 1))


def test_a_request_reads_back_as_it_was_kept(ws):
    kept = Pending(9, "Kofi's phone", [1, 2], "two names", "2026-05-01T10:00:00Z", names=["K M"])
    record(ws.store, kept)
    assert pending_forget_requests(ws) == [kept]
    assert get(ws.store, 9) == kept


def test_a_request_stored_with_its_id_only_reads_as_waiting_with_nothing_else(ws):
    ws.store.records.set_meta("forget_request.4", json.dumps({"request_id": 4}))
    assert pending_forget_requests(ws) == [Pending(4, "", [], "", "", forget_pending.WAITING, [])]


def test_requests_are_listed_oldest_first_by_the_note_that_asked(ws):
    for request_id in (12, 3, 30):
        record(ws.store, Pending(request_id, "the old address", [1]))
    assert [item.request_id for item in pending_forget_requests(ws)] == [3, 12, 30]


def test_the_waiting_line_counts_every_request_and_names_the_first_five(ws):
    assert lines(ws) == []
    for request_id in range(1, 8):
        record(ws.store, Pending(request_id, "the old address", [1]))
    assert lines(ws) == [
        "7 forget request(s) need the user's confirmation (note(s) 1, 2, 3, 4, 5): nothing was "
        "forgotten; list them with 'dream forget --pending', then 'dream forget --confirm ID' or "
        "'dream forget --dismiss ID'"
    ]


def test_a_request_that_is_not_waiting_is_refused_with_where_to_look(ws, now):
    record(ws.store, Pending(5, "the old address", [1]))
    close(ws.store, 5, "dismissed", now)
    with pytest.raises(UsageError) as raised:
        get(ws.store, 5)
    assert str(raised.value) == (
        "no forget request 5 is waiting; 'dream forget --pending' lists those that are"
    )


def test_a_request_naming_two_people_is_refused_with_the_ids_to_choose_from(ws, now):
    ws.note("Kofi Mensah's phone is 024 555 0101", at=now)
    ws.note("Kofi Boateng's phone is 020 777 0202", at=now)
    record(ws.store, Pending(3, "Kofi's phone", [1, 2], names=["Kofi Boateng", "Kofi Mensah"]))
    with pytest.raises(UsageError) as raised:
        confirm(ws, 3, now=now)
    assert str(raised.value) == (
        "request 3 names one of 2 people or things (Kofi Boateng, Kofi Mensah); forget the one "
        "meant by id ('dream forget ID', ids 1, 2), then 'dream forget --dismiss 3'"
    )
    assert ws.store.forgetting.tombstone_count() == 0
    assert [item.request_id for item in pending_forget_requests(ws)] == [3]


def test_a_request_with_no_clear_match_is_refused_with_how_to_find_it(ws, now):
    record(ws.store, Pending(6, "that thing from before", []))
    with pytest.raises(UsageError) as raised:
        confirm(ws, 6, now=now)
    assert str(raised.value) == (
        "request 6 matched no memory clearly; find it with 'dream forget --search WORDS', then "
        "'dream forget --dismiss 6'"
    )


def test_confirming_forgets_the_matches_and_keeps_only_the_outcome(ws, now):
    ws.note("the old address was 12 Rua Augusta", at=now)
    ws.note("the gym opens at six", at=now)
    record(ws.store, Pending(2, "the old address", [1], "another form", "2026-05-01T10:00:00Z"))
    report = confirm(ws, 2, now=now)
    assert report.forgotten == [1]
    assert [c.text for c in ws.store.crystals.select()] == ["the gym opens at six"]
    [tomb] = ws.store.forgetting.tombstones()
    assert tomb["reason"] == "forget request in note #2"
    assert tomb["forgotten_at"] == "2026-03-12T14:30:00Z"  # the time given, not the clock's
    assert stored(ws) == {
        "forget_request.2": {"request_id": 2, "state": "confirmed", "at": "2026-03-12T14:30:00Z"}
    }
    assert pending_forget_requests(ws) == []


def test_dismissing_forgets_nothing_and_stops_asking(ws, now):
    ws.note("the old address was 12 Rua Augusta", at=now)
    record(ws.store, Pending(2, "the old address", [1]))
    dismiss(ws, 2, now=now)
    assert ws.store.forgetting.tombstone_count() == 0
    assert stored(ws)["forget_request.2"]["state"] == "dismissed"
    assert "target" not in stored(ws)["forget_request.2"]
    with pytest.raises(UsageError):
        dismiss(ws, 2, now=now)


def test_a_forget_elsewhere_answers_cleans_or_leaves_each_waiting_request(ws, now):
    record(ws.store, Pending(1, "address", [4]))
    close(ws.store, 1, "dismissed", now)  # done already, and first: left alone, the rest go on
    record(ws.store, Pending(2, "address", [4, 5]))  # one of its matches goes: cleaned
    record(ws.store, Pending(5, "address", [4]))  # its only match goes: resolved
    record(ws.store, Pending(3, "the gym", [6]))  # untouched
    record(ws.store, Pending(4, "address", [7]))  # the asking note itself goes: resolved
    record(ws.store, Pending(8, "old address", []))  # no match, but its words are cleaned
    changed = after_forget(ws.store, [4], lambda text: text.replace("address", "[forgotten]"), now)
    assert changed == 4
    items = stored(ws)
    assert items["forget_request.2"]["matches"] == [5]
    assert items["forget_request.2"]["target"] == "[forgotten]"
    assert items["forget_request.5"]["state"] == "resolved"
    assert "target" not in items["forget_request.5"]
    assert items["forget_request.3"]["target"] == "the gym"
    assert items["forget_request.4"]["state"] == "resolved"
    assert items["forget_request.8"]["target"] == "old [forgotten]"
    assert items["forget_request.1"] == {
        "request_id": 1,
        "state": "dismissed",
        "at": "2026-03-12T14:30:00Z",
    }
