"""`dream bench pg-compare`: both stores get the same crystals and the same searches."""

from __future__ import annotations

import json

import psycopg
import pytest

from dreamer.cli import main

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL


def test_pg_compare_loads_the_same_crystals_and_times_both_stores(runner, tmp_path, pg_database):
    result = runner.invoke(
        main,
        [
            "bench",
            "pg-compare",
            "--crystals",
            "300",
            "--searches",
            "12",
            "--store-url",
            pg_database,
            "--json",
            "-q",
            "-w",
            str(tmp_path),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)["sizes"]
    load, search = row["load"], row["search"]
    with psycopg.connect(pg_database) as conn:
        stored = conn.execute("SELECT count(*) FROM crystals").fetchone()[0]
    assert load["loaded"] == stored > 290
    assert load["ratio"] == pytest.approx(load["postgres_seconds"] / load["sqlite_seconds"], 0.02)
    assert search["sqlite"]["n"] == search["postgres"]["n"] == 12
    p50 = search["postgres"]["p50_ms"] / search["sqlite"]["p50_ms"]
    assert search["ratio"] == pytest.approx(p50, 0.02)
    # The same crystals under the same ids: the two stores mostly agree on the best hit.
    assert search["same_top_hit"] >= 0.5
    assert not list(tmp_path.iterdir())  # the SQLite workspaces are removed


def test_pg_compare_human_output_names_both_stores(runner, tmp_path, pg_database):
    result = runner.invoke(
        main,
        ["bench", "pg-compare", "--crystals", "50", "--searches", "3", "--store-url"]
        + [pg_database, "-q", "-w", str(tmp_path)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    header, line = result.output.splitlines()
    assert "SQLite/PG" in header and line.split()[0] == "50"
