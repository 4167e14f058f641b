"""The PostgreSQL backend, for fleets: many workspaces in one database, selected by
``memory.store.url = "postgresql://..."`` (or ``DREAM_STORE_URL``).

Each ``PostgresStore`` is one workspace's view (its rows, keyed by the workspace's ``key``) over
its own connection. Writes of one workspace take turns through a transaction-scoped advisory
lock, as SQLite's ``BEGIN IMMEDIATE`` makes them; other workspaces are not held up. Schema
changes happen only through the numbered migrations in ``dreamer.store.postgres.schema``.
psycopg is imported only here (and by the modules this one imports), so a SQLite user never
loads it.
"""

from __future__ import annotations

from pathlib import Path

from dreamer.store.postgres.base import connect
from dreamer.store.postgres.bulk import BulkTables
from dreamer.store.postgres.crystals import CrystalTables
from dreamer.store.postgres.leases import LeaseTables
from dreamer.store.postgres.records import RecordTables
from dreamer.store.postgres.scratch import ScratchTables
from dreamer.store.postgres.search import SearchTables
from dreamer.store.shared import Roles


class PostgresStore(
    Roles, CrystalTables, BulkTables, SearchTables, RecordTables, LeaseTables, ScratchTables
):
    """One workspace's rows in a PostgreSQL database: the ``Store`` interface on Postgres."""

    def __init__(self, url: str, key: str, path: Path):
        conn = connect(url)
        try:
            super().__init__(path, conn, key, lambda: connect(url))
        except BaseException:
            conn.close()
            raise
