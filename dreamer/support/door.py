"""The search door's address and what both of its sides must agree on.

``dream serve`` opens the door (``dreamer.service.door``); a fresh ``dream search`` knocks
(``dreamer.cli.door``). This module is what they share, and it stays cheap to import: the
knocking process must not pay for what the door saves it.

The exchange, one JSON line each way at each step::

    search  -> door    the request: versions, DREAM_* settings, workspace, query, limit, type
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
    """The DREAM_* variables that shape a search's answer (the workspace is resolved apart)."""
    return {
        name: value
        for name, value in environ.items()
        if name.startswith("DREAM_") and name != "DREAM_WORKSPACE"
    }


def package_dir() -> str:
    """The folder dreamer's code is imported from: both sides must run the same copy."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
