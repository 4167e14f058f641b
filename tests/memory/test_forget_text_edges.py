"""The edges of what a forget takes out of the text it leaves: a logged search that names the
forgotten text in words other memories still hold, a one-line string holding a lost word,
a stored JSON value left as it was when nothing was taken from it, a secret placeholder's
hash as the one lost word of it."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from dreamer.memory.forget_pending import Pending, pending_forget_requests, record
from dreamer.memory.forgetting import lost_words, map_stored


def logged(ws) -> list[str]:
    db = sqlite3.connect(f"file:{ws.db_path}?mode=ro", uri=True)
    try:
        return [query for (query,) in db.execute("SELECT query FROM searches")]
    finally:
        db.close()


def test_a_search_naming_the_text_in_words_others_still_hold_leaves_the_log(ws, now):
    ws.note("The gym locker code is 4417", at=now - timedelta(minutes=5))
    ws.note("The locker room code changed in spring", at=now - timedelta(minutes=4))
    ws.search("locker code", now=now)  # both words stay in another memory: no lost word
    ws.search("spring", now=now)
    (hit,) = [h for h in ws.search("gym", now=now) if "gym" in h.text]
    ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
    assert "locker code" not in logged(ws)
    assert "spring" in logged(ws)


def test_a_one_line_string_holding_a_lost_word_reads_forgotten_not_empty(ws, now):
    ws.note("The quokkavelvet attic has a slow leak", at=now - timedelta(minutes=5))
    ws.note("Billing runs nightly", at=now - timedelta(minutes=4))
    record(ws.store, Pending(2, "that quokkavelvet thing", [7]))
    (hit,) = [h for h in ws.search("quokkavelvet", now=now) if "attic" in h.text]
    ws.forget([hit.id], reason="asked", now=now + timedelta(minutes=1))
    [waiting] = pending_forget_requests(ws)
    assert waiting.target == "[forgotten]"


def test_a_stored_json_value_nothing_was_taken_from_is_left_byte_for_byte():
    # Written elsewhere with escapes and other spacing: rewriting it would count as a change.
    stored = '{"place":"caf\\u00e9",  "notes": ["Billing runs nightly"]}'
    assert map_stored(stored, lambda piece: piece) == stored
    assert map_stored(stored, lambda piece: piece.replace("nightly", "[forgotten]")) == (
        '{"place": "café", "notes": ["Billing runs [forgotten]"]}'
    )


def test_of_a_secret_placeholder_only_its_hash_is_a_lost_word(ws):
    # The hash names that one secret; "secret" and its kind name every secret of the kind.
    text = "Deploy key for staging: [secret:github-pat#9c1d]"
    assert sorted(lost_words(ws.store, [text])) == ["9c1d", "deploy", "key", "staging"]
