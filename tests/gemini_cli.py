"""The real Gemini CLI for tests, in an isolated home, talking only to a loopback fake.

CI installs a pinned version from npm and exports its path as ``DREAM_GEMINI_CLI`` with
``DREAM_REQUIRE_GEMINI_CLI=1`` (see .ci/run); locally, install it the same way::

    npm install --prefix /tmp/gemini-cli @google/gemini-cli@0.61.0
    export DREAM_GEMINI_CLI=/tmp/gemini-cli/node_modules/.bin/gemini

Without it the tests that need it skip, unless ``DREAM_REQUIRE_GEMINI_CLI=1`` makes that a
failure. ``settings`` is a person's user settings.json: the ``gemini-api-key`` sign-in (the
CLI would otherwise take ``GOOGLE_GEMINI_BASE_URL`` for a gateway sign-in it refuses headless)
and a fixed model (``auto`` would first ask a classifier model which one to use).
``environment`` points the CLI at the fake Gemini API (tests/fake_gemini.py) through
``GOOGLE_GEMINI_BASE_URL``, which it accepts over plain HTTP for 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

CLI = os.environ.get("DREAM_GEMINI_CLI")  # read at import: the autouse fixture clears it
REQUIRED = os.environ.get("DREAM_REQUIRE_GEMINI_CLI") == "1"
MODEL = "gemini-2.5-flash"


def cli_path() -> str:
    """The CLI's path, or a skip (a failure when the CLI is required)."""
    if CLI and Path(CLI).is_file():
        return CLI
    message = "the Gemini CLI is not installed (set DREAM_GEMINI_CLI; see tests/gemini_cli.py)"
    if REQUIRED:
        pytest.fail(message)
    pytest.skip(message)


def settings() -> str:
    """A person's ~/.gemini/settings.json, laid out by hand."""
    data = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "model": {"name": MODEL},
        "general": {"enableAutoUpdate": False},
        "privacy": {"usageStatisticsEnabled": False},
    }
    return json.dumps(data, indent=4) + "\n"


def environment(home: Path, base_url: str) -> dict[str, str]:
    """The CLI's whole environment: the isolated home and the fake API, nothing inherited."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GEMINI_API_KEY": "test-key-0000",
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "XDG_DATA_HOME": os.environ.get("XDG_DATA_HOME", str(home / ".local" / "share")),
        "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(home / ".cache")),
        "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", str(home / "run")),
        "DREAM_SEARCH_WARM_MINUTES": "0",
    }


def run(
    cli: str, project: Path, env: dict[str, str], prompt: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    """One headless turn (``-p``) in ``project``, trusting the folder for this run only."""
    return subprocess.run(
        [cli, "--skip-trust", *extra, "-p", prompt],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
