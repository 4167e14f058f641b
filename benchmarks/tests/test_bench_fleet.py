"""`dream bench fleet` on a small fleet: workers on PostgreSQL keep every promise under a kill."""

from __future__ import annotations

from dreamer_bench import fleet

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL


def test_the_fleet_bench_keeps_every_promise_on_a_small_fleet(pg_database, tmp_path):
    shape = fleet.Fleet(
        workspaces=4,
        workers=2,
        writers=1,
        seconds=8,
        kill_at=2,
        lease_seconds=2,
        consolidate_minutes=0.05,
        dream_minutes=0.1,
    )
    report = fleet.run(shape, db=pg_database, parent=tmp_path)
    assert report["notes"] > 0 and report["notes_missing"] == report["notes_unaccounted"] == 0
    assert report["duplicate_runs"] == 0 and report["runs_counted"] and report["backlog"] == 0
    assert report["killed"] is not None
    whole, dreamt = map(int, report["memory_whole"].split("/"))
    assert whole == dreamt
