"""The storage contract: every backend of ``dreamer.store.Store`` passes these same tests.

A new backend adds itself to ``BACKENDS`` (a factory taking a temporary folder and the pytest
request, for fixtures such as a fresh PostgreSQL database) and must pass everything here
unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from dreamer.errors import CrystalNotFound, DreamNotFound
from dreamer.store import NewCrystal, Store, content_hash, open_store
from dreamer.support.times import iso

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL


def _postgres(folder: Path, request: pytest.FixtureRequest) -> Store:
    url = request.getfixturevalue("pg_database")
    return open_store(folder / "crystals.db", url=url, key=str(folder))


BACKENDS: dict[str, Callable[[Path, pytest.FixtureRequest], Store]] = {
    "sqlite": lambda folder, request: open_store(folder / "crystals.db"),
    "postgres": _postgres,
}


# A backend that needs a server puts its tests in that server's tier.
TIERS = {"postgres": pytest.mark.postgres}


@pytest.fixture(params=[pytest.param(name, marks=TIERS.get(name, ())) for name in sorted(BACKENDS)])
def store(request, tmp_path):
    opened = BACKENDS[request.param](tmp_path, request)
    yield opened
    opened.close()


def add(store: Store, text: str, at, **kwargs) -> int:
    fields = {
        "source": "scratch",
        "semantic_type": "experience",
        "importance": 0.5,
        "at": at,
        "embedding": None,
    }
    fields.update(kwargs)
    crystal_id, _ = store.crystals.add_crystal(NewCrystal(text, **fields))
    return crystal_id


def blob(*values: float) -> bytes:
    return np.array(values, dtype=np.float16).tobytes()


def test_crystal_fields_round_trip(store, now):
    crystal_id, created = store.crystals.add_crystal(
        NewCrystal(
            "Ada lives in Lisbon",
            source="seed",
            semantic_type="world_fact",
            importance=0.9,
            at=now,
            embedding=blob(0.6, 0.8),
            embedder="test-2",
            hormones={"dopamine": 0.4, "cortisol": 0.1, "oxytocin": 0.3},
            origin="MEMORY.md",
        )
    )
    assert created
    crystal = store.crystals.get(crystal_id)
    assert (crystal.text, crystal.source, crystal.semantic_type, crystal.importance) == (
        "Ada lives in Lisbon",
        "seed",
        "world_fact",
        0.9,
    )
    assert (crystal.lifecycle, crystal.access_count, crystal.last_accessed_at) == (
        "generated",
        0,
        None,
    )
    assert crystal.created_at == crystal.updated_at == iso(now)
    assert (crystal.dopamine, crystal.cortisol, crystal.oxytocin) == (0.4, 0.1, 0.3)
    assert crystal.content_hash == content_hash("Ada lives in Lisbon")
    assert (crystal.origin, crystal.embedder) == ("MEMORY.md", "test-2")
    assert store.vectors.vectors_of([crystal_id], "test-2") == [(crystal_id, blob(0.6, 0.8))]
    assert store.vectors.vectors_of([crystal_id], "another-embedder") == []


def test_a_vector_records_its_embedder_and_no_vector_records_none(store, now):
    with_vector = add(store, "with a vector", now, embedding=blob(1, 0), embedder="e-1")
    without = add(store, "without a vector", now, embedder="e-1")
    assert store.crystals.get(with_vector).embedder == "e-1"
    assert store.crystals.get(without).embedder is None


def test_same_content_is_one_crystal(store, now):
    first = add(store, "Café  opens at\n9", now)
    again, created = store.crystals.add_crystal(
        NewCrystal(
            " Cafe\u0301 opens at 9 ",
            source="scratch",
            semantic_type="experience",
            importance=0.5,
            at=now + timedelta(hours=1),
            embedding=None,
        )
    )
    assert (again, created) == (first, False)
    assert store.crystals.crystal_count() == 1
    assert store.crystals.find_by_hash(content_hash("Café opens at 9")) == first
    assert store.crystals.get(first).text == "Café  opens at\n9"  # the first wording is kept


def test_a_batch_adds_what_one_by_one_would(store, now):
    """``add_crystals`` (COPY on PostgreSQL) keeps every field, the ids, the duplicates,
    the audit, the full-text index and the term counts as ``add_crystal`` does."""
    before = add(store, "Café opens at 9", now)
    base = {"source": "scratch", "semantic_type": "experience", "importance": 0.5, "at": now}
    rows = [
        {**base, "text": "Ada lives in Lisbon", "embedding": blob(0.6, 0.8), "embedder": "e-1"},
        {**base, "text": " Cafe\u0301 opens at 9 ", "embedding": None},
        {
            **base,
            "text": "Ada's deploy key rotates on Tuesday",
            "source": "sessions",
            "semantic_type": "world_fact",
            "importance": 0.9,
            "at": now + timedelta(minutes=1),
            "embedding": None,
            "embedder": "e-1",
            "hormones": {"dopamine": 0.4, "cortisol": 0.1, "oxytocin": 0.3},
            "lifecycle": "consolidated",
            "consolidated_at": iso(now),
            "origin": "MEMORY.md",
            "about": "deploys",
        },
        {**base, "text": "Ada lives in Lisbon", "embedding": None},
    ]
    results = store.crystals.add_crystals([NewCrystal(**row) for row in rows])
    lisbon, deploy = before + 1, before + 2
    assert results == [(lisbon, True), (before, False), (deploy, True), (lisbon, False)]
    assert store.crystals.max_crystal_id() == deploy and store.crystals.crystal_count() == 3
    crystal = store.crystals.get(deploy)
    assert (crystal.text, crystal.source, crystal.semantic_type, crystal.importance) == (
        "Ada's deploy key rotates on Tuesday",
        "sessions",
        "world_fact",
        0.9,
    )
    assert (crystal.lifecycle, crystal.consolidated_at, crystal.about) == (
        "consolidated",
        iso(now),
        "deploys",
    )
    assert crystal.created_at == crystal.updated_at == iso(now + timedelta(minutes=1))
    assert (crystal.dopamine, crystal.cortisol, crystal.oxytocin) == (0.4, 0.1, 0.3)
    assert (crystal.origin, crystal.embedder) == ("MEMORY.md", None)  # no vector, no embedder
    assert store.vectors.vectors_of([lisbon, deploy], "e-1") == [(lisbon, blob(0.6, 0.8))]
    assert store.vectors.unembedded() == [(before, "scratch", "Café opens at 9")] + [
        (deploy, "sessions", "Ada's deploy key rotates on Tuesday")
    ]
    (created,) = store.records.audit_entries(deploy)
    assert (created["action"], created["detail"]) == (
        "created",
        {"source": "sessions", "lifecycle": "consolidated"},
    )
    assert store.search.term_frequencies(["ada", "tuesday", "opens"]) == {
        "ada": 2,
        "tuesday": 1,
        "opens": 1,
    }
    found = dict(store.search.fts_match(["lisbon", "rotating"], [], 10))
    assert set(found) == {lisbon, deploy}
    assert store.crystals.add_crystals([]) == []


def test_missing_crystal_names_the_fix(store):
    with pytest.raises(CrystalNotFound, match="dream search"):
        store.crystals.get(12345)
    assert store.crystals.crystals_by_id([12345]) == []


def test_updates_are_audited_and_unknown_fields_refused(store, now):
    crystal_id = add(store, "Prefers short answers", now)
    later = now + timedelta(days=1)
    store.crystals.update_crystal(
        crystal_id,
        {"lifecycle": "consolidated", "importance": 0.8},
        action="consolidate",
        at=later,
        reason="dream 1",
    )
    crystal = store.crystals.get(crystal_id)
    assert (crystal.lifecycle, crystal.importance, crystal.updated_at) == (
        "consolidated",
        0.8,
        iso(later),
    )
    entries = store.records.audit_entries(crystal_id)
    assert [e["action"] for e in entries] == ["consolidate", "created"]
    assert entries[0]["detail"] == {
        "lifecycle": ["generated", "consolidated"],
        "importance": [0.5, 0.8],
        "reason": "dream 1",
    }
    with pytest.raises(ValueError, match="text"):
        store.crystals.update_crystal(crystal_id, {"text": "rewritten"}, action="edit", at=now)
    assert store.crystals.get(crystal_id).text == "Prefers short answers"


def test_a_failed_transaction_leaves_nothing(store, now):
    with pytest.raises(RuntimeError), store.transaction():
        add(store, "half-way", now)
        store.records.set_meta("k", "v")
        raise RuntimeError("boom")
    assert store.crystals.crystal_count() == 0 and store.records.get_meta("k") is None
    store.records.set_meta("k", "v1")
    store.records.set_meta("k", "v2")
    assert store.records.get_meta("k") == "v2"
    assert store.records.get_meta("absent", "default") == "default"
    store.records.set_meta("ingest.a", "1")
    store.records.set_meta("ingest.b", "2")
    store.records.set_meta("ingestion", "3")
    assert store.records.meta_items("ingest.") == [("ingest.a", "1"), ("ingest.b", "2")]


def test_listing_and_counting(store, now):
    ids = [
        add(store, f"note {i}", now + timedelta(minutes=i), source=source)
        for i, source in enumerate(["scratch", "seed", "sessions", "insight", "scratch"])
    ]
    store.crystals.update_crystal(ids[4], {"lifecycle": "archived"}, action="archived", at=now)
    assert [c.id for c in store.crystals.select()] == ids
    assert [c.id for c in store.crystals.select(sources=["scratch"], newest_first=True)] == [
        ids[4],
        ids[0],
    ]
    assert [c.id for c in store.crystals.select(lifecycles=["archived"])] == [ids[4]]
    assert [c.id for c in store.crystals.select(limit=2)] == ids[:2]
    assert [c.id for c in store.crystals.crystals_by_id([ids[2], ids[0]])] == [ids[0], ids[2]]
    # New: generated, never consolidated, not the dream's own insights.
    assert store.crystals.count_new() == 3
    assert [c.id for c in store.crystals.new_crystals(ids[2], 10)] == [ids[2], ids[1], ids[0]]
    assert [c.id for c in store.crystals.new_crystals(ids[4], 1)] == [ids[2]]
    assert store.crystals.count_by_lifecycle() == {"generated": 4, "archived": 1}
    assert store.crystals.max_crystal_id() == max(ids) and store.crystals.crystal_count() == 5
    assert store.crystals.latest_text("scratch", iso(now + timedelta(minutes=3))) == "note 0"
    assert store.crystals.latest_text("seed", iso(now - timedelta(minutes=1))) is None
    recent = store.crystals.touched_since(iso(now + timedelta(minutes=3)), 10)
    assert [c.id for c in recent] == [ids[4], ids[3]]


def test_access_counts_and_search_log(store, now):
    crystal_id = add(store, "accessed", now)
    store.crystals.record_access([crystal_id], now)
    store.search.record_search(
        now + timedelta(minutes=1), "accessed", "both", [crystal_id], 1.0, gap=False
    )
    crystal = store.crystals.get(crystal_id)
    assert (crystal.access_count, crystal.last_accessed_at) == (2, iso(now + timedelta(minutes=1)))
    store.search.record_search(now + timedelta(minutes=2), "kubernetes", "both", [], None, gap=True)
    since = iso(now)
    assert store.search.search_queries(since) == ["accessed", "kubernetes"]
    assert store.search.search_queries(since, found_only=True) == ["accessed"]
    assert store.search.open_gaps(since, 5) == [("kubernetes", iso(now + timedelta(minutes=2)))]
    # A later search for the same words that finds something closes the gap.
    store.search.record_search(
        now + timedelta(minutes=3), "Kubernetes", "both", [crystal_id], 0.5, gap=False
    )
    assert store.search.open_gaps(since, 5) == []


def test_full_text_matching_ranks_and_filters(store, now):
    deploy = add(store, "The deploy key rotates every Tuesday", now)
    add(store, "Unrelated note about lunch", now)
    talk = add(store, "User: when does the deploy key rotate?", now, source="sessions")
    found = dict(store.search.fts_match(["rotating"], [], 10))  # stemming: rotating ~ rotates
    assert set(found) == {deploy, talk} and all(score > 0 for score in found.values())
    assert [i for i, _ in store.search.fts_match_filtered(["deploy"], [], True, 10)] == [talk]
    assert [i for i, _ in store.search.fts_match_filtered(["deploy"], [], False, 10)] == [deploy]
    assert store.search.ids_of_kind([deploy, talk], sessions=True) == {talk}
    # Words in "also" only rank: a match must hold one of the terms.
    assert store.search.fts_match(["lunch"], ["deploy"], 10)[0][0] != deploy
    assert store.search.term_frequencies(["deploy", "tuesdays", "absent"]) == {
        "deploy": 2,
        "tuesdays": 1,
        "absent": 0,
    }
    assert store.search.last_mention(["deploy", "tuesday"]) == iso(now)
    assert store.search.last_mention(["nowhere"]) is None
    rows = {row[0]: row for row in store.search.rank_rows([deploy, talk])}
    assert rows[talk][1] == "sessions" and rows[deploy][3] == 0.5 and rows[deploy][4] == 0
    assert store.search.newest_day() == pytest.approx(now.timestamp() / 86400 + 2440587.5)
    # A search's results as plain rows; a forgotten crystal is no result.
    hits = sorted(store.search.hit_rows([talk, deploy, 10**6]))
    assert [tuple(row[:4]) for row in hits] == [
        (deploy, "The deploy key rotates every Tuesday", "scratch", "experience"),
        (talk, "User: when does the deploy key rotate?", "sessions", "experience"),
    ]
    assert tuple(hits[0][4:]) == (0.5, "generated", iso(now))
    store.forgetting.forget_crystal(talk, reason="test", at=now)
    assert [row[0] for row in store.search.hit_rows([talk, deploy])] == [deploy]


def test_vectors_by_range_block_and_id(store, now):
    ids = [add(store, f"v{i}", now, embedding=blob(1, 0), embedder="e1") for i in range(5)]
    plain = add(store, "no vector", now)
    archived = add(store, "archived vector", now, embedding=blob(0, 1), embedder="e1")
    other = add(store, "another embedder", now, embedding=blob(0, 1), embedder="e2")
    store.crystals.update_crystal(archived, {"lifecycle": "archived"}, action="archived", at=now)
    blocks = list(store.vectors.vectors_between(ids[0], other, "e1", 2))
    assert [[row.id for row in block] for block in blocks] == [ids[1:3], ids[3:5], [archived]]
    below = [row.id for block in store.vectors.vector_blocks(other + 1, "e1", 3) for row in block]
    assert below == ids  # archived, vector-less and other embedders' crystals are left out
    after = store.vectors.vectors_after(ids[3], 10)
    assert [row.id for row in after][:1] == [ids[4]] and len(after) == 4
    assert after[1].embedding is None and after[3].embedder == "e2"
    # A note written without a vector (a fresh `dream note`) waits for one, by id range.
    assert store.vectors.unembedded() == [(plain, "scratch", "no vector")]
    assert (
        store.vectors.unembedded(plain, None, 10) == []
        and store.vectors.unembedded(0, plain - 1) == []
    )
    assert store.vectors.unembedded(0, plain, 0) == []
    # Re-embedding: what another embedder (or none) made, then set by the new one.
    assert store.vectors.count_stale_vectors("e1") == 2
    assert [crystal_id for crystal_id, _ in store.vectors.stale_vectors("e1", 10)] == [plain, other]
    store.vectors.set_vectors([(plain, blob(1, 1)), (other, blob(1, 0))], "e1")
    assert store.vectors.count_stale_vectors("e1") == 0
    assert store.crystals.get(other).embedder == "e1"
    assert store.vectors.vectors_of([plain], "e1") == [(plain, blob(1, 1))]
    assert store.vectors.unembedded() == []


def test_fade_candidates(store, now):
    old = add(store, "old", now - timedelta(days=90), hormones={"cortisol": 0.6})
    add(store, "fresh", now)
    used = add(store, "used lately", now - timedelta(days=1))
    store.crystals.record_access([used], now)
    rows = {row.id: row for row in store.crystals.fade_candidates(iso(now - timedelta(days=30)))}
    assert set(rows) == {old, used}
    assert rows[old].levels["cortisol"] == 0.6 and rows[old].access_count == 0


def test_hormone_history(store, now):
    levels = {"dopamine": 0.5, "cortisol": 0.2, "oxytocin": 0.3}
    store.hormones.add_hormone_row(now, levels, "dopamine", 0.3, "shipped it", "note")
    store.hormones.add_hormone_row(
        now + timedelta(minutes=5), {**levels, "dopamine": 0.4}, None, None, "decay", "decay"
    )
    store.hormones.add_hormone_row(now + timedelta(minutes=9), levels, "dopamine", 0.2, "", "api")
    assert store.hormones.hormones_at(iso(now + timedelta(minutes=6))) == (
        iso(now + timedelta(minutes=5)),
        0.4,
        0.2,
        0.3,
    )
    assert store.hormones.hormones_at(iso(now - timedelta(minutes=1))) is None
    assert store.hormones.hormones_at_row(1) == (iso(now), 0.5, 0.2, 0.3)
    after = store.hormones.hormone_rows_after(1, iso(now + timedelta(minutes=9)))
    assert [row[1] for row in after] == [
        iso(now + timedelta(minutes=5)),
        iso(now + timedelta(minutes=9)),
    ]
    assert [row["reason"] for row in store.hormones.hormone_history(10, stimuli_only=True)] == [
        "",
        "shipped it",
    ]
    assert len(store.hormones.hormone_history(10)) == 3
    assert store.hormones.stimulus_reasons("dopamine", iso(now + timedelta(hours=1)), 5) == [
        "shipped it"
    ]
    # A dream weighs what the hormones did since the last one: the stimuli of a period.
    period = store.hormones.stimuli_between(iso(now), iso(now + timedelta(hours=1)), 10)
    assert [(row["hormone"], row["delta"], row["source"]) for row in period] == [
        ("dopamine", 0.2, "api")
    ]
    assert store.hormones.stimuli_between(iso(now - timedelta(seconds=1)), iso(now), 10)[0][
        "reason"
    ] == ("shipped it")


def test_dream_journal_and_runs(store, now):
    first = store.journal.record_dream(
        {
            "started_at": iso(now),
            "finished_at": iso(now),
            "outcome": "committed",
            "consumed": [1, 2],
            "critiques": [["too long"]],
            "new_state": "# state",
        }
    )
    second = store.journal.record_dream(
        {
            "started_at": iso(now + timedelta(hours=2)),
            "outcome": "skipped",
            "reason": "only 1 new note",
        }
    )
    entries = store.journal.dream_entries(5)
    assert [e["id"] for e in entries] == [second, first]
    assert (entries[1]["consumed"], entries[1]["critiques"]) == (2, 1)
    full = store.journal.get_dream(first)
    assert full["consumed"] == [1, 2] and full["new_state"] == "# state"
    with pytest.raises(DreamNotFound, match="dream log"):
        store.journal.get_dream(999)
    assert store.journal.latest_dream_id() == first
    assert store.journal.latest_dream_id(["skipped"]) == second
    assert store.journal.newest_dream() == (
        iso(now + timedelta(hours=2)),
        "skipped",
        "only 1 new note",
    )
    assert store.journal.last_run("tick") is None
    store.journal.record_run("tick", iso(now), iso(now), "ok", "spikes: none")
    store.journal.record_run(
        "tick", iso(now + timedelta(minutes=30)), iso(now), "error", "disk full"
    )
    assert store.journal.last_run("tick") == (
        iso(now + timedelta(minutes=30)),
        "error",
        "disk full",
    )
    assert store.journal.run_outcomes() == [("tick", "ok"), ("tick", "error")]
    assert store.journal.run_counts(iso(now)) == {"tick": {"error": 1, "ok": 1}}
    assert store.journal.run_counts(iso(now + timedelta(minutes=1))) == {"tick": {"error": 1}}


def test_dream_totals_add_up_every_dream(store, now):
    assert store.journal.dream_totals() == {
        "dreams": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "cost_usd": 0.0,
    }
    store.journal.record_dream(
        {
            "started_at": iso(now),
            "outcome": "committed",
            "input_tokens": 100,
            "output_tokens": 10,
            "cache_read_tokens": 50,
            "cost_usd": 0.01,
        }
    )
    store.journal.record_dream({"started_at": iso(now), "outcome": "skipped"})
    store.journal.record_dream(
        {
            "started_at": iso(now),
            "outcome": "rejected",
            "input_tokens": 20,
            "output_tokens": 5,
            "cost_usd": 0.002,
        }
    )
    store.journal.record_dream({"started_at": iso(now), "outcome": "forgotten", "new_state": "# x"})
    totals = store.journal.dream_totals()
    # The skip ran no dream (and the forget is none): two dreams, whose tokens add up.
    assert (totals["dreams"], totals["input_tokens"], totals["output_tokens"]) == (2, 120, 15)
    assert totals["cache_read_tokens"] == 50 and totals["cost_usd"] == pytest.approx(0.012)


# --- history, for reports ---------------------------------------------------------------------


def test_activity_span_covers_crystals_hormones_and_dreams(store, now):
    assert store.history.activity_span() is None
    add(store, "a note", now)
    levels = {"dopamine": 0.5, "cortisol": 0.1, "oxytocin": 0.2}
    store.hormones.add_hormone_row(now - timedelta(days=2), levels, None, None, "decay", "decay")
    store.journal.record_dream({"started_at": iso(now + timedelta(hours=3)), "outcome": "skipped"})
    assert store.history.activity_span() == (
        iso(now - timedelta(days=2)),
        iso(now + timedelta(hours=3)),
    )


def test_hormone_rows_between_are_oldest_first_and_bounded(store, now):
    levels = {"dopamine": 0.5, "cortisol": 0.1, "oxytocin": 0.2}
    for hours in (5, 1, 3, 9):
        store.hormones.add_hormone_row(
            now + timedelta(hours=hours), levels, "dopamine", 0.3, f"at {hours}", "cli"
        )
    rows = store.history.hormone_rows_between(
        iso(now + timedelta(hours=1)), iso(now + timedelta(hours=5))
    )
    assert [row["reason"] for row in rows] == ["at 1", "at 3", "at 5"]
    assert rows[0] == {
        "at": iso(now + timedelta(hours=1)),
        "hormone": "dopamine",
        "delta": 0.3,
        "reason": "at 1",
        "source": "cli",
        "dopamine": 0.5,
        "cortisol": 0.1,
        "oxytocin": 0.2,
    }


def test_lifecycle_by_day_counts_each_stage_on_its_day(store, now):
    day = now.replace(hour=10)
    first = add(store, "one", day)
    second = add(store, "two", day)
    add(store, "three", day + timedelta(days=1))
    add(store, "four", day + timedelta(days=1), lifecycle="archived")  # created archived
    store.crystals.update_crystal(
        first,
        {"lifecycle": "consolidated", "consolidated_at": iso(day + timedelta(days=1))},
        action="consolidated",
        at=day + timedelta(days=1),
    )
    store.crystals.update_crystal(
        first, {"lifecycle": "archived"}, action="archived", at=day + timedelta(days=2)
    )
    store.crystals.update_crystal(
        second, {"lifecycle": "frozen"}, action="frozen", at=day + timedelta(days=2)
    )
    store.crystals.update_crystal(
        second, {"importance": 0.1}, action="faded", at=day + timedelta(days=2)
    )
    days = store.history.lifecycle_by_day(
        iso(day - timedelta(days=1)), iso(day + timedelta(days=3))
    )
    d0, d1, d2 = (iso(day + timedelta(days=n))[:10] for n in range(3))
    assert days == {
        d0: {"created": 2, "consolidated": 0, "archived": 0, "frozen": 0},
        d1: {"created": 2, "consolidated": 1, "archived": 1, "frozen": 0},
        d2: {"created": 0, "consolidated": 0, "archived": 1, "frozen": 1},
    }
    assert list(
        store.history.lifecycle_by_day(iso(day + timedelta(days=2)), iso(day + timedelta(days=3)))
    ) == [d2]


def test_audit_action_counts_zero_for_actions_never_taken(store, now):
    crystal_id = add(store, "a secret-looking note", now)
    store.records.audit(crystal_id, "redacted", {"kinds": ["aws"]}, now)
    store.records.audit(crystal_id, "redacted", {"kinds": ["aws"]}, now + timedelta(days=1))
    assert store.history.audit_action_counts(["forgotten", "redacted"]) == {
        "forgotten": 0,
        "redacted": 2,
    }
    since = iso(now + timedelta(hours=1))
    assert store.history.audit_action_counts(["redacted"], since=since) == {"redacted": 1}
    assert store.history.audit_action_counts([]) == {}


def test_dream_rows_carry_tokens_cost_and_counts_oldest_first(store, now):
    committed = store.journal.record_dream(
        {
            "started_at": iso(now + timedelta(hours=2)),
            "outcome": "committed",
            "synthesizer": "claude",
            "input_tokens": 1200,
            "output_tokens": 300,
            "cache_read_tokens": 800,
            "cost_usd": 0.0123,
            "consumed": [1, 2, 3],
            "critiques": [["too short", "lost a pointer"], []],
            "revisions": ["# revised"],
            "old_state": "# old",
            "new_state": "# new",
        }
    )
    skipped = store.journal.record_dream(
        {"started_at": iso(now), "outcome": "skipped", "reason": "few"}
    )
    store.journal.record_dream({"started_at": iso(now + timedelta(days=5)), "outcome": "skipped"})
    rows = store.history.dream_rows(iso(now), iso(now + timedelta(days=1)))
    assert [row["id"] for row in rows] == [skipped, committed]
    assert rows[0]["consumed"] == rows[0]["critiques"] == rows[0]["revisions"] == 0
    assert not rows[0]["has_text"]
    row = rows[1]
    assert (row["input_tokens"], row["output_tokens"], row["cache_read_tokens"]) == (1200, 300, 800)
    assert row["cost_usd"] == pytest.approx(0.0123)
    assert (row["consumed"], row["critiques"], row["revisions"], bool(row["has_text"])) == (
        3,
        2,
        1,
        True,
    )
    assert "new_state" not in row


def test_dream_states_hold_the_texts_a_diff_needs(store, now):
    first = store.journal.record_dream(
        {
            "started_at": iso(now),
            "outcome": "rejected",
            "old_state": "# old",
            "draft": "# draft",
            "revisions": ["# try 1", "# try 2"],
        }
    )
    second = store.journal.record_dream(
        {"started_at": iso(now), "outcome": "committed", "old_state": "# a", "new_state": "# b"}
    )
    states = store.history.dream_states([second, first, 999])
    assert [s["id"] for s in states] == [first, second]
    assert states[0] == {
        "id": first,
        "outcome": "rejected",
        "old_state": "# old",
        "new_state": None,
        "draft": "# draft",
        "revisions": ["# try 1", "# try 2"],
    }
    assert states[1]["new_state"] == "# b" and states[1]["revisions"] == []
    assert store.history.dream_states([]) == []


def test_tombstones_list_what_a_forget_kept_and_restore_into_a_new_store(store, tmp_path, now):
    kept = add(store, "Ada likes tea", now)
    gone = add(store, "Ada's door code is 4512", now, semantic_type="world_fact", importance=0.8)
    store.forgetting.forget_crystal(gone, reason="asked by Ada", at=now + timedelta(hours=1))
    (tomb,) = store.forgetting.tombstones()
    assert tomb == {
        "crystal_id": gone,
        "content_hash": content_hash("Ada's door code is 4512"),
        "source": "scratch",
        "semantic_type": "world_fact",
        "importance": 0.8,
        "created_at": iso(now),
        "forgotten_at": iso(now + timedelta(hours=1)),
        "reason": "asked by Ada",
    }
    assert "4512" not in repr(store.forgetting.tombstones())

    # Restored in order, the ids come out as they went in, and the row reads as forgotten.
    restored_id = store.forgetting.restore_tombstone({**tomb, "crystal_id": None}, now)
    assert restored_id == gone + 1 and store.crystals.max_crystal_id() == restored_id
    assert [t["crystal_id"] for t in store.forgetting.tombstones()] == [gone, restored_id]
    with pytest.raises(CrystalNotFound, match="forgotten"):
        store.crystals.get(restored_id)
    assert [c.id for c in store.crystals.select()] == [kept]
    assert store.search.fts_match(["door"], [], 10) == []
    after = add(store, "Ada's door code changed", now)
    assert after == restored_id + 1  # ids keep growing past a restored tombstone


def test_pins_are_frozen_crystals_that_list_thaw_and_return(store, now):
    """Pins (dreamer.dream.pins) need: add frozen, list by lifecycle, thaw, and put a consumed
    crystal back to generated with no consolidation time (review mode's --return-notes)."""
    pinned = add(store, "Maya's deadline is 2026-03-24", now, lifecycle="frozen")
    other = add(store, "An ordinary note", now)
    assert [c.id for c in store.crystals.select(lifecycles=["frozen"])] == [pinned]
    assert store.crystals.count_new() == 1  # a pin is never pending for a dream
    store.crystals.update_crystal(pinned, {"lifecycle": "consolidated"}, action="unpinned", at=now)
    assert store.crystals.select(lifecycles=["frozen"]) == []
    store.crystals.update_crystal(
        other, {"lifecycle": "consolidated", "consolidated_at": iso(now)}, action="c", at=now
    )
    store.crystals.update_crystal(
        other, {"lifecycle": "generated", "consolidated_at": None}, action="returned", at=now
    )
    assert store.crystals.get(other).lifecycle == "generated" and store.crystals.count_new() == 1


def test_texts_holding_answers_every_group_in_one_query(store, now):
    add(store, "The deploy key rotates every Tuesday", now)
    add(store, "Deploying on Tuesdays is frozen", now)
    add(store, "Lunch on Tuesday", now)
    gone = add(store, "The deploy of the kiosk rotates badges", now)
    store.forgetting.forget_crystal(gone, reason="asked", at=now)
    found = store.search.texts_holding(
        [
            [["deploy", "rotating"]],  # all of one set, stemmed as the index stems
            [["kiosk"], ["badges"]],  # a forgotten crystal is never found
            [["lunch", "deploy"], ["tuesday"]],  # any one of the sets
            [],
        ],
        10,
    )
    assert found[0] == ["The deploy key rotates every Tuesday"]
    assert found[1] == [] and found[3] == []
    assert len(found[2]) == 3 and "Lunch on Tuesday" in found[2]
    assert len(store.search.texts_holding([[["tuesday"]]], 2)[0]) == 2  # at most limit texts


def test_latest_actions_reads_the_newest_rows_only(store, now):
    first = add(store, "written twice", now)
    second = add(store, "written three times", now)
    store.records.audit(second, "seen", {}, now + timedelta(hours=2))
    store.records.audit(second, "seen", {}, now + timedelta(hours=1))  # older, though logged later
    store.records.audit(first, "seen", {}, now + timedelta(hours=3))
    store.records.audit(first, "redacted", {}, now + timedelta(hours=4))
    store.records.audit(None, "seen", {}, now)
    assert store.records.latest_actions("seen", 100) == {
        first: iso(now + timedelta(hours=3)),
        second: iso(now + timedelta(hours=2)),
    }
    assert store.records.latest_actions("seen", 3) == {first: iso(now + timedelta(hours=3))}
    assert store.records.latest_actions("forgotten", 100) == {}


def test_no_store_protocol_has_more_than_25_members():
    # Small interfaces: the top Store and every role a caller is typed against stay narrow
    # (inherited members count; a property or an attribute counts as one).
    from dreamer.store import base

    protocols = [
        value
        for value in vars(base).values()
        if isinstance(value, type) and getattr(value, "_is_protocol", False)
    ]
    assert {"Store", "Crystals", "Search", "Journal", "History"} <= {p.__name__ for p in protocols}
    for protocol in protocols:
        members = {
            name
            for klass in protocol.__mro__
            if klass is not object
            for name, value in vars(klass).items()
            if not name.startswith("_") and (callable(value) or isinstance(value, property))
        } | {name for klass in protocol.__mro__ for name in vars(klass).get("__annotations__", {})}
        assert len(members) <= 25, (protocol.__name__, len(members))
