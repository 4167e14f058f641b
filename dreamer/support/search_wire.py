"""The search door's address and what both of its sides must agree on.

``dream serve`` opens the door (``dreamer.service.search_server``); a fresh ``dream search``
knocks (``dreamer.memory.search_client``). This module is what they share, and it stays cheap to
import: the knocking process must not pay for what the door saves it.

The exchange, one JSON line each way at each step::

    search  -> door    the request: versions, settings variables, workspace, query, limit, type
    door    -> search  {"ready": true} (the door will search now) or {"declined": why}
    search  -> door    {"go": true}: from here the search waits for the answer, however long
    door    -> search  {"hits": [...]} or {"failed": why}

The ``go`` step is what makes a time limit safe: the searching process waits at most
``BUDGET`` seconds for ``ready``, then searches by itself; the door searches (and logs the
search) only after ``go``, which a process that gave up never sends. So a search is logged
once, whoever answers it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from dreamer.support.places import runtime_dir

PROTOCOL = 1
SOCKET_NAME = "search.sock"
LOCK_NAME = "search.lock"
# Seconds a search waits for the door to connect and say ready; past it, it searches itself.
BUDGET = 3.0
# A request's longest line: a query given on a command line is at most 128 KiB on Linux.
MAX_REQUEST_BYTES = 1 << 20
# The settings read from variables outside DREAM_* (tests/service/test_search_door.py keeps the list
# in step with dreamer.config), and which of them are keys.
OTHER_SETTINGS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")
API_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
# AF_UNIX's sun_path holds 108 bytes on Linux and 104 on macOS and the BSDs, NUL included.
MAX_PATH_BYTES = 107 if sys.platform.startswith("linux") else 103


def available() -> bool:
    """Whether this platform has Unix sockets the door can use (not Windows)."""
    return os.name == "posix"


def socket_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where this user's door listens (see ``dreamer.support.places.runtime_dir``)."""
    return runtime_dir(environ) / SOCKET_NAME


def too_long(path: Path) -> bool:
    """Whether ``path`` is too long to name a Unix socket on this platform."""
    return len(os.fsencode(path)) > MAX_PATH_BYTES


def settings_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables a search's settings are read from, the API keys masked.

    The door opens the workspace with these, not with its own: the settings are exactly
    those of the asking process (``DREAM_WORKSPACE`` is resolved before asking). A search
    never uses an API key, only whether the setting is valid (blank is an error), so a key
    travels as ``"set"`` and a blank one as itself.
    """
    env = {name: value for name, value in environ.items() if is_setting(name)}
    for name in API_KEYS:
        if env.get(name, "").strip():
            env[name] = "set"
    return env


def is_setting(name: str) -> bool:
    """Whether ``name`` is a variable dreamer's settings read (``dreamer.config``)."""
    if name.startswith("DREAM_"):
        return name != "DREAM_WORKSPACE"
    return name in OTHER_SETTINGS


def package_dir() -> str:
    """The folder dreamer's code is imported from: both sides must run the same copy."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
