"""The search log and access counts are written in batches, off the search's path (SQLite).

What each test guards: a search alone writes nothing; a clean exit (closed or not) loses no
search; a crash loses at most ``SEARCH_BATCH - 1``; reads through the store see what is
pending; a rolled-back transaction keeps it pending; and a forget drops a pending query before
any byte of it is written (forgotten means gone, WAL included).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest

from dreamer.store.shared import SEARCH_BATCH

NOTES = [
    "The staging database host is db-staging-3",
    "Maya prefers concise answers with the code first",
    "The quokka marmalade recipe needs seven cardamom pods",
]


def _logged(ws) -> list[str]:
    """The queries in the searches table, as another reader of the file sees them."""
    db = sqlite3.connect(f"file:{ws.db_path}?mode=ro", uri=True)
    try:
        return [row[0] for row in db.execute("SELECT query FROM searches ORDER BY id")]
    finally:
        db.close()


@pytest.fixture
def noted(ws, now):
    ws.init()
    return [ws.note(text, at=now - timedelta(minutes=10 - n)) for n, text in enumerate(NOTES)]


@pytest.mark.slow
def test_a_search_writes_nothing_until_a_batch_is_full(ws, noted, now):
    for n in range(SEARCH_BATCH - 1):
        ws.search(f"staging database {n}", now=now)
    assert _logged(ws) == []
    ws.search("staging database last", now=now)
    assert len(_logged(ws)) == SEARCH_BATCH


@pytest.mark.slow
def test_reads_through_the_store_see_the_pending_searches(ws, noted, now):
    target = noted[0]
    for minute in range(3):
        ws.search("staging database host", limit=1, now=now + timedelta(minutes=minute))
    crystal = ws.get(target)
    assert crystal.access_count == 3
    assert crystal.last_accessed_at == (now + timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert ws.store.search.search_queries("2000-01-01T00:00:00Z") == ["staging database host"] * 3


def test_a_rolled_back_transaction_keeps_the_searches_pending(ws, noted, now):
    ws.search("concise answers", now=now)
    with pytest.raises(RuntimeError), ws.store.transaction():
        raise RuntimeError("a write that failed")
    assert _logged(ws) == []
    ws.store.settle()
    assert _logged(ws) == ["concise answers"]


def _run(ws, body: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        f"""
        from datetime import datetime, timezone
        from dreamer import Workspace
        now = datetime(2026, 3, 12, 15, 0, tzinfo=timezone.utc)
        ws = Workspace.open({str(ws.root)!r})
        """
    ) + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_a_clean_exit_loses_no_search_even_unclosed(ws, noted):
    ws.close()
    done = _run(ws, "for n in range(3):\n    ws.search(f'staging host {n}', now=now)\n")
    assert done.returncode == 0, done.stderr
    assert _logged(ws) == ["staging host 0", "staging host 1", "staging host 2"]
    assert ws.get(noted[0]).access_count == 3


@pytest.mark.slow
def test_a_crash_loses_at_most_one_batch(ws, noted):
    ws.close()
    asked = SEARCH_BATCH + 3
    done = _run(
        ws,
        f"import os\nfor n in range({asked}):\n    ws.search(f'staging host {{n}}', now=now)\n"
        "os._exit(3)  # no close, no atexit: as a kill would end it\n",
    )
    assert done.returncode == 3, done.stderr
    logged = _logged(ws)
    assert logged == [f"staging host {n}" for n in range(SEARCH_BATCH)]
    assert asked - len(logged) <= SEARCH_BATCH - 1


@pytest.mark.slow
def test_a_forget_drops_a_pending_query_before_a_byte_of_it_is_written(ws, noted, now):
    ws.search("marmalade recipe of the quokka", now=now)  # no note holds these bytes
    ws.search("staging database host", now=now)
    store = ws.store
    assert store.search.drop_searches(lambda query: "marmalade" in query) == 1
    store.settle()
    assert _logged(ws) == ["staging database host"]
    ws.close()
    data = b"".join(path.read_bytes() for path in ws.memory_dir.glob("crystals.db*"))
    assert b"marmalade recipe of the quokka" not in data  # not in the WAL: never written


def test_a_forget_of_the_crystal_leaves_no_pending_query_naming_it(ws, noted, now):
    ws.search("quokka marmalade", now=now)  # pending when the forget starts
    ws.forget([noted[2]], now=now + timedelta(minutes=1))
    for queries in (ws.store.search.search_queries("2000-01-01T00:00:00Z"), _logged(ws)):
        assert len(queries) <= 1 and not any("marmalade" in query for query in queries)
    ws.close()
    data = b"".join(path.read_bytes() for path in ws.memory_dir.glob("crystals.db*"))
    assert b"marmalade" not in data
