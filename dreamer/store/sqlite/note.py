"""The store a note opens: ``memory/crystals.db`` with the table groups a note writes.

A note adds a crystal (with its audit row) and hormone rows, and reads meta; that is
``CrystalWrites`` and ``RecordTables`` over the same connection ``SQLiteStore`` opens. The
first use of any other part of the ``Store`` interface (a search, a crystal read, the journal,
history) makes the store an ``SQLiteStore``: the same object and connection, with every table
group. A fresh ``dream note`` so compiles and runs none of the rest (without ``.pyc`` files,
compiling it was a tenth of the process's time); any other caller sees a complete store.
"""

from __future__ import annotations

from pathlib import Path

from dreamer.store.sqlite.connect import connect
from dreamer.store.sqlite.crystal_writes import CrystalWrites
from dreamer.store.sqlite.records import RecordTables

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:
    from typing import Any


class NoteStore(CrystalWrites, RecordTables):
    """An open crystals.db that becomes an ``SQLiteStore`` on first use of anything else."""

    def __init__(self, path: Path, *, read_only: bool = False):
        super().__init__(path, connect(path, read_only=read_only))

    def __getattr__(self, name: str) -> Any:
        # Python asks here only for a name the class lacks. Dunder names are probes (copy,
        # pickle) that must not complete the store; any other name completes it and is asked
        # again, and a name SQLiteStore lacks too is an AttributeError, as on any object.
        if name.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        from dreamer.store.sqlite.store import SQLiteStore  # here: what a note never uses

        self.__class__ = SQLiteStore  # type: ignore[assignment]  # a subclass of neither
        return getattr(self, name)
