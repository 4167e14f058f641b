"""pytest fixtures for tests against a real PostgreSQL (see `pg.py` for how it is started).

Load them from a test module or from `tests/conftest.py` with::

    pytest_plugins = ["pg_fixture"]

- `postgres_server` (session): one server for the whole run, stopped and removed at the end.
- `postgres_url` (session): its superuser URL (database `postgres`), for psycopg 3.
- `pg_database` (function): the URL of a fresh, empty database `test_<random>` on that server,
  dropped after the test (with its connections), so tests never see each other's tables.
  Extensions are not pre-installed: code under test runs `CREATE EXTENSION IF NOT EXISTS vector`.

When PostgreSQL cannot start here (no `pgserver` wheel or no `psycopg`, say), the tests that use
these fixtures are skipped with the reason. Set `DREAMER_REQUIRE_POSTGRES=1` (CI should) to make
that a failure instead, so a broken set-up cannot pass as a run of skips.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from pg import PgServer, PostgresUnavailable, start_postgres, unavailable


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgServer]:
    """A PostgreSQL 16 server with pgvector, started for this test session."""
    try:
        import psycopg  # noqa: F401  (the fixtures hand out psycopg URLs)
    except ImportError:
        unavailable("psycopg is not installed")
    try:
        server = start_postgres(tmp_path_factory.mktemp("postgres"))
    except PostgresUnavailable as exc:
        unavailable(exc.reason)
    with server:
        yield server


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PgServer) -> str:
    """The session server's URL: superuser `postgres`, database `postgres`."""
    return postgres_server.url


@pytest.fixture
def pg_database(postgres_server: PgServer) -> Iterator[str]:
    """The URL of an empty database of this test's own, dropped afterwards."""
    import psycopg
    from psycopg import sql

    name = f"test_{secrets.token_hex(6)}"
    with psycopg.connect(postgres_server.url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield postgres_server.url_for(name)
    finally:
        with psycopg.connect(postgres_server.url, autocommit=True) as admin:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            admin.execute(drop.format(sql.Identifier(name)))
