"""The SQLite backend, ``memory/crystals.db`` (the default store).

The connection runs in WAL mode with a busy timeout, and every write is a ``BEGIN IMMEDIATE``
transaction, so several processes can write at once without "database is locked" surprises
(``connect.py``). Schema changes happen only through the numbered migrations in
``dreamer.store.sqlite.schema`` (sqlite-utils), which are imported only when one is pending.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dreamer.store.sqlite.connect import connect
from dreamer.store.sqlite.crystals import CrystalTables
from dreamer.store.sqlite.history import HistoryTables
from dreamer.store.sqlite.journal import JournalTables
from dreamer.store.sqlite.records import RecordTables
from dreamer.store.sqlite.search import SearchTables

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


class SQLiteStore(CrystalTables, SearchTables, RecordTables, JournalTables, HistoryTables):
    """An open crystals.db: the ``Store`` interface on SQLite."""

    def __init__(self, path: Path, *, read_only: bool = False):
        super().__init__(path, connect(path, read_only=read_only))

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
