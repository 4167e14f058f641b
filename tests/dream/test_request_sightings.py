"""How often and when last a note's text was written, on every store backend (the audit log
holds the repeats; a consolidated crystal that is written again is pending again)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer.memory import repeats
from dreamer.store import NewCrystal, open_store
from dreamer.support.times import iso

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    if request.param == "sqlite":
        opened = open_store(tmp_path / "crystals.db")
    else:
        url = request.getfixturevalue("pg_database")
        opened = open_store(tmp_path / "crystals.db", url=url, key=str(tmp_path))
    yield opened
    opened.close()


def test_repeats_are_counted_with_their_last_time_and_reopen_a_consolidated_crystal(store, now):
    chore, _ = store.crystals.add_crystal(
        NewCrystal(
            "Watered the tomatoes",
            source="scratch",
            semantic_type="experience",
            importance=0.6,
            at=now,
            embedding=None,
        )
    )
    once, _ = store.crystals.add_crystal(
        NewCrystal(
            "Called the bank",
            source="scratch",
            semantic_type="experience",
            importance=0.6,
            at=now,
            embedding=None,
        )
    )
    store.crystals.update_crystal(
        chore,
        {"lifecycle": "consolidated", "consolidated_at": iso(now)},
        action="consolidated",
        at=now,
    )
    assert store.crystals.count_new() == 1
    for day in (1, 2, 3, 4):
        repeats.record(store, chore, now + timedelta(days=day))
    assert store.crystals.count_new() == 2  # pending again, for the next dream
    assert (
        store.crystals.get(chore).lifecycle == "generated"
        and store.crystals.get(chore).consolidated_at is None
    )
    found = repeats.of(store, [(chore, iso(now)), (once, iso(now))])
    assert found == {chore: repeats.Sighting(5, iso(now + timedelta(days=4)))}
