"""The connection wrapper the SQLite backend uses at run time, and the schema it expects.

sqlite-utils runs dreamer's numbered migrations (``dreamer.store.sqlite.schema``), but importing it
brings numpy, dateutil and a regex-heavy SQL parser, which ``dream note`` and ``dream search``
would pay for nothing once the schema is current. So a
connection is wrapped in this ``Database`` (the two methods of sqlite-utils' that the store
uses), and sqlite-utils is imported only when a migration is pending: ``is_current`` compares
the names of ``schema.MIGRATIONS`` with the ones the database has applied.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from dreamer.store.sqlite.schema import MIGRATION_SET, MIGRATIONS


class Database:
    """An open SQLite connection with sqlite-utils' ``execute`` (what the store calls)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def execute(self, sql: str, parameters: Any = None) -> sqlite3.Cursor:
        """Run one statement, as ``sqlite_utils.Database.execute`` does."""
        if parameters is not None:
            return self.conn.execute(sql, parameters)
        return self.conn.execute(sql)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


def is_current(conn: sqlite3.Connection) -> bool:
    """True when every migration in ``MIGRATIONS`` is applied (no sqlite-utils needed)."""
    try:
        rows = conn.execute(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = ?", [MIGRATION_SET]
        ).fetchall()
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return False
        raise
    return {m.__name__ for m in MIGRATIONS} <= {row[0] for row in rows}
