"""The one cross-process lock helper: an exclusive lock on a file, on every platform (filelock).

filelock takes ``flock`` on POSIX and ``msvcrt.locking`` on Windows; either way the lock dies
with the process that holds it, so a crash never leaves a workspace locked. Lock files are
owner-only and stay in place between uses (deleting a lock file under a waiter would split
waiters across two files).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from dreamer.errors import DreamError, LockHeld, WorkspaceError
from dreamer.support import failures
from dreamer.support.files import FILE_MODE, refuse_link


@contextlib.contextmanager
def hold(
    path: Path, *, wait: bool = True, busy: str = "", error: type[DreamError] = WorkspaceError
) -> Iterator[None]:
    """Hold the exclusive lock on ``path``; without ``wait``, raise LockHeld(busy) if taken.

    ``busy`` may hold ``{pid}``: the process id a non-waiting holder wrote into the lock file.
    A lock file that cannot be opened raises ``error`` naming the fix.
    """
    from filelock import FileLock, Timeout  # here: a cold `dream search` takes no lock

    refuse_link(path)  # filelock opens with O_TRUNC: through a link it would empty the target
    lock = FileLock(path, mode=FILE_MODE, timeout=-1 if wait else 0, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise LockHeld(busy.format(pid=_holder(path))) from None
    except OSError as e:
        # Named for what it is: a full disk or the open-files limit is no permission problem.
        known = failures.explain_os_error(e, path)
        why = str(known) if known else f"{e.strerror}; check its permissions"
        raise error(f"cannot lock {path}: {why}") from e
    try:
        if not wait:
            _write_holder(path)
        yield
    finally:
        lock.release()


def _write_holder(path: Path) -> None:
    # Who holds the lock, for the "already running (pid N)" message. Best effort: Windows
    # forbids writing a locked region from a second handle, and the pid is only a courtesy.
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_WRONLY)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)


def _holder(path: Path) -> str:
    try:
        return path.read_bytes()[:32].decode(errors="replace").strip() or "?"
    except OSError:
        return "?"
