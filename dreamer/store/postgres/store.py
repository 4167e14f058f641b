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
from typing import TYPE_CHECKING

from dreamer.store.postgres.base import connect
from dreamer.store.postgres.bulk import BulkTables
from dreamer.store.postgres.crystals import CrystalTables
from dreamer.store.postgres.leases import LeaseTables
from dreamer.store.postgres.records import RecordTables
from dreamer.store.postgres.scratch import ScratchTables
from dreamer.store.postgres.search import SearchTables

if TYPE_CHECKING:
    from dreamer.store.base import (
        Crystals,
        Forgetting,
        History,
        Hormones,
        Journal,
        Records,
        Search,
        Vectors,
    )


class PostgresStore(
    CrystalTables, BulkTables, SearchTables, RecordTables, LeaseTables, ScratchTables
):
    """One workspace's rows in a PostgreSQL database: the ``Store`` interface on Postgres."""

    def __init__(self, url: str, key: str, path: Path):
        conn = connect(url)
        try:
            super().__init__(path, conn, key)
        except BaseException:
            conn.close()
            raise

    @property
    def crystals(self) -> Crystals:
        """This store, as its Crystals role."""
        return self

    @property
    def forgetting(self) -> Forgetting:
        """This store, as its Forgetting role."""
        return self

    @property
    def vectors(self) -> Vectors:
        """This store, as its Vectors role."""
        return self

    @property
    def search(self) -> Search:
        """This store, as its Search role."""
        return self

    @property
    def records(self) -> Records:
        """This store, as its Records role."""
        return self

    @property
    def hormones(self) -> Hormones:
        """This store, as its Hormones role."""
        return self

    @property
    def journal(self) -> Journal:
        """This store, as its Journal role."""
        return self

    @property
    def history(self) -> History:
        """This store, as its History role."""
        return self
