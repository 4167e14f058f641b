"""The test suite's PostgreSQL: the starter is ``pg_server`` (the benchmarks use it too); this
adds what only tests need, ``unavailable`` (skip, or fail in CI)."""

from __future__ import annotations

import os
from typing import NoReturn

from pg_server import PgServer, PostgresUnavailable, start_postgres

__all__ = ["PgServer", "PostgresUnavailable", "start_postgres", "unavailable"]

REQUIRE_ENV = "DREAMER_REQUIRE_POSTGRES"


def unavailable(reason: str, *, allow_module_level: bool = False) -> NoReturn:
    """In a test: skip it (or its module) because PostgreSQL is unavailable for `reason`, or
    fail it when `DREAMER_REQUIRE_POSTGRES` is set, so that in CI a broken set-up cannot pass as
    a run of skips."""
    import pytest

    if os.environ.get(REQUIRE_ENV, "") not in ("", "0"):
        pytest.fail(f"PostgreSQL is required ({REQUIRE_ENV} is set) but {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL unavailable: {reason}", allow_module_level=allow_module_level)
