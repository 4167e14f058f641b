"""The real OpenCode CLI for tests, in an isolated home, talking only to a loopback fake.

CI installs a pinned version from npm and exports its path as ``DREAM_OPENCODE_CLI`` with
``DREAM_REQUIRE_OPENCODE_CLI=1`` (see .ci/run); locally, install it the same way::

    npm install --prefix /tmp/opencode-cli opencode-ai@1.18.33
    export DREAM_OPENCODE_CLI=/tmp/opencode-cli/node_modules/.bin/opencode

Without it the tests that need it skip, unless ``DREAM_REQUIRE_OPENCODE_CLI=1`` makes that a
failure. ``config`` is a person's opencode.json whose ``anthropic`` provider has the fake
Messages API (tests/fake_anthropic.py) as its ``baseURL``. ``environment`` keeps OpenCode off
the network: its bundled model list instead of models.dev, no update check, and an npm
registry on a closed loopback port, offline (OpenCode installs its plugin package into a
config folder that holds a plugin, waits for that, and goes on when it fails).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from fake_anthropic import TEST_KEY

CLI = os.environ.get("DREAM_OPENCODE_CLI")  # read at import: the autouse fixture clears it
REQUIRED = os.environ.get("DREAM_REQUIRE_OPENCODE_CLI") == "1"
MODEL = "claude-sonnet-4-5"


def cli_path() -> str:
    """The CLI's path, or a skip (a failure when the CLI is required)."""
    if CLI and Path(CLI).is_file():
        return CLI
    message = (
        "the OpenCode CLI is not installed (set DREAM_OPENCODE_CLI; see tests/opencode_cli.py)"
    )
    if REQUIRED:
        pytest.fail(message)
    pytest.skip(message)


def config(base_url: str) -> str:
    """A person's ~/.config/opencode/opencode.json using the fake as the Anthropic API."""
    data = {
        "$schema": "https://opencode.ai/config.json",
        "model": f"anthropic/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
        "provider": {"anthropic": {"options": {"baseURL": f"{base_url}/v1", "apiKey": TEST_KEY}}},
    }
    return json.dumps(data, indent=2) + "\n"


def environment(home: Path) -> dict[str, str]:
    """The CLI's whole environment: the isolated home, nothing inherited that reaches out."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_offline": "true",  # fail at once: a config folder with a plugin waits for it
        "npm_config_fetch_retries": "0",
        "XDG_DATA_HOME": os.environ.get("XDG_DATA_HOME", str(home / ".local" / "share")),
        "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(home / ".cache")),
        "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", str(home / "run")),
        "DREAM_SEARCH_WARM_MINUTES": "0",
    }


def run(
    cli: str, project: Path, env: dict[str, str], prompt: str
) -> subprocess.CompletedProcess[str]:
    """One non-interactive session (``opencode run``) in ``project``. The prompt goes word by
    word: OpenCode quotes an argument that holds a space."""
    return subprocess.run(
        [cli, "run", *prompt.split()],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
