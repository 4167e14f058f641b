"""The edges of the PostgreSQL store's reconnect, on the suite's server (no restart): which
dead connections are noticed before a statement is sent, which statements are sent again after
the link died under them (reads only, and never inside a transaction), and what a reconnect
forgets (the values kept under the old connection's change mark)."""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Iterator

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from dreamer.errors import StoreUnavailable
from dreamer.store import open_store
from dreamer.store.postgres.base import Connected, _reads_only, alive, connect

pytestmark = pytest.mark.postgres
pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

# Each statement kills its own connection the first time it runs (a sequence counts the runs,
# and a sequence is not rolled back), as a link that dies while the statement is on the wire.
READ_THAT_DIES_ONCE = (
    "SELECT CASE WHEN nextval('statement_runs') = 1 THEN pg_terminate_backend(pg_backend_pid())"
    " AND pg_sleep(5) IS NULL ELSE true END"
)
WRITE_THAT_DIES = (
    "DO $$ BEGIN PERFORM nextval('statement_runs'); PERFORM pg_terminate_backend(pg_backend_pid());"
    " PERFORM pg_sleep(5); END $$"
)


@pytest.fixture
def store(pg_database, tmp_path):
    with psycopg.connect(pg_database, autocommit=True) as admin:
        admin.execute("CREATE SEQUENCE statement_runs")
    store = open_store(tmp_path / "ws" / "memory.db", url=pg_database, key="edges")
    yield store
    store.close()


def runs(url: str) -> int:
    """How many times a statement using the ``statement_runs`` sequence was executed."""
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute("SELECT last_value, is_called FROM statement_runs").fetchone()
    assert row is not None
    return int(row[0]) if row[1] else 0


def drop(url: str, conn: psycopg.Connection) -> None:
    """End ``conn``'s server process, as an administrator or a dropped link does, and wait until
    the end of its stream reached the client (its farewell may come a moment earlier)."""
    pid = conn.info.backend_pid
    with psycopg.connect(url, autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
    closed = select.poll()
    closed.register(conn.fileno(), select.POLLRDHUP)
    assert closed.poll(10_000), "the server never closed the connection"


def test_a_connection_the_server_dropped_while_idle_is_replaced_before_the_next_statement(
    store, pg_database
):
    store.set_meta("colour", "teal")
    first = store.conn
    drop(pg_database, first)
    assert store.get_meta("colour") == "teal"  # a read
    assert store.conn is not first and not store.conn.closed
    second = store.conn
    drop(pg_database, second)
    store.set_meta("colour", "amber")  # a write: sent once, on the fresh connection
    assert store.conn is not second
    assert store.get_meta("colour") == "amber"


def test_a_read_whose_link_died_under_it_is_sent_again_on_a_fresh_connection(store, pg_database):
    first = store.conn
    assert store._all(READ_THAT_DIES_ONCE) == [(True,)]
    assert runs(pg_database) == 2  # once on the connection it killed, once on the new one
    assert store.conn is not first


def test_a_read_sent_again_keeps_its_parameters(store, pg_database):
    sql = READ_THAT_DIES_ONCE.replace("ELSE true END", "ELSE %s = 'teal' END")
    assert store._all(sql, ["teal"]) == [(True,)]
    assert runs(pg_database) == 2


def test_a_read_written_in_lower_case_after_spaces_is_a_read_too(store, pg_database):
    assert store._all("\n   " + READ_THAT_DIES_ONCE.lower()) == [(True,)]
    assert runs(pg_database) == 2


def test_a_write_whose_link_died_under_it_is_reported_and_never_sent_again(store, pg_database):
    with pytest.raises(StoreUnavailable, match="DREAM_STORE_URL"):
        store._run(WRITE_THAT_DIES)
    assert runs(pg_database) == 1  # it may have committed: sending it again could do it twice
    store.set_meta("after", "yes")  # the next statement reconnects
    assert store.get_meta("after") == "yes"


def test_inside_a_transaction_a_read_whose_link_died_is_not_sent_again(store, pg_database):
    with pytest.raises(StoreUnavailable), store.transaction():
        store._all(READ_THAT_DIES_ONCE)
    assert runs(pg_database) == 1
    store.set_meta("after", "yes")
    assert store.get_meta("after") == "yes"


def test_a_connection_dropped_before_a_transaction_is_replaced_before_it_begins(store, pg_database):
    drop(pg_database, store.conn)
    with store.transaction():
        store.set_meta("inside", "yes")
    assert store.get_meta("inside") == "yes"


def test_without_a_way_to_reopen_a_dead_connection_the_failure_is_reported(pg_database, tmp_path):
    conn = connect(pg_database)
    tables = Connected(tmp_path / "memory.db", conn, "no-reopen")
    try:
        drop(pg_database, conn)
        with pytest.raises(StoreUnavailable, match="DREAM_STORE_URL"):
            tables._all("SELECT 1")
        assert tables.conn is conn
    finally:
        conn.close()


def test_without_a_way_to_reopen_a_read_that_died_is_reported(pg_database, tmp_path):
    with psycopg.connect(pg_database, autocommit=True) as admin:
        admin.execute("CREATE SEQUENCE statement_runs")
    conn = connect(pg_database)
    tables = Connected(tmp_path / "memory.db", conn, "no-reopen")
    try:
        with pytest.raises(StoreUnavailable):
            tables._all(READ_THAT_DIES_ONCE)
        assert runs(pg_database) == 1
    finally:
        conn.close()


def test_what_was_kept_under_the_old_connection_is_not_read_after_a_reconnect(store, pg_database):
    store.kept("words")["teal"] = 3
    assert store.kept("words") == {"teal": 3}  # the mark did not move
    drop(pg_database, store.conn)
    assert store.kept("words") == {}


def test_alive_tells_an_open_connection_from_a_closed_or_dropped_one(pg_database):
    with psycopg.connect(pg_database, autocommit=True) as conn:
        assert alive(conn)
        drop(pg_database, conn)
        assert not alive(conn)
    closed = psycopg.connect(pg_database, autocommit=True)
    closed.close()
    assert not alive(closed)


@contextlib.contextmanager
def over_tcp(url: str) -> Iterator[str]:
    """``url`` reached over TCP, through a relay to the server's Unix socket: a link the server
    drops ends with the end of the stream only, where a Unix socket also hangs up."""
    params = conninfo_to_dict(url)
    path = f"{params['host']}/.s.PGSQL.{params['port']}"
    listener = socket.create_server(("127.0.0.1", 0))

    def pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = listener.accept()
                server = socket.socket(socket.AF_UNIX)
                server.connect(path)
                for pair in ((client, server), (server, client)):
                    threading.Thread(target=pump, args=pair, daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield make_conninfo(url, host="127.0.0.1", port=listener.getsockname()[1])
    finally:
        listener.close()


def test_a_tcp_link_the_server_dropped_is_told_from_an_open_one(pg_database):
    with over_tcp(pg_database) as url, psycopg.connect(url, autocommit=True) as conn:
        assert alive(conn)
        assert conn.execute("SELECT 1").fetchone() == (1,)
        drop(pg_database, conn)
        assert not alive(conn)


def test_without_poll_an_open_connection_counts_as_alive(pg_database, monkeypatch):
    # Windows has no poll: a dead link shows on the next statement, which reports it.
    monkeypatch.delattr(select, "poll")
    with psycopg.connect(pg_database, autocommit=True) as conn:
        assert alive(conn)
        conn.close()
        assert not alive(conn)


class _Flooded:
    """A poll that finds data waiting every time, as on a socket that never stops receiving."""

    def register(self, fd: int, events: int) -> None:
        self.fd = fd

    def poll(self, timeout: int) -> list[tuple[int, int]]:
        return [(self.fd, select.POLLIN)]


def test_a_connection_that_never_stops_receiving_is_not_kept(pg_database, monkeypatch):
    # Four reads each found more: whatever streams in (a server in a loop, a broken relay) is
    # not a link to keep; the next statement takes a fresh one.
    with psycopg.connect(pg_database, autocommit=True) as conn:
        assert alive(conn)
        monkeypatch.setattr(select, "poll", _Flooded)
        assert not alive(conn)


def test_a_notification_waiting_on_an_idle_connection_is_no_sign_of_death(pg_database):
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("LISTEN news")
        with psycopg.connect(pg_database, autocommit=True) as other:
            other.execute("NOTIFY news, 'hello'")
        readable = select.poll()
        readable.register(conn.fileno(), select.POLLIN)
        assert readable.poll(10_000)
        assert alive(conn)
        assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize(
    ("sql", "reads"),
    [
        ("SELECT 1", True),
        ("  select id FROM crystals", True),
        ("\n\tSelect 1", True),
        ("INSERT INTO meta VALUES (1)", False),
        ("WITH x AS (DELETE FROM meta RETURNING 1) SELECT 1", False),
        ("BEGIN", False),
        ("SELEC", False),
    ],
    ids=["upper", "spaces", "newline", "insert", "with", "begin", "short"],
)
def test_only_a_plain_select_counts_as_a_read(sql, reads):
    assert _reads_only(sql) is reads


def test_a_statement_keeps_its_transfer_format_first_and_when_sent_again(store, pg_database):
    """Rows asked for in binary (vectors) come in binary, on the first send and the one sent
    again after the link died; rows asked for as text come as text."""
    assert store._execute("SELECT 1", (), binary=True, again=True).pgresult.fformat(0) == 1
    assert store._execute("SELECT 1", (), again=True).pgresult.fformat(0) == 0
    assert store._run("SELECT 1").pgresult.fformat(0) == 0
    again = store._execute(READ_THAT_DIES_ONCE, (), binary=True, again=True)
    assert runs(pg_database) == 2 and again.pgresult.fformat(0) == 1
