"""The SQLite backend, ``memory/crystals.db`` (the default store).

The connection runs in WAL mode with a busy timeout, and every write is a ``BEGIN IMMEDIATE``
transaction, so several processes can write at once without "database is locked" surprises
(``connect.py``). Schema changes happen only through the numbered migrations in
``dreamer.store.sqlite.schema`` (sqlite-utils), which are imported only when one is pending.
"""

from __future__ import annotations

from pathlib import Path

from dreamer.store.shared import Roles
from dreamer.store.sqlite.connect import connect
from dreamer.store.sqlite.crystals import CrystalTables
from dreamer.store.sqlite.history import HistoryTables
from dreamer.store.sqlite.journal import JournalTables
from dreamer.store.sqlite.records import RecordTables
from dreamer.store.sqlite.search import SearchTables


class SQLiteStore(Roles, CrystalTables, SearchTables, RecordTables, JournalTables, HistoryTables):
    """An open crystals.db: the ``Store`` interface on SQLite."""

    def __init__(self, path: Path, *, read_only: bool = False):
        super().__init__(path, connect(path, read_only=read_only))
