"""The one cross-process lock helper: an exclusive lock on a file, on every platform.

On POSIX it is ``flock`` on the lock file, taken here (a blocking ``flock`` wakes the moment the
holder lets go; importing filelock cost a fresh ``dream note`` more than its whole append). On
Windows it is filelock's ``msvcrt.locking``. Either way the lock dies with the process that holds
it, so a crash never leaves a workspace locked. Lock files are owner-only and stay in place
between uses (deleting a lock file under a waiter would split waiters across two files).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from dreamer.errors import DreamError, LockHeld, WorkspaceError
from dreamer.support import failures
from dreamer.support.files import FILE_MODE, open_no_follow, refuse_link

if os.name != "nt":
    # At import, not at the first lock: a process out of file descriptors cannot load a module
    # any more, and must still be able to say so.
    import fcntl


@contextlib.contextmanager
def hold(
    path: Path, *, wait: bool = True, busy: str = "", error: type[DreamError] = WorkspaceError
) -> Iterator[None]:
    """Hold the exclusive lock on ``path``; without ``wait``, raise LockHeld(busy) if taken.

    ``busy`` may hold ``{pid}``: the process id a non-waiting holder wrote into the lock file.
    A lock file that cannot be opened raises ``error`` naming the fix.
    """
    refuse_link(path)
    try:
        release = _acquire(path, wait)
    except _Busy:
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
        release()


class _Busy(Exception):
    """The lock is held by another process and the caller would not wait."""


def _acquire(path: Path, wait: bool) -> Callable[[], None]:
    """Take the lock on ``path``; return what lets it go. Raise _Busy when held and not waiting."""
    if os.name == "nt":
        from filelock import FileLock, Timeout

        lock = FileLock(path, mode=FILE_MODE, timeout=-1 if wait else 0, thread_local=False)
        try:
            lock.acquire()
        except Timeout:
            raise _Busy from None
        return lock.release
    fd = open_no_follow(path, os.O_RDWR | os.O_CREAT)
    try:
        if os.fstat(fd).st_mode & 0o777 != FILE_MODE:
            with contextlib.suppress(OSError):  # another user's lock file keeps its mode
                os.fchmod(fd, FILE_MODE)
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise _Busy from None
    except BaseException:
        os.close(fd)
        raise

    def release() -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    return release


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
