"""A dream's cost does not grow with the store: issue 26, item 6.

Pointer verification asks the store once for all the pointers (not one ranked search each),
and no statement a dream runs reads the whole crystals table (every read of it is by index,
id or a bounded full-text lookup), checked on SQLite's own query plans.
"""

from __future__ import annotations

from datetime import timedelta

from dreamer.dream import cycle
from dreamer.memory import state as wm

NOTES = [
    "Kitchen renovation quotes from three contractors arrived",
    "Priya wants the invoice service migrated before the audit",
    "The login flow fails when the cache is cold; ticket 4411",
    "Marathon training: long run on Sunday, 28 km",
    "Book club picked a novel about lighthouses",
]


def _with_pointers(pointers: list[wm.Pointer]) -> wm.WorkingMemory:
    bodies = {key: "" for key in wm.section_keys()}
    bodies["crystal_pointers"] = "\n".join(p.render() for p in pointers)
    return wm.WorkingMemory(bodies=bodies)


def _statements(ws):
    """Every SQL statement the workspace's SQLite connection runs, while the block runs."""
    seen: list[str] = []
    conn = ws.store.db.conn

    class Tracing:
        def __enter__(self):
            conn.set_trace_callback(seen.append)
            return seen

        def __exit__(self, *exc):
            conn.set_trace_callback(None)

    return Tracing()


def test_pointer_verification_asks_the_store_once_whatever_the_pointers(ws, now):
    for i, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(hours=i + 1))
    alive = [
        wm.Pointer("Kitchen renovation", "kitchen renovation quotes"),
        wm.Pointer("Invoice migration", "invoice migrated audit"),
        wm.Pointer("Login bug", "login cache ticket"),  # two of three words suffice
        wm.Pointer("Lighthouse novel", "lighthouses"),
    ]
    dead = [
        wm.Pointer("Moon base", "lunar regolith"),
        wm.Pointer("Login rewrite", "login rewrite oauth passkeys"),  # one of four: too few
        wm.Pointer("Nothing", "the and of"),  # no content word, nor in its topic
    ]
    pointers = [*alive, *dead] * 3  # the same pointers again: still one query
    with _statements(ws) as statements:
        kept, fixes = cycle.verify_pointers(ws, _with_pointers(pointers), now)
    assert kept.pointers() == [*alive] * 3
    assert len(fixes) == len(dead) * 3 and "'Moon base' leads nowhere" in fixes[0]
    lookups = [sql for sql in statements if "MATCH" in sql.upper()]
    assert len(lookups) == 1, lookups
    assert not [sql for sql in statements if "searches" in sql]  # nothing logged as a search


def test_a_dream_never_reads_the_whole_crystals_table(ws, now):
    for i in range(60):
        ws.note(f"{NOTES[i % len(NOTES)]} (day {i})", at=now - timedelta(hours=60 - i))
    cycle.run(ws, now=now, force=True)  # a first dream: a state with pointers to verify
    for i, text in enumerate(NOTES):
        ws.note(f"Again: {text}", at=now + timedelta(hours=i + 1))
    later = now + timedelta(days=1)
    with _statements(ws) as statements:
        result = cycle.run(ws, now=later, force=True)
    assert result.committed
    conn = ws.store.db.conn
    full_scans = []
    for sql in dict.fromkeys(statements):
        if not sql.lstrip().upper().startswith("SELECT"):
            continue
        for row in conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall():
            detail = row[3]
            words = detail.split()
            if words[0] == "SCAN" and words[1] in ("crystals", "c") and "INDEX" not in detail:
                full_scans.append((detail, sql))
    assert full_scans == []


def _with_active(lines: list[str]) -> wm.WorkingMemory:
    bodies = {key: "" for key in wm.section_keys()}
    bodies["active_context"] = "\n".join(f"- {line}" for line in lines)
    return wm.WorkingMemory(bodies=bodies, last_dream=None)


def _mention_lookups(seen: list[str]) -> int:
    return sum("max(c.created_at)" in statement for statement in seen)


def test_a_line_naming_no_date_is_not_looked_up_for_when_it_was_written(ws, now):
    """When a state line was written only matters for the dates it names: the fading and
    upcoming rules ask the store (a full-text join that grows with the store) for dated lines
    only, and find the same events."""
    from dreamer.dream.rules.ageing import Written, find_fading, find_upcoming

    for i, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(days=20 + i))
    undated = [
        "Kitchen renovation quotes compared by price",
        "Priya owns the invoice service migration",
        "Marathon training builds the long run slowly",
    ]
    ahead = (now + timedelta(days=9)).strftime("%B %d").replace(" 0", " ")
    dated = [f"Book club meets on {ahead} to discuss the lighthouse novel"]
    crystals = ws.store.crystals.select()  # new evidence that supports every line: none fades
    old = _with_active(undated)
    with _statements(ws) as seen:
        assert find_fading(ws.store, old, [], crystals, now) == []
        assert find_upcoming(ws.store, [], [], old, now) == []
    assert _mention_lookups(seen) == 0
    old = _with_active(undated + dated)
    with _statements(ws) as seen:
        assert find_fading(ws.store, old, [], crystals, now) == []
        upcoming = find_upcoming(ws.store, [], [], old, now)
    assert 1 <= _mention_lookups(seen) <= 3  # the dated line's only (its note, its content)
    assert [item["text"] for item in upcoming] == [f"- {dated[0]}"]
    written = Written(ws.store, old, now)  # as one dream's insights share it
    with _statements(ws) as seen:
        assert find_fading(ws.store, old, [], crystals, now, written) == []
        assert find_upcoming(ws.store, [], [], old, now, written) == upcoming
    assert _mention_lookups(seen) == 1
