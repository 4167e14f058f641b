"""Search through the Workspace API: words find notes, query text is data, filters, access, gaps."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer import Workspace
from dreamer.errors import UsageError
from dreamer.store import NewCrystal
from dreamer.support.times import iso

FACTS = [
    "The deploy key rotates every Tuesday at noon",
    "Ada prefers dark mode in every editor",
    "The staging database lives on host db-7",
    "Lunch with Grace is on Friday",
]


@pytest.fixture
def filled(ws, now):
    ids = {text: ws.note(text, importance=0.6, at=now - timedelta(days=1)) for text in FACTS}
    ws.index(
        NewCrystal(
            "user: did the sauna fix the back pain?\nassistant: yes, the sauna helped a lot",
            importance=0.5,
            semantic_type="experience",
            at=now - timedelta(days=2),
            source="sessions",
        )
    )
    return ids


def session_id(ws) -> int:
    return ws.store.db.execute("SELECT id FROM crystals WHERE source = 'sessions'").fetchone()[0]


def test_a_note_is_found_by_its_words(ws, filled, now):
    hits = ws.search("deploy key", now=now)
    assert hits[0].id == filled[FACTS[0]]
    assert hits[0].text == FACTS[0]
    assert hits[0].score > 0 and hits[0].source == "scratch"
    assert hits[0].created_at == iso(now - timedelta(days=1))
    # Stemmed: other forms of the words find it too.
    assert ws.search("rotating keys", now=now)[0].id == filled[FACTS[0]]
    assert ws.search("DARK MODE", now=now)[0].id == filled[FACTS[1]]


def test_a_note_is_searchable_as_soon_as_note_returns(ws, now):
    crystal_id = ws.note("Zebrafish tank needs cleaning", at=now)
    assert [hit.id for hit in ws.search("zebrafish", now=now)] == [crystal_id]


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        '"deploy',
        "deploy*",
        "*",
        "deploy AND key",
        "AND",
        "OR",
        "NOT deploy",
        "NEAR(deploy key)",
        "NEAR(",
        "^deploy",
        "text:deploy",
        "crystals_fts:key",
        "-deploy",
        "deploy - key",
        "(deploy",
        "deploy)",
        "((",
        "{deploy key}",
        "deploy + key",
        "'",
        "key\x00value",
        "rowid:1",
        'deploy" OR "x',
        "!!!",
        "🦀",
        "   ",
    ],
)
def test_fts_syntax_in_a_query_never_raises(ws, filled, now, query):
    hits = ws.search(query, now=now)
    assert isinstance(hits, list)
    if "deploy" in query:
        assert filled[FACTS[0]] in [hit.id for hit in hits]


def test_search_type_filters_by_source(ws, filled, now):
    session = session_id(ws)
    both = [hit.id for hit in ws.search("sauna back pain", now=now)]
    assert session in both
    conversations = ws.search("sauna back pain", search_type="conversations", now=now)
    assert {hit.source for hit in conversations} == {"sessions"}
    facts = ws.search("sauna deploy", search_type="facts", now=now)
    assert facts and all(hit.source != "sessions" for hit in facts)
    assert session not in [hit.id for hit in facts]
    assert ws.search("deploy key", search_type="conversations", now=now) == []


def test_sources_without_sessions_hide_session_crystals(ws, filled, now):
    session = session_id(ws)
    memory_only = Workspace.open(ws.root, overrides={"search_sources": ["memory"]})
    try:
        assert memory_only.search("sauna back pain", search_type="conversations", now=now) == []
        assert session not in [hit.id for hit in memory_only.search("sauna back pain", now=now)]
        assert memory_only.search("deploy key", now=now)[0].id == filled[FACTS[0]]
    finally:
        memory_only.close()
    no_sessions = Workspace.open(ws.root, environ={"DREAM_SESSION_MEMORY": "false"})
    try:
        assert session not in [hit.id for hit in no_sessions.search("sauna", now=now)]
    finally:
        no_sessions.close()


def test_a_search_counts_as_an_access(ws, filled, now):
    target = filled[FACTS[2]]
    assert ws.get(target).access_count == 0
    hits = ws.search("staging database host", limit=1, now=now)
    assert [hit.id for hit in hits] == [target]
    ws.search("staging database host", limit=1, now=now + timedelta(minutes=5))
    crystal = ws.get(target)
    assert crystal.access_count == 2
    assert crystal.last_accessed_at == iso(now + timedelta(minutes=5))
    assert ws.get(filled[FACTS[3]]).access_count == 0  # not returned, not accessed
    logged = ws.store.db.execute("SELECT query, search_type, result_ids FROM searches").fetchall()
    assert logged[0] == ("staging database host", "both", f"[{target}]")


def test_a_search_that_finds_nothing_good_records_a_gap(ws, filled, now):
    assert ws.search("quantum chromodynamics", now=now) == []
    ws.store.settle()  # the log is written in batches, off the search's path
    gaps = ws.store.db.execute("SELECT query, at FROM gaps").fetchall()
    assert gaps == [("quantum chromodynamics", iso(now))]
    ws.search("deploy key", now=now)  # a good answer is not a gap
    ws.store.settle()
    assert ws.store.db.execute("SELECT count(*) FROM gaps").fetchone()[0] == 1


def test_limit_is_respected(ws, now):
    for i in range(12):
        ws.note(f"Meeting note number {i} about the roadmap", at=now)
    assert len(ws.search("roadmap meeting", limit=3, now=now)) == 3
    assert len(ws.search("roadmap meeting", now=now)) == 6  # the default
    assert len(ws.search("roadmap meeting", limit=50, now=now)) == 12
    with pytest.raises(UsageError, match="limit"):
        ws.search("roadmap", limit=0, now=now)


def test_unknown_search_type_is_a_usage_error(ws, now):
    with pytest.raises(UsageError, match="conversations, facts, both"):
        ws.search("anything", search_type="everything", now=now)


def test_importance_breaks_ties(ws, now):
    low = ws.note("Parking spot is level two, row B", importance=0.1, at=now)
    high = ws.note("Parking spot is level two, row C", importance=0.9, at=now)
    assert [hit.id for hit in ws.search("parking spot level two", limit=2, now=now)] == [high, low]
