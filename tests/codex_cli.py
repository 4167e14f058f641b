"""The real Codex CLI for tests, in an isolated home, talking only to a loopback fake.

CI installs a pinned version from npm and exports its path as ``DREAM_CODEX_CLI`` with
``DREAM_REQUIRE_CODEX_CLI=1`` (see .ci/run); locally, install it the same way::

    npm install --prefix /tmp/codex-cli @openai/codex@0.169.0
    export DREAM_CODEX_CLI=/tmp/codex-cli/node_modules/.bin/codex

Without it the tests that need it skip, unless ``DREAM_REQUIRE_CODEX_CLI=1`` makes that a
failure. ``config`` is a user config.toml that points the CLI at the fake Responses API (a
``model_providers`` entry with ``base_url`` and ``wire_api = "responses"``) and turns off its
analytics and update check, so it never touches the real home or the network.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CLI = os.environ.get("DREAM_CODEX_CLI")  # read at import: the autouse fixture clears it
REQUIRED = os.environ.get("DREAM_REQUIRE_CODEX_CLI") == "1"
KEY_VAR = "DREAM_TEST_CODEX_KEY"


def cli_path() -> str:
    """The CLI's path, or a skip (a failure when the CLI is required)."""
    if CLI and Path(CLI).is_file():
        return CLI
    message = "the Codex CLI is not installed (set DREAM_CODEX_CLI; see tests/codex_cli.py)"
    if REQUIRED:
        pytest.fail(message)
    pytest.skip(message)


def config(base_url: str) -> str:
    """A person's config.toml (comments and all) using the fake as its model provider."""
    return f"""# my Codex settings
model = "gpt-fake"   # served by the test's fake
model_provider = "fake"
check_for_update_on_startup = false
mcp_optional_startup_grace_ms = 0   # wait for MCP servers (Codex's default grace is ~1 s)

[analytics]
enabled = false

[model_providers.fake]
name = "fake"
base_url = "{base_url}/v1"
wire_api = "responses"
env_key = "{KEY_VAR}"
"""


def isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    """Environment for the CLI: an isolated HOME and CODEX_HOME; returns CODEX_HOME."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv(KEY_VAR, "sk-test-0000")
    for name in ("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return codex_home
