"""A shared (PostgreSQL) store's workspace lease: what the lock file is across machines.

``held`` takes the lease (or raises LockHeld naming its holder), renews it from a thread every
third of its time to live while the caller runs, and releases it after; its token fences the
state the holder may write. A lease whose holder was a process of this machine that is gone
(killed mid-dream) is taken over at once, not when it expires. Only a leasing store loads this
module (a note never does).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from dreamer.errors import DreamError, LockHeld
from dreamer.support.times import utc_now

if TYPE_CHECKING:
    from dreamer.store.base import Leasing


@contextlib.contextmanager
def held(store: Leasing, root: Path, ttl: timedelta) -> Iterator[int]:
    """Hold ``store``'s lease on the workspace at ``root`` and give its token; raise LockHeld
    naming the holder when another has it."""
    holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
    token = store.acquire_lease(holder, utc_now(), ttl)
    who, until, _ = store.lease_holder() if token is None else (None, None, 0)
    if token is None and who is None:  # released between the two reads: try once more
        token = store.acquire_lease(holder, utc_now(), ttl)
    elif token is None and until is not None and _dead_here(who):
        # Its holder was a process of this machine that is gone (killed mid-dream): the
        # lease is free now, not when it expires.
        token = store.acquire_lease(holder, until, ttl)
    if token is None:
        expiry = f" until {until:%Y-%m-%dT%H:%M:%SZ}" if until else ""
        raise LockHeld(
            f"dream already running in {root} (lease held by {who}{expiry}); wait for it to finish"
        )
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(ttl.total_seconds() / 3):
            try:
                if not store.renew_lease(holder, token, utc_now(), ttl):
                    return  # lost: the fenced state write will refuse this holder
            except DreamError:  # the store is unreachable: try again at the next beat
                continue

    beat = threading.Thread(target=renew, daemon=True, name="workspace-lease")
    beat.start()
    try:
        yield token
    finally:
        stop.set()
        beat.join()
        with contextlib.suppress(DreamError):  # unreachable: the lease simply expires
            store.release_lease(holder, token)


def _dead_here(holder: str | None) -> bool:
    """Whether a lease holder ("host:pid:nonce") was a process of this machine that is gone."""
    host, _, rest = (holder or "").partition(":")
    pid = rest.partition(":")[0]
    if os.name != "posix" or host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    # A killed process its parent has not reaped yet (a zombie) still answers signal 0, but it
    # runs no code and its lease renews no more: it is gone.
    return _zombie(int(pid))


def _zombie(pid: int) -> bool:
    """Whether process ``pid`` has exited and waits to be reaped (Linux: /proc/<pid>/stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:  # no /proc (macOS, BSD): a zombie keeps its lease until it expires
        return False
    # "pid (comm) S ...": the command may hold spaces and parentheses, the state follows the last.
    fields = stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] in ("Z", "X")
