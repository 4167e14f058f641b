"""Storage: the ``Store`` protocol, its roles and its backends. All SQL lives in this package.

``open_store(path)`` opens the default backend (SQLite, ``memory/crystals.db``);
``open_store(path, url="postgresql://...", key=...)`` one workspace's rows in PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dreamer.config import STORE_SCHEMES
from dreamer.errors import StoreUnavailable, UsageError
from dreamer.store.base import Store
from dreamer.store.crystal import NewCrystal
from dreamer.store.identity import content_hash
from dreamer.store.rows import Crystal

if TYPE_CHECKING:  # psycopg loads only when a PostgreSQL URL is used
    from dreamer.store.postgres.jobs import JobQueue

__all__ = [
    "Crystal",
    "NewCrystal",
    "Store",
    "content_hash",
    "is_postgres",
    "open_jobs",
    "open_store",
]


POSTGRES_EXTRA = "pip install 'dreamer-memory[postgres]'"


def is_postgres(url: str | None) -> bool:
    """Whether a store URL names a PostgreSQL database."""
    return bool(url) and str(url).startswith(STORE_SCHEMES)


def _require_psycopg() -> None:
    try:
        import psycopg  # noqa: F401  (only to say what is missing, before anything else)
    except ImportError:
        raise StoreUnavailable(
            f"a PostgreSQL URL was given but psycopg is not installed; "
            f"install it with {POSTGRES_EXTRA}"
        ) from None


def open_jobs(url: str) -> JobQueue:
    """The shared jobs table of ``dream worker`` in the PostgreSQL database at ``url``."""
    if not is_postgres(url):
        raise UsageError(f"the jobs database must be a postgresql:// URL, not {url!r}")
    _require_psycopg()
    from dreamer.store.postgres.jobs import JobQueue

    return JobQueue(url)


def open_store(
    path: Path,
    *,
    url: str | None = None,
    key: str | None = None,
    read_only: bool = False,
) -> Store:
    """Open (creating and migrating if needed) the store at ``path``, or, given a PostgreSQL
    ``url``, the rows of workspace ``key`` (default: ``path``'s workspace folder) there.

    ``read_only``: ``path`` is on a read-only file system; the SQLite file is only read."""
    if is_postgres(url):
        _require_psycopg()
        from dreamer.store.postgres.store import PostgresStore

        return PostgresStore(str(url), key or str(path.resolve().parent.parent), path)
    from dreamer.store.sqlite.store import SQLiteStore

    return SQLiteStore(path, read_only=read_only)
