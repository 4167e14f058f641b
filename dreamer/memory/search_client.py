"""A fresh ``dream search`` (or a recall hook) asks a running search door first.

The door (``dream serve``'s, or the one an earlier search left) has numpy and the embedder
loaded; this process then needs neither, nor the store or the search code: it resolves the
workspace as the CLI does, hands the query over a Unix socket, and ``dream search`` prints
the hits as it prints its own (``dreamer.agents.hooks`` turns them into recalled context).
Whenever the door is not there or cannot answer exactly as this process would
(``dreamer.service.search_server`` says when it declines), ``ask`` returns None and the caller
searches by itself: same output, only slower. The exchange is in ``dreamer.support.search_wire``.

When no door listens (no serve), a search that ran by itself leaves one open in the
background (``leave_open``: ``dream door``, for ``memory.search.warmMinutes``), so the
searches after it are answered warm too.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

from dreamer.memory import location
from dreamer.support import search_wire
from dreamer.support.version import __version__


def ask(
    workspace: str | None, query: str, limit: int, search_type: str
) -> list[dict[str, Any]] | None:
    """The hits (as ``Hit.to_dict``) a running serve found; None when it did not answer."""
    if not search_wire.available():
        return None
    path = search_wire.socket_path()
    if search_wire.too_long(path):
        return None
    try:
        root = location.resolve(workspace)[0]
        memory = os.stat(root / "memory")  # no workspace: this process says so itself
        folder = os.stat(path.parent)
    except (OSError, ValueError):  # whatever is wrong, this process meets it and says so
        return None
    if folder.st_uid != os.geteuid() or folder.st_mode & 0o077:
        return None  # not a folder only this user can enter: not our door
    request = {
        "protocol": search_wire.PROTOCOL,
        "version": __version__,
        "package": search_wire.package_dir(),
        "env": search_wire.settings_env(os.environ),
        "root": str(root),
        "memory": [memory.st_dev, memory.st_ino],
        "query": query,
        "limit": limit,
        "search_type": search_type,
    }
    line = json.dumps(request).encode("ascii") + b"\n"  # ASCII escapes keep any str exact
    if len(line) > search_wire.MAX_REQUEST_BYTES:
        return None
    deadline = time.monotonic() + search_wire.BUDGET
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(search_wire.BUDGET)
            sock.connect(str(path))
            if not _same_user(sock):
                return None
            sock.sendall(line)
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            if _read(sock) != {"ready": True}:
                return None  # declined, or not ready within the budget: nothing was searched
            sock.sendall(b'{"go": true}\n')
            sock.settimeout(None)  # the door searches now: a long search is not cut
            answer = _read(sock)
        finally:
            sock.close()
    except (OSError, ValueError):
        # No serve, a stale socket, no ready within the budget; or, after go, a serve killed
        # mid-way (it writes the search log just before the answer: only a kill between the
        # two has it logged twice).
        return None
    hits = answer.get("hits") if isinstance(answer, dict) else None
    if not isinstance(hits, list) or not all(isinstance(hit, dict) for hit in hits):
        return None
    return hits


def leave_open(root: Path, minutes: float) -> bool:
    """After a search this process ran by itself: start ``dream door`` in the background,
    to answer this user's searches for ``minutes`` after the last, unless a door listens
    already (one that declined this search, e.g. another dreamer version's) or ``minutes``
    is 0. Whether one was started; it never fails the search, which is answered already."""
    if minutes <= 0 or not search_wire.available() or not sys.executable:
        return False
    path = search_wire.socket_path()
    if search_wire.too_long(path) or not _can_open_at(path.parent) or _listening(path):
        return False
    argv = [
        sys.executable,
        "-P",  # dreamer from where this process has it, never from the working folder
        "-m",
        "dreamer.cli",
        "door",
        "--background",
        "--idle-minutes",
        f"{minutes:g}",
        "-w",
        str(root),
    ]
    null = os.devnull
    # Its own session, its standard streams on /dev/null: it holds no terminal and no pipe
    # of whoever started this search (a caller reading our output to its end would wait).
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    try:
        os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions, setsid=True)
    except (OSError, NotImplementedError):  # the next search runs by itself too
        return False
    return True


def _can_open_at(folder: Path) -> bool:
    """Whether a door could open in ``folder``: this user's own folder, or one it can make
    (a door that cannot would start after every search only to say so in its log)."""
    try:
        found = os.stat(folder)
    except FileNotFoundError:
        above = folder.parent
        while not above.exists() and above != above.parent:
            above = above.parent
        return os.access(above, os.W_OK | os.X_OK)
    except OSError:
        return False
    return found.st_uid == os.geteuid() and os.access(folder, os.W_OK | os.X_OK)


def _listening(path: Path) -> bool:
    """Whether a process accepts connections at the socket ``path``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(search_wire.BUDGET)
        sock.connect(str(path))
    except OSError:
        return False
    finally:
        sock.close()
    return True


def _same_user(sock: socket.socket) -> bool:
    """Whether the listening process is this user's, where the platform tells (SO_PEERCRED)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True  # the folder's owner and mode were checked
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1]) == os.geteuid()


def _read(sock: socket.socket) -> Any:
    """One JSON line from the door (ValueError when it is not one; OSError when it stalls)."""
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise ValueError("the door closed the connection")
        data += chunk
    return json.loads(data)
