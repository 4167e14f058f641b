"""An open workspace on PostgreSQL outlives its server: after a restart or a dropped connection
the next note and search go through on a fresh connection, and no note is stored twice."""

from __future__ import annotations

import time

import psycopg
import pytest
from pg import start_postgres, unavailable
from pg_server import PostgresUnavailable

from dreamer import Workspace
from dreamer.errors import StoreUnavailable

pytestmark = pytest.mark.postgres  # starts a PostgreSQL server of its own, to restart it


@pytest.fixture
def server(tmp_path_factory):
    """A server of this test's own: restarting the suite's would cut every other test off."""
    try:
        server = start_postgres(tmp_path_factory.mktemp("pg-restart"))
    except PostgresUnavailable as exc:
        unavailable(exc.reason)
    with server:
        yield server


def texts(ws):
    return sorted(c.text for c in ws.store.crystals.select())


def test_a_note_after_the_server_restarts_succeeds_within_seconds(server, tmp_path, now):
    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": server.url}) as ws:
        ws.note("the deploy key rotates on Mondays", at=now)
        server.restart()
        started = time.monotonic()
        ws.note("the staging database moved to eu-west", at=now)
        assert time.monotonic() - started < 5
        assert [hit.text for hit in ws.search("staging database", now=now)][:1] == [
            "the staging database moved to eu-west"
        ]
        assert texts(ws) == [
            "the deploy key rotates on Mondays",
            "the staging database moved to eu-west",
        ]
        assert len(ws.store.scratch_rows()) == 2  # each note once


def test_a_dropped_connection_is_replaced_and_nothing_is_written_twice(server, tmp_path, now):
    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": server.url}) as ws:
        ws.note("first note before the drop", at=now)
        pid = ws.store.conn.info.backend_pid
        with psycopg.connect(server.url, autocommit=True) as admin:
            assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
            # Terminating is asynchronous: the drop happened while the workspace was idle
            # once the backend is gone (a write sent before that may have committed, and is
            # reported, not replayed).
            deadline = time.monotonic() + 10
            while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
                assert time.monotonic() < deadline, "the backend did not end"
                time.sleep(0.01)
        ws.note("second note after the drop", at=now)
        assert [hit.text for hit in ws.search("second note", now=now)][:1] == [
            "second note after the drop"
        ]
        assert texts(ws) == ["first note before the drop", "second note after the drop"]
        assert len(ws.store.scratch_rows()) == 2


def test_while_the_server_is_down_each_call_says_so_and_the_next_one_reconnects(
    server, tmp_path, now
):
    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": server.url}) as ws:
        ws.note("a note before the outage", at=now)
        server.halt()
        with pytest.raises(StoreUnavailable, match="DREAM_STORE_URL"):
            ws.note("a note during the outage", at=now)
        with pytest.raises(StoreUnavailable, match="DREAM_STORE_URL"):
            ws.search("outage", now=now)
        server.resume()
        ws.note("a note after the outage", at=now)
        assert texts(ws) == ["a note after the outage", "a note before the outage"]
