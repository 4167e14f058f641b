"""Fixtures of the benchmarks' tests: the same clean environment, workspace, runner and clock
as dreamer's own tests (tests/conftest.py), and its PostgreSQL fixtures (tests/pg_fixture.py).

The benchmarks are tested from a clone of dreamer, beside its tests: the repository's tests/
folder goes on the path for the PostgreSQL fixtures and their starter (one copy, the tests').
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamer import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

NOW = datetime(2026, 3, 12, 14, 30, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never see the developer's own key or workspace, nor write to their data or cache
    folders, and a search leaves no door process behind."""
    for name in ("ANTHROPIC_API_KEY", "DREAM_WORKSPACE", "DREAM_SYNTHESIZER", "DREAM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "DREAM_HOOKS_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data-home")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache-home"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("run")))
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
