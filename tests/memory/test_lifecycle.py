"""Crystal lifecycle: fading, use, emotional weight, archiving, merging, frozen, no deletion."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from dreamer.memory import hormones, lifecycle
from dreamer.retrieval.embed import to_blob
from dreamer.store import NewCrystal
from dreamer.support.times import iso


def _audit(ws, crystal_id):
    return [
        row[0]
        for row in ws.store.db.execute(
            "SELECT action FROM audit WHERE crystal_id = ? ORDER BY id", [crystal_id]
        )
    ]


def _count(ws):
    return ws.store.db.execute("SELECT count(*) FROM crystals").fetchone()[0]


def test_half_life_formula():
    assert lifecycle.half_life_days("experience", 0.0, 0) == 30
    assert lifecycle.half_life_days("directive", 0.0, 0) == 120
    assert lifecycle.half_life_days("experience", 0.5, 0) == 60
    assert lifecycle.half_life_days("experience", 0.0, 3) == pytest.approx(30 * (1 + np.log(4)))
    assert lifecycle.faded_importance(0.8, 30, 30) == pytest.approx(0.4)


def test_importance_fades_with_age(ws, now):
    crystal_id = ws.note(
        "Walked along the river", importance=0.8, type="experience", at=now - timedelta(days=30)
    )
    report = lifecycle.run(ws, now)
    assert report.faded == [crystal_id]
    crystal = ws.get(crystal_id)
    assert crystal.importance == pytest.approx(0.4)
    assert crystal.updated_at == iso(now) and crystal.lifecycle == "generated"
    assert _audit(ws, crystal_id) == ["created", "faded"]
    # the fade continues from the change, not from creation
    lifecycle.run(ws, now + timedelta(days=30))
    assert ws.get(crystal_id).importance == pytest.approx(0.2)


def test_small_fades_accumulate_without_writes(ws, now):
    crystal_id = ws.note("Walked along the river", importance=0.8, type="experience", at=now)
    for day in range(1, 3):
        assert lifecycle.run(ws, now + timedelta(days=day)).faded == []
    assert _audit(ws, crystal_id) == ["created"]
    lifecycle.run(ws, now + timedelta(days=6))
    assert ws.get(crystal_id).importance == pytest.approx(0.8 * 0.5 ** (6 / 30), abs=1e-4)


def test_emotional_weight_slows_fading(ws, now):
    start = now - timedelta(days=30)
    calm = ws.note("Read the quarterly report", importance=0.8, type="experience", at=start)
    hormones.feel(ws, "dopamine", 0.5, "launch day", start)  # dopamine 0.65: 0.5 above rest
    moved = ws.note(
        "Watched the rocket launch with the team", importance=0.8, type="experience", at=start
    )
    lifecycle.run(ws, now)
    assert ws.get(calm).importance == pytest.approx(0.4)
    assert ws.get(moved).importance == pytest.approx(0.8 * 0.5 ** (30 / 60), abs=1e-4)


def test_use_raises_importance_and_slows_fading(ws, now):
    crystal_id = ws.note(
        "The API key lives in the vault",
        importance=0.5,
        type="world_fact",
        at=now - timedelta(days=1),
    )
    ws.store.crystals.record_access([crystal_id], now - timedelta(hours=1))
    report = lifecycle.run(ws, now)
    assert report.used == [crystal_id]
    assert ws.get(crystal_id).importance == pytest.approx(
        0.5 * 0.5 ** (1 / 60 / 1.693) + 0.1, abs=1e-3
    )
    assert _audit(ws, crystal_id)[-1] == "used"
    # no new access, no new boost
    assert lifecycle.run(ws, now + timedelta(hours=1)).used == []


@pytest.mark.slow
def test_archived_below_floor_but_never_deleted(ws, now):
    faint = ws.note("Saw a pigeon", importance=0.3, type="experience", at=now - timedelta(days=60))
    fresh = ws.note("Tiny detail", importance=0.05, type="experience", at=now)
    before = _count(ws)
    report = lifecycle.run(ws, now)
    assert report.archived == [faint]
    assert ws.get(faint).lifecycle == "archived"
    assert ws.get(fresh).lifecycle == "generated"  # too young to archive
    assert _count(ws) == before
    # archived crystals stay searchable and no longer change
    assert faint in [hit.id for hit in ws.search("pigeon", now=now)]
    lifecycle.run(ws, now + timedelta(days=365))
    assert _audit(ws, faint) == ["created", "archived"]


def test_frozen_crystals_never_change(ws, now):
    pinned = ws.note(
        "User's name is Ada", importance=0.6, type="world_fact", at=now - timedelta(days=900)
    )
    ws.store.crystals.update_crystal(
        pinned, {"lifecycle": "frozen"}, action="frozen", at=now - timedelta(days=900)
    )
    ws.store.crystals.record_access([pinned], now - timedelta(days=1))
    dup = ws.note("User's name is Ada.", importance=0.9, type="world_fact", at=now)
    report = lifecycle.run(ws, now)
    crystal = ws.get(pinned)
    assert (crystal.importance, crystal.lifecycle) == (0.6, "frozen")
    assert _audit(ws, pinned) == ["created", "frozen"]
    # a frozen crystal never loses a merge, even to a more important duplicate
    assert report.merged == [(dup, pinned)]
    assert ws.get(dup).parent_id == pinned


def test_near_duplicates_merge_into_the_more_important(ws, now):
    first = ws.note("User prefers dark mode in the editor", importance=0.6, at=now)
    second = ws.note("The user prefers dark mode in the editor!", importance=0.9, at=now)
    other = ws.note("User prefers light mode on the phone", importance=0.6, at=now)
    ws.store.crystals.record_access([first], now)
    report = lifecycle.run(ws, now)
    assert report.merged == [(first, second)]
    loser, winner = ws.get(first), ws.get(second)
    assert (loser.lifecycle, loser.parent_id) == ("archived", second)
    assert (winner.importance, winner.access_count) == (0.9, 1)
    assert ws.get(other).lifecycle == "generated"
    assert "merged" in _audit(ws, first) and "absorbed" in _audit(ws, second)
    # checked crystals are not compared again
    assert ws.store.records.get_meta("lifecycle.merge_checked_id") == str(other)
    assert lifecycle.run(ws, now).merged == []


def test_on_a_tie_the_newer_duplicate_is_archived(ws, now):
    old = ws.note("Deploys happen on Fridays", importance=0.7, at=now)
    new = ws.note("Deploys happen on Fridays.", importance=0.7, at=now)
    assert lifecycle.run(ws, now).merged == [(new, old)]


def test_transcripts_do_not_merge_with_notes(ws, now):
    ws.note("User prefers dark mode", at=now)
    ws.index(
        NewCrystal(
            "User prefers dark mode.",
            importance=0.5,
            semantic_type="experience",
            at=now,
            source="sessions",
        )
    )
    assert lifecycle.run(ws, now).merged == []


@pytest.mark.slow
def test_a_tick_compares_only_new_crystals_against_a_large_store(ws, now):
    """20k existing crystals, 50 new: one pass merges nothing and fades nothing new.

    How long a tick takes at size is measured by `dream bench scale` (its "tick s" column).
    """
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((20_000, ws.embedder.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    stamp = iso(now)
    with ws.store.transaction():
        ws.store.db.conn.executemany(
            "INSERT INTO crystals (text, source, semantic_type, importance, created_at,"
            " updated_at, content_hash, embedding) VALUES (?, 'scratch', 'experience', 0.5,"
            " ?, ?, ?, ?)",
            [(f"bulk {i}", stamp, stamp, f"h{i}", to_blob(v)) for i, v in enumerate(vectors)],
        )
    ws.store.records.set_meta("lifecycle.merge_checked_id", "20000")
    for i in range(50):
        ws.note(f"new note number {i} about topic {i * 7}", at=now)
    report = lifecycle.run(ws, now)
    assert report.merged == [] and report.faded == []
    assert ws.store.records.get_meta("lifecycle.merge_checked_id") == str(
        ws.store.db.execute("SELECT max(id) FROM crystals").fetchone()[0]
    )


def test_catching_up_after_a_long_pause_is_spread_over_ticks(ws, now, monkeypatch):
    monkeypatch.setattr(lifecycle, "MAX_CHANGES_PER_TICK", 2)
    ids = [
        ws.note(
            f"Memory number {i} of the trip",
            importance=0.8,
            type="experience",
            at=now - timedelta(days=30 + i),
        )
        for i in range(3)
    ]
    first = lifecycle.run(ws, now)
    assert sorted(first.faded) == sorted(ids[1:])  # the oldest first
    second = lifecycle.run(ws, now + timedelta(minutes=30))
    assert second.faded == [ids[0]]
    assert ws.get(ids[0]).importance == pytest.approx(0.4, abs=1e-3)
