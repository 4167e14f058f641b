"""SQLite's failures told truthfully: a full disk is not a damaged database.

Every connection of the SQLite backend (``connect.py``) turns SQLite's environmental errors
into dreamer errors through ``translate``, loaded with the first such error: SQLITE_FULL is a
full disk (or the file-size limit), SQLITE_READONLY/CANTOPEN/PERM a permission (or the
open-files limit), SQLITE_IOERR the disk (or the file-size limit, which SQLite reports as a
write error). Only SQLITE_CORRUPT and SQLITE_NOTADB can mean damage, and they are called damage
only when ``PRAGMA quick_check``, run on a fresh connection, says so. Constraint violations and
the like are not translated: they are the store's own business (or bugs).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from dreamer.errors import DreamError, StorageIOError, StoreCorrupt, WorkspaceError
from dreamer.support import failures


def integrity_problem(path: Path) -> str | None:
    """The first problem ``PRAGMA quick_check`` finds in ``path``; None if it finds none (or
    cannot run at all, which is no evidence of damage)."""
    try:
        check = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error:
        return None
    try:
        rows = check.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as e:
        name = getattr(e, "sqlite_errorname", "")
        return str(e) if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) else None
    finally:
        check.close()
    found = [row[0] for row in rows if row[0] != "ok"]
    return found[0] if found else None


def damaged(path: Path, problem: str) -> StoreCorrupt:
    """The error for a database the integrity check finds damaged."""
    return StoreCorrupt(
        f"{path} is damaged (PRAGMA quick_check: {problem}); restore it from a backup, salvage "
        f"it ('sqlite3 {path} .recover | sqlite3 recovered.db', then put recovered.db in its "
        "place), or move it aside to start a fresh one (notes still in memory/scratch.md are "
        "indexed again at the next dream)"
    )


def translate(error: sqlite3.Error, path: Path) -> DreamError | None:
    """The dreamer error a SQLite error stands for, or None when it is not environmental."""
    name = getattr(error, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_FULL"):
        if failures.file_size_limit() is not None:
            return failures.size_limit(path)
        return failures.disk_full(path)
    if name.startswith("SQLITE_IOERR"):
        if failures.file_size_limit() is not None:
            return failures.size_limit(path)
        if failures.free_bytes(path.parent) == 0:
            return failures.disk_full(path)
        return StorageIOError(
            f"the disk failed reading or writing {path} ({error}); check the disk (e.g. "
            "'dmesg') and run again"
        )
    if name.startswith("SQLITE_CANTOPEN"):
        # SQLite keeps no errno: judge by what is around. A database is three files (with its
        # WAL and shared memory), so near the open-files limit is the limit.
        limit = failures.open_files_limit()
        if limit is not None and _open_files() + 3 >= limit:
            return failures.too_many_open(path)
        if not _accessible(path):
            return failures.denied(path)
        return StorageIOError(
            f"SQLite could not open {path} ({error}); check that the disk is mounted and "
            "readable, and run the command again"
        )
    if name.startswith(("SQLITE_READONLY", "SQLITE_PERM", "SQLITE_AUTH")):
        return failures.denied(path)
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return WorkspaceError(
            f"{path} stayed locked by another process past the 30 s busy timeout; find it "
            f"(e.g. 'fuser {path}') or run the command again"
        )
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        problem = integrity_problem(path)
        if problem is not None:
            return damaged(path, problem)
        # SQLite's own words ("malformed") would claim what the check just did not find.
        return StorageIOError(
            f"SQLite could not read {path}, but its integrity check (PRAGMA quick_check) "
            "finds no damage; run the command again, and check the disk (e.g. 'dmesg') if "
            "it recurs"
        )
    return None


def _accessible(path: Path) -> bool:
    """Whether this user may read and write ``path`` (or create it) and its folder."""
    folder_ok = os.access(path.parent, os.R_OK | os.W_OK | os.X_OK)
    return folder_ok and (not path.exists() or os.access(path, os.R_OK | os.W_OK))


def _open_files() -> int:
    """How many files this process has open (-1 when unknown)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError as e:
        # Listing takes a file itself: failing for want of one is the answer.
        return 1 << 30 if e.errno in (errno.EMFILE, errno.ENFILE) else -1
