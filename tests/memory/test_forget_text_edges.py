"""The edges of what a forget takes out of the text it leaves: a logged search that names the
forgotten text in words other memories still hold."""

from __future__ import annotations

import sqlite3
from datetime import timedelta


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
