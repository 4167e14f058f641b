"""The real Claude Code CLI for tests, in an isolated home, talking only to a loopback fake.

CI installs a pinned version from npm and exports its path as ``DREAM_CLAUDE_CLI`` with
``DREAM_REQUIRE_CLAUDE_CLI=1`` (see .ci/run); locally, install it the same way::

    npm install --prefix /tmp/claude-cli @anthropic-ai/claude-code@2.1.197
    export DREAM_CLAUDE_CLI=/tmp/claude-cli/node_modules/.bin/claude

Without it the tests that need it skip, unless ``DREAM_REQUIRE_CLAUDE_CLI=1`` makes that a
failure. ``isolate`` points the CLI at a fresh HOME and config folder, at the fake Messages API
(``ANTHROPIC_BASE_URL``) with a test token, and turns its telemetry, updater and other
non-essential traffic off, so it never touches the real home or the network.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CLI = os.environ.get("DREAM_CLAUDE_CLI")  # read at import: the autouse fixture clears it
REQUIRED = os.environ.get("DREAM_REQUIRE_CLAUDE_CLI") == "1"
TOKEN = "sk-ant-oat-test-0000"


def cli_path() -> str:
    """The CLI's path, or a skip (a failure when the CLI is required)."""
    if CLI and Path(CLI).is_file():
        return CLI
    message = "the Claude Code CLI is not installed (set DREAM_CLAUDE_CLI; see tests/claude_cli.py)"
    if REQUIRED:
        pytest.fail(message)
    pytest.skip(message)


def isolate(monkeypatch: pytest.MonkeyPatch, home: Path, base_url: str | None) -> Path:
    """Environment for the CLI: an isolated home, the fake API, no traffic but the fake's."""
    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    for name in ("DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER", "DISABLE_ERROR_REPORTING"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    if base_url is not None:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        # A login token, not an API key: dreamer itself sees no ANTHROPIC_API_KEY.
        monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", TOKEN)
    return home
