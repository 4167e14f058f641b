"""The search log and access counts on PostgreSQL, written in batches off the search's path as
on SQLite (``tests/retrieval/test_search_log.py``): a search alone writes nothing; a clean exit
(closed or not) loses no search; a crash loses at most ``SEARCH_BATCH - 1``; reads through the store
see what is pending; a rolled-back transaction keeps it pending; a forget drops a pending
query before it is written; and writing a batch leaves the change mark where it was."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import timedelta

import psycopg
import pytest

from dreamer import Workspace
from dreamer.store.shared import SEARCH_BATCH

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

NOTES = [
    "The staging database host is db-staging-3",
    "Maya prefers concise answers with the code first",
    "The quokka marmalade recipe needs seven cardamom pods",
]


def _logged(url) -> list[str]:
    """The queries in the searches table, as another connection sees them."""
    with psycopg.connect(url) as other:
        return [row[0] for row in other.execute("SELECT query FROM searches ORDER BY id")]


@pytest.fixture
def pg_ws(pg_database, tmp_path, now):
    ws = Workspace.open(
        tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}, overrides={"embedder": "hashing"}
    )
    ws.init()
    ids = [ws.note(text, at=now - timedelta(minutes=10 - n)) for n, text in enumerate(NOTES)]
    yield ws, ids
    ws.close()


def test_a_search_writes_nothing_until_a_batch_is_full(pg_ws, pg_database, now):
    ws, _ = pg_ws
    mark = ws.store.change_mark()
    for n in range(SEARCH_BATCH - 1):
        ws.search(f"staging database {n}", now=now)
    assert _logged(pg_database) == []
    ws.search("staging database last", now=now)
    assert len(_logged(pg_database)) == SEARCH_BATCH
    assert ws.store.change_mark() == mark  # access counts change nothing a search reads


def test_reads_through_the_store_see_the_pending_searches(pg_ws, now):
    ws, ids = pg_ws
    for minute in range(3):
        ws.search("staging database host", limit=1, now=now + timedelta(minutes=minute))
    crystal = ws.get(ids[0])
    assert crystal.access_count == 3
    assert crystal.last_accessed_at == (now + timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert ws.store.search.search_queries("2000-01-01T00:00:00Z") == ["staging database host"] * 3


def test_a_rolled_back_transaction_keeps_the_searches_pending(pg_ws, pg_database, now):
    ws, _ = pg_ws
    ws.search("concise answers", now=now)
    with pytest.raises(RuntimeError), ws.store.transaction():
        raise RuntimeError("a write that failed")
    assert _logged(pg_database) == []
    ws.store.settle()
    assert _logged(pg_database) == ["concise answers"]


def test_a_write_after_a_batch_in_one_transaction_still_moves_the_mark(pg_ws, now):
    ws, ids = pg_ws
    ws.search("staging database host", now=now)
    mark = ws.store.change_mark()
    with ws.store.transaction():  # writes the pending search first, then the change
        ws.store.crystals.update_crystal(ids[1], {"importance": 0.95}, action="weighed", at=now)
    assert ws.store.change_mark() != mark


def test_a_forget_drops_a_pending_query_before_it_is_written(pg_ws, pg_database, now):
    ws, _ = pg_ws
    ws.search("marmalade recipe of the quokka", now=now)
    ws.search("staging database host", now=now)
    assert ws.store.search.drop_searches(lambda query: "marmalade" in query) == 1
    ws.store.settle()
    assert _logged(pg_database) == ["staging database host"]


def _run(ws, url, body: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        f"""
        from datetime import datetime, timezone
        from dreamer import Workspace
        now = datetime(2026, 3, 12, 15, 0, tzinfo=timezone.utc)
        ws = Workspace.open({str(ws.root)!r}, environ={{"DREAM_STORE_URL": {url!r}}},
                            overrides={{"embedder": "hashing"}})
        """
    ) + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )


def test_a_clean_exit_loses_no_search_even_unclosed(pg_ws, pg_database):
    ws, ids = pg_ws
    body = "for n in range(3):\n    ws.search(f'staging host {n}', now=now)\n"
    done = _run(ws, pg_database, body)
    assert done.returncode == 0, done.stderr
    assert _logged(pg_database) == ["staging host 0", "staging host 1", "staging host 2"]
    assert ws.get(ids[0]).access_count == 3


def test_a_crash_loses_at_most_one_batch(pg_ws, pg_database):
    ws, _ = pg_ws
    asked = SEARCH_BATCH + 3
    done = _run(
        ws,
        pg_database,
        f"import os\nfor n in range({asked}):\n    ws.search(f'staging host {{n}}', now=now)\n"
        "os._exit(3)  # no close, no atexit: as a kill would end it\n",
    )
    assert done.returncode == 3, done.stderr
    logged = _logged(pg_database)
    assert logged == [f"staging host {n}" for n in range(SEARCH_BATCH)]
    assert asked - len(logged) <= SEARCH_BATCH - 1
