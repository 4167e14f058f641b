"""Shared fixtures: a fresh workspace on disk, a CLI runner, a fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from dreamer import Workspace

NOW = datetime(2026, 3, 12, 14, 30, tzinfo=UTC)

# The fixtures of tests/pg_fixture.py: a test that asks for one needs the suite's PostgreSQL.
POSTGRES_FIXTURES = frozenset({"postgres_server", "postgres_url", "pg_database"})


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put every test that uses the suite's PostgreSQL in the `postgres` tier, whatever its file
    (a test that asks for the database through `request.getfixturevalue` carries the mark
    itself). The tests of `dream bench` live with the benchmarks (benchmarks/tests/)."""
    for item in items:
        if POSTGRES_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never see the developer's own key or workspace, nor write to their data or cache
    folders."""
    for name in (
        "ANTHROPIC_API_KEY",
        "DREAM_WORKSPACE",
        "DREAM_SYNTHESIZER",
        "DREAM_MODEL",
        "DREAM_CLAUDE_CLI",  # tests that run the real CLI read it at import (tests/claude_cli.py)
        "DREAM_CODEX_CLI",  # likewise (tests/codex_cli.py)
        "DREAM_GEMINI_CLI",  # likewise (tests/gemini_cli.py)
        "DREAM_OPENCODE_CLI",  # likewise (tests/opencode_cli.py)
        "XDG_CONFIG_HOME",
        "GEMINI_CLI_HOME",
        "CODEX_HOME",
        "CLAUDE_CONFIG_DIR",  # an install's user scope follows it: never the developer's own
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB",
        "DREAM_HOOKS_DISABLED",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data-home")))
    # One cache per test session (the embedder's BPE table is built there once)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache-home"))
    # A search door per test: a `dream serve` one test starts never answers another's search.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("run")))
    # A `dream search` a test runs leaves no door behind it (a process that outlives the
    # test); tests/service/test_search_door_left.py sets it where that door is what it tests.
    monkeypatch.setenv("DREAM_SEARCH_WARM_MINUTES", "0")


@pytest.fixture
def ws(tmp_path) -> Workspace:
    """A fresh workspace in a temporary folder."""
    workspace = Workspace.open(tmp_path / "ws")
    yield workspace
    workspace.close()


@pytest.fixture
def runner() -> CliRunner:
    """A Click runner for `dream` commands."""
    return CliRunner()


@pytest.fixture
def now() -> datetime:
    """A fixed moment for core functions that take `now`."""
    return NOW
