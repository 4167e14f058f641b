"""Opening ``memory/crystals.db``: WAL mode, a busy timeout, the pending migrations, and one
clear error for a file that is no database or cannot be opened here (``SQLiteStore``'s
connection).

The connection is a ``Connection`` whose statements and fetches raise dreamer's errors for
SQLite's environmental failures (a full disk, a permission, damage the integrity check finds),
as ``errors.translate`` tells them.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamer.errors import StorageIOError, StoreCorrupt, WorkspaceError
from dreamer.store.sqlite import db as sqlite_db
from dreamer.support import failures
from dreamer.support.files import FILE_MODE, refuse_link
from dreamer.support.locks import hold

if TYPE_CHECKING:
    from dreamer.errors import DreamError

BUSY_SECONDS = 30.0  # how long a connection waits for another process's lock
# The crystals table is there and its first page reads. Not count(*): that reads every page of
# an index, slow on a large store.
_READABLE = "SELECT 1 FROM crystals LIMIT 1"


def connect(path: Path, *, read_only: bool = False) -> sqlite_db.Database:
    """The open database at ``path`` (created and migrated if needed); ``read_only``: the file
    is on a read-only file system and is only read."""
    return _connect_read_only(path) if read_only else _connect(path)


def _connect_read_only(path: Path) -> sqlite_db.Database:
    """Open crystals.db on a read-only file system: as an immutable file, never written.

    SQLite in WAL mode cannot even read without its shared-memory file, which a read-only
    mount cannot hold; ``immutable`` reads the file as it is (no other process can change it
    there either).
    """
    if not path.is_file():
        raise WorkspaceError(
            f"{path} is missing and its folder is on a read-only file system; remount it "
            "read-write or use a workspace elsewhere with -w"
        )
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    try:
        conn = _open(path, uri=uri, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA temp_store = MEMORY")  # the search's temp tables, off the mount
        if not sqlite_db.is_current(conn):
            conn.close()
            raise WorkspaceError(
                f"{path} needs a schema upgrade, which a read-only file system does not allow; "
                "remount it read-write and run any dream command once"
            )
        conn.execute(_READABLE).fetchone()
    except sqlite3.Error as e:
        raise _translate(e, path) or StorageIOError(
            f"SQLite could not read {path} ({e}); check the disk"
        ) from e
    return sqlite_db.Database(conn)


def _connect(path: Path) -> sqlite_db.Database:
    refuse_link(path)  # SQLite would follow it, and write its journal beside the target
    existed = path.exists()
    if not existed:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
        except OSError as e:
            raise failures.explain_os_error(e, path) or WorkspaceError(
                f"cannot create {path} ({e.strerror}); check permissions"
            ) from e
    # SQLite takes a file shorter than its header for an empty one, and writes a database over
    # it; no database is 1-511 bytes long (its pages are 512 bytes or more).
    try:
        size = path.stat().st_size if existed else 0
    except OSError as e:
        raise failures.explain_os_error(e, path) or WorkspaceError(
            f"cannot read {path} ({e.strerror}); check permissions"
        ) from e
    if 0 < size < 512:
        raise StoreCorrupt(
            f"{path} is not a SQLite database ({size} bytes, shorter than any); move it aside "
            "to start a fresh one (notes still in memory/scratch.md are indexed again at the "
            "next dream)"
        )
    conn = None
    try:
        conn = _open(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 30000")
        # A file that is no SQLite database fails here, before anything is written to it. Its
        # first bytes are read by SQLite, never by a file of our own: closing any descriptor
        # of the database drops every POSIX lock this process holds on it, a lock SQLite's
        # connections in other threads rely on (another process then writes under them).
        conn.execute("PRAGMA schema_version").fetchone()
        mode = _switch_to_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        # A forget or a redaction must leave no bytes behind: freed pages are zeroed.
        conn.execute("PRAGMA secure_delete = ON")
        # As sqlite-utils' Database sets it (the FTS triggers were written with it on).
        conn.execute("PRAGMA recursive_triggers = ON")
        if mode.lower() != "wal":
            raise StorageIOError(
                f"{path} could not switch to WAL mode (got {mode}); SQLite's WAL needs a local "
                "file system with shared memory: move the workspace off network storage"
            )
        if not sqlite_db.is_current(conn):
            _migrate(conn, path)
        conn.execute(_READABLE).fetchone()
    except BaseException as e:
        if conn is not None:
            conn.close()
        if isinstance(e, sqlite3.Error):
            raise _translate(e, path) or StorageIOError(
                f"SQLite could not open {path} ({e}); run the command again, and check the "
                "disk if it recurs"
            ) from e
        raise
    return sqlite_db.Database(conn)


def _switch_to_wal(conn: sqlite3.Connection) -> str:
    """Switch to WAL mode and return the mode; waits while another process holds the lock.

    Switching needs the database to itself for a moment, and SQLite answers "database is
    locked" at once instead of using the busy timeout, which two processes creating one
    workspace at the same time meet.
    """
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            row = sqlite3.Connection.execute(conn, "PRAGMA journal_mode = WAL").fetchone()
            return str(row[0])
        except sqlite3.OperationalError as e:
            busy = getattr(e, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED")
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    # Here only: a store whose migrations are all applied never imports sqlite-utils.
    import sqlite_utils

    from dreamer.store.sqlite.schema import migrations

    # No sqlite-utils plugins: loading them scans every installed package's entry points,
    # and dreamer's schema must not depend on what else is installed.
    db = sqlite_utils.Database(conn, execute_plugins=False)
    numbered = migrations()
    if not numbered.pending(db):
        return
    # Two processes opening a new workspace at once must not both run migration 1.
    with hold(path.with_name(path.name + ".migrate.lock")):
        numbered.apply(db)


def _translate(error: sqlite3.Error, path: Path) -> DreamError | None:
    """``errors.translate``, loaded with the first error (a note that meets none skips it)."""
    from dreamer.store.sqlite import errors

    return errors.translate(error, path)


def _raise(error: sqlite3.Error, path: Path) -> None:
    found = _translate(error, path)
    if found is not None:
        raise found from error


class Cursor(sqlite3.Cursor):
    """A cursor whose statements and fetches raise dreamer errors for environmental failures."""

    path: Path

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        try:
            super().execute(sql, parameters)
        except sqlite3.Error as e:
            _raise(e, self.path)
            raise
        return self

    def executemany(self, sql: str, seq: Iterable[Any], /) -> Cursor:
        try:
            super().executemany(sql, seq)
        except sqlite3.Error as e:
            _raise(e, self.path)
            raise
        return self

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as e:
            _raise(e, self.path)
            raise

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size if size is not None else self.arraysize)
        except sqlite3.Error as e:
            _raise(e, self.path)
            raise

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as e:
            _raise(e, self.path)
            raise

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.Error as e:
            _raise(e, self.path)
            raise


class Connection(sqlite3.Connection):
    """The backend's connection: every statement goes through a translating ``Cursor``."""

    path: Path

    def cursor(self, factory: Any = None) -> Cursor:  # type: ignore[override]
        cursor = super().cursor(factory or Cursor)
        cursor.path = self.path
        return cursor

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq: Iterable[Any], /) -> Cursor:
        return self.cursor().executemany(sql, seq)

    def executescript(self, script: str, /) -> Cursor:
        cursor = self.cursor()
        try:
            sqlite3.Cursor.executescript(cursor, script)
        except sqlite3.Error as e:
            _raise(e, self.path)
            raise
        return cursor

    def commit(self) -> None:
        try:
            super().commit()
        except sqlite3.Error as e:
            _raise(e, self.path)
            raise


def _open(path: Path, *, uri: str | None = None, **kwargs: Any) -> Connection:
    """Open ``path`` (through ``uri``, a ``file:`` URI for it, if given) with a translating
    connection."""
    if uri is not None:
        kwargs["uri"] = True
    conn = sqlite3.connect(uri or path, factory=Connection, **kwargs)
    conn.path = path
    return conn
