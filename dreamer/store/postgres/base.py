"""The PostgreSQL connection every part of the Postgres backend shares, its transactions, the
migrations, and how a float16 vector travels as a pgvector ``vector``."""

from __future__ import annotations

import contextlib
import json
import select
import struct
import threading
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

from dreamer.errors import StoreUnavailable, UsageError
from dreamer.store.postgres.schema import MIGRATIONS
from dreamer.store.shared import PendingSearch, SharedTables, access_counts

Params = Sequence[Any] | Mapping[str, Any]
# pg_advisory_xact_lock(LOCK_CLASS, n): n is a workspace id, or 0 for the migrations.
LOCK_CLASS = 0x44524D  # "DRM"
Mark = tuple[int, int]  # (workspaces.changes, crystal_seq): see change_mark
KEEP_LIMIT = 20_000  # values of one kind kept under a change mark (rank rows: ~4 MB)
HIT_LIMIT = 2_000  # hits' rows kept (texts: a few MB at most)


class Vector(bytes):
    """A crystal's float16 vector (the bytes dreamer makes), sent as a pgvector ``vector``."""


class _VectorDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        values = np.frombuffer(obj, dtype="<f2")
        # float16 -> float32 is exact, and so is the way back: no vector changes on the trip.
        return struct.pack(">HH", len(values), 0) + values.astype(">f4").tobytes()


class _VectorLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> bytes:
        return np.frombuffer(bytes(data)[4:], dtype=">f4").astype("<f2").tobytes()


def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection with the vector type registered, schema migrated."""
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.Error as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise StoreUnavailable(
            f"cannot connect to the PostgreSQL store ({reason}); check memory.store.url "
            "(DREAM_STORE_URL) and that the server is running"
        ) from e
    try:
        _migrate(conn)
        info = TypeInfo.fetch(conn, "vector")
        if info is None:
            raise StoreUnavailable("the pgvector type 'vector' is missing after migration")
        info.register(conn)  # by name too: a binary COPY names its columns' types
        dumper = type("VectorDumper", (_VectorDumper,), {"oid": info.oid})
        conn.adapters.register_dumper(Vector, dumper)
        conn.adapters.register_loader(info.oid, _VectorLoader)
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: psycopg.Connection[Any]) -> None:
    """Apply the migrations not applied yet, one process at a time."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS dreamer_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM dreamer_migrations")}
    if all(name in done for name, _ in MIGRATIONS):
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", [LOCK_CLASS])
        done = {row[0] for row in conn.execute("SELECT name FROM dreamer_migrations")}
        for name, statements in MIGRATIONS:
            if name in done:
                continue
            try:
                for statement in statements:
                    conn.execute(statement)
            except psycopg.errors.InsufficientPrivilege as e:
                raise StoreUnavailable(
                    f"migration {name} needs a privilege the store's user lacks ({e}); run "
                    "'CREATE EXTENSION vector' as a superuser once, or connect as the owner"
                ) from e
            conn.execute(
                "INSERT INTO dreamer_migrations (name, applied_at) VALUES (%s, now()::text)",
                [name],
            )


def workspace_id(conn: psycopg.Connection[Any], key: str) -> int:
    """The id of the workspace named ``key``, registered on first use."""
    conn.execute("INSERT INTO workspaces (key) VALUES (%s) ON CONFLICT (key) DO NOTHING", [key])
    row = conn.execute("SELECT id FROM workspaces WHERE key = %s", [key]).fetchone()
    assert row is not None
    return int(row[0])


def alive(conn: psycopg.Connection[Any]) -> bool:
    """Whether an idle connection is still open: the server did not close it (a restart, an
    administrator, a dropped link it noticed). Reads only what already arrived; sends nothing."""
    if conn.closed or conn.broken:
        return False
    if not hasattr(select, "poll"):
        return True  # no poll (Windows): a dead link shows on the next statement instead
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    for _ in range(4):  # a notice, then the server's farewell, then the end of the stream
        events = poller.poll(0)
        if not events:
            return True
        if events[0][1] & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
            return False
        try:
            conn.pgconn.consume_input()
        except psycopg.OperationalError:
            return False
    return False


Reopen = Callable[[], psycopg.Connection[Any]]


class Connected(SharedTables):
    """One workspace's view of a shared database: every query is filtered by ``self.ws``.

    A connection the server closed (a restart, a dropped link) is replaced by a fresh one from
    ``reopen`` before the next statement is sent, so an open workspace outlives its server.
    A statement that fails on a link that died under it is sent again only where that cannot
    do anything twice: a plain ``SELECT``, or the ``BEGIN`` of a transaction. Any other write
    may have committed before the link went, so its failure is reported, never replayed.
    """

    path: Path

    def __init__(
        self,
        path: Path,
        conn: psycopg.Connection[Any],
        key: str,
        reopen: Reopen | None = None,
    ):
        self.path = path
        self.conn = conn
        self.key = key
        self._reopen = reopen
        self.ws = workspace_id(conn, key)
        # One connection may serve several threads (an in-process agent): statements and
        # transactions take turns, or one thread's statement lands in another's transaction.
        self._lock = threading.RLock()
        self._depth = 0
        self._stems: dict[str, tuple[str, ...]] = {}
        # The change mark a thread's ``reading`` took (read once for its stretch of reads).
        self._pins = threading.local()
        # What was read while the mark was ``_kept_at`` (see ``kept``).
        self._kept: dict[str, dict[Any, Any]] = {}
        self._kept_at: Mark | None = None
        # Searches not written yet (see SEARCH_BATCH): the next write transaction of this
        # store writes them first, and so do close, interpreter exit and every read of the log
        # or of access counts through this store.
        self._pending: list[PendingSearch] = []

    # --- the change mark ------------------------------------------------------------------------

    def change_mark(self) -> Mark | None:
        """A mark that moves with every committed write a search could see, by any connection
        (``workspaces.changes``, bumped by trigger in the writing transaction: migration
        m007), with the highest crystal id. Inside ``reading``, the mark taken when it began.
        None inside a write transaction: what it reads may roll back, and the mark with it."""
        if self._depth:
            return None
        pinned = getattr(self._pins, "mark", None)
        if pinned is not None:
            return cast(Mark, pinned)
        row = self._all("SELECT changes, crystal_seq FROM workspaces WHERE id = %s", [self.ws])
        return (int(row[0][0]), int(row[0][1]))

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A stretch of reads (a search) that may see the store as it was when it began: the
        change mark is read once, and what was kept under it is not read again. A write of
        this store's, or a transaction, reads the mark afresh (``_unpin``)."""
        if getattr(self._pins, "mark", None) is not None or self._depth:
            yield  # nested, or inside a transaction (nothing is kept there)
            return
        self._pins.mark = self.change_mark()
        try:
            yield
        finally:
            self._pins.mark = None

    def _unpin(self) -> None:
        self._pins.mark = None

    def _pinned(self) -> bool:
        """Whether this thread is inside ``reading`` with its mark (no transaction open)."""
        return getattr(self._pins, "mark", None) is not None and not self._depth

    def kept(self, name: str, limit: int = KEEP_LIMIT) -> dict[Any, Any] | None:
        """The values kept under ``name`` while the change mark stays where it is now (emptied
        when it moved); None inside a write transaction, which may roll back (and the mark
        with it), so nothing it reads may be kept."""
        mark = self.change_mark()
        if mark is None:
            return None
        with self._lock:
            if mark != self._kept_at:
                self._kept, self._kept_at = {}, mark
            table = self._kept.get(name)
            if table is None or len(table) > limit:
                table = self._kept[name] = {}
            return table

    def close(self) -> None:
        """Write the searches still pending, then close the connection."""
        with self._lock:
            try:
                if not self.conn.closed:
                    self.settle()
            finally:
                self._closed()
                self.conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction holding this workspace's lock, as SQLite's BEGIN IMMEDIATE does.

        Writers of one workspace take turns (across processes too); other workspaces go on.
        Nested calls join the outer transaction.
        """
        with self._lock:
            self._unpin()
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._execute("BEGIN", (), again=True)
            self._depth = 1
            written = list(self._pending)
            try:
                self.conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_CLASS, self.ws])
                if written:
                    self._write_searches(written)
                yield
            except BaseException:
                self._depth = 0
                with contextlib.suppress(psycopg.Error):
                    self.conn.execute("ROLLBACK")
                raise  # the searches stay pending
            self._depth = 0
            with reported():
                self.conn.execute("COMMIT")
            if written:
                done = {id(entry) for entry in written}
                self._pending = [entry for entry in self._pending if id(entry) not in done]

    def _write_searches(self, batch: list[PendingSearch]) -> None:
        """Insert searches, their gaps and their access counts (inside a transaction). The
        counts change nothing a search reads: ``dreamer.access_only`` keeps the change mark
        where it is for that statement (migration m007), and is cleared after it."""
        with reported():
            self.conn.execute(
                "INSERT INTO searches (workspace, at, query, search_type, result_ids, top_score)"
                " SELECT %s, at, query, kind, ids, top FROM unnest(%s::text[], %s::text[],"
                " %s::text[], %s::text[], %s::float8[]) WITH ORDINALITY"
                " AS b(at, query, kind, ids, top, n) ORDER BY n",
                [
                    self.ws,
                    [at for at, _, _, _, _, _ in batch],
                    [query for _, query, _, _, _, _ in batch],
                    [kind for _, _, kind, _, _, _ in batch],
                    [json.dumps(list(ids)) for _, _, _, ids, _, _ in batch],
                    [top for _, _, _, _, top, _ in batch],
                ],
            )
            gaps = [(at, query, top) for at, query, _, _, top, gap in batch if gap]
            if gaps:
                self.conn.execute(
                    "INSERT INTO gaps (workspace, at, query, top_score) SELECT %s, at, query, top"
                    " FROM unnest(%s::text[], %s::text[], %s::float8[]) WITH ORDINALITY"
                    " AS g(at, query, top, n) ORDER BY n",
                    [self.ws, *([row[n] for row in gaps] for n in range(3))],
                )
            counts = access_counts(batch)
            if counts:
                self.conn.execute(
                    "WITH quiet AS (SELECT set_config('dreamer.access_only', 'on', true))"
                    " UPDATE crystals c SET access_count = c.access_count + a.n,"
                    " last_accessed_at = a.at FROM quiet, unnest(%s::bigint[], %s::int[],"
                    " %s::text[]) AS a(id, n, at) WHERE c.workspace = %s AND c.id = a.id",
                    [
                        list(counts),
                        [n for n, _ in counts.values()],
                        [at for _, at in counts.values()],
                        self.ws,
                    ],
                )
                self.conn.execute("SELECT set_config('dreamer.access_only', '', true)")

    def _execute(self, sql: str, params: Params, *, binary: bool = False, again: bool) -> Any:
        """Send one statement on a live connection (reopened if the server closed it while
        idle); the cursor. ``again``: the statement may be sent a second time, on a fresh
        connection, when the first one died under it (only outside a transaction)."""
        with self._lock:
            if not self._depth and self._reopen is not None and not alive(self.conn):
                self._reconnect()
            try:
                with reported():
                    return self.conn.execute(sql, _params(params), binary=binary)
            except StoreUnavailable:
                lost = self.conn.closed or self.conn.broken
                if not (again and lost and not self._depth and self._reopen is not None):
                    raise
            self._reconnect()
            with reported():
                return self.conn.execute(sql, _params(params), binary=binary)

    def _reconnect(self) -> None:
        """Replace a dead connection with a fresh one (StoreUnavailable while the server is
        down: the next statement tries again)."""
        assert self._reopen is not None
        with contextlib.suppress(psycopg.Error):
            self.conn.close()
        self.conn = self._reopen()
        self._kept, self._kept_at = {}, None

    def _run(self, sql: str, params: Params = (), *, binary: bool = False) -> Any:
        """Execute one statement (taking turns with other threads); the cursor."""
        self._unpin()  # a write, most likely: the next read takes the mark again
        return self._execute(sql, params, binary=binary, again=_reads_only(sql))

    def _all(self, sql: str, params: Params = (), *, binary: bool = False) -> list[Any]:
        """Every row of a query."""
        with self._lock:
            cursor = self._execute(sql, params, binary=binary, again=_reads_only(sql))
            with reported():
                return cursor.fetchall()

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Every row of a statement written with ``?`` placeholders."""
        return self._all(sql.replace("?", "%s"), params)

    def _write(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run one writing statement written with ``?`` placeholders."""
        self._run(sql.replace("?", "%s"), params)

    def _mine(self) -> tuple[str, list[Any]]:
        """This workspace's rows of a shared table."""
        return "workspace = ?", [self.ws]

    def _owned(self, row: dict[str, Any]) -> dict[str, Any]:
        """A row to insert, with this workspace's id."""
        return {"workspace": self.ws, **row}

    def _turns(self) -> Any:
        """The lock statements and transactions take turns with."""
        return self._lock

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row, or None."""
        with self._lock:
            cursor = self._execute(sql, params, again=_reads_only(sql))
            with reported():
                row = cursor.fetchone()
        return row[0] if row else None

    def purge(self) -> None:
        """Reclaim the space of deleted and rewritten rows (VACUUM), as far as Postgres can.

        PostgreSQL keeps no promise that freed bytes are zeroed, and its WAL, replicas and
        backups keep old row versions for as long as they are kept: the documentation says so.
        """
        with self._lock:
            for table in (
                "crystals",
                "tombstones",
                "dreams",
                "searches",
                "gaps",
                "terms",
                "postings",
                "states",
                "hormones",
                "scratch",
            ):
                self.conn.execute(f"VACUUM {table}")


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """psycopg's failures as dreamer's: one line naming the cause, no traceback."""
    try:
        yield
    except psycopg.DataError as e:
        # e.g. a NUL character, which PostgreSQL text cannot hold (SQLite can).
        raise UsageError(f"the PostgreSQL store refused a value: {_first_line(e)}") from e
    except psycopg.OperationalError as e:  # connection lost, server shut down, disk full ...
        raise StoreUnavailable(
            f"the PostgreSQL store failed ({_first_line(e)}); check the server behind "
            "memory.store.url (DREAM_STORE_URL), then retry"
        ) from e


def _reads_only(sql: str) -> bool:
    """Whether a statement only reads, so sending it twice changes nothing. (A ``SELECT`` that
    calls a writing function runs inside a transaction, where nothing is sent twice.)"""
    return sql.lstrip()[:6].upper() == "SELECT"


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _params(params: Params) -> list[Any] | Mapping[str, Any]:
    """Positional parameters as a list, named ones (``%(name)s``) as they are."""
    return params if isinstance(params, Mapping) else list(params)


def float16_blobs(sent: Sequence[bytes | None]) -> list[bytes | None]:
    """Vectors read as ``vector_send(embedding)`` (pgvector's binary form) as the float16 bytes
    dreamer stores, converted all at once: one numpy call per length, not three per row."""
    blobs: list[bytes | None] = [None] * len(sent)
    by_length: dict[int, list[int]] = {}
    for n, data in enumerate(sent):
        if data:
            by_length.setdefault(len(data), []).append(n)
    for length, rows in by_length.items():
        dim = (length - 4) // 4
        # Each is a 4-byte header (dimensions, unused), then big-endian float32 values.
        values = np.frombuffer(b"".join(sent[n] or b"" for n in rows), dtype=">f4")
        flat = values.reshape(len(rows), dim + 1)[:, 1:].astype("<f2").tobytes()
        for k, n in enumerate(rows):
            blobs[n] = flat[2 * dim * k : 2 * dim * (k + 1)]
    return blobs


def vector(blob: bytes | None) -> Vector | None:
    """A blob as a pgvector parameter (None, or empty, as NULL)."""
    return Vector(blob) if blob else None


def marks(values: Sequence[Any]) -> str:
    """``%s, %s, %s`` for as many values."""
    return ", ".join(["%s"] * len(values))


def fold(text: str) -> str:
    """Text as the full-text index reads it: diacritics removed (FTS5's remove_diacritics)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))
