"""The whole ``Store`` interface on SQLite: ``SQLiteStore`` with the table groups a note never
uses (crystal reads, forgetting and vectors; search; the journal; history), which a
``SQLiteStore`` becomes on the first use of any of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dreamer.store.sqlite.crystals import CrystalTables
from dreamer.store.sqlite.history import HistoryTables
from dreamer.store.sqlite.journal import JournalTables
from dreamer.store.sqlite.search import SearchTables
from dreamer.store.sqlite.store import SQLiteStore

if TYPE_CHECKING:
    from dreamer.store.base import Store


class CompleteStore(SQLiteStore, CrystalTables, SearchTables, JournalTables, HistoryTables):
    """An open crystals.db with every table group."""


if TYPE_CHECKING:  # the type checker holds every method to the contract's signature

    def _contract(store: CompleteStore) -> Store:
        return store
