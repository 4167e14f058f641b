"""Durable file writes: owner-only permissions, temp file + fsync + rename, never through a link.

A workspace's files are written only as regular files: a symbolic link planted in their place
(``memory/scratch.md`` pointing at ``~/.bashrc``) would send the write outside the workspace,
so it is refused with an error naming the link, and temp files are created exclusively
(``O_EXCL``), never opened through a link.
"""

from __future__ import annotations

import errno
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

from dreamer.errors import LinkRefused, UsageError, WorkspaceError
from dreamer.support import failures

FILE_MODE = 0o600
DIR_MODE = 0o700
# Where the platform has it, a final symbolic link makes os.open fail (ELOOP) instead of following.
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def link_refused(path: Path) -> LinkRefused:
    """The error for a write to ``path`` that is a symbolic link."""
    try:
        target = f" (to {os.readlink(path)})"
    except OSError:
        target = ""
    return LinkRefused(
        f"{path} is a symbolic link{target}; dreamer does not write through links, which could "
        "change files outside the workspace: remove the link (or put a regular file in its place)"
    )


def refuse_link(path: Path) -> None:
    """Raise LinkRefused when ``path`` is a symbolic link."""
    if os.path.islink(path):
        raise link_refused(path)


def open_no_follow(path: Path, flags: int, mode: int = FILE_MODE) -> int:
    """os.open that refuses a symbolic link at ``path`` (LinkRefused) instead of following it."""
    try:
        return os.open(path, flags | O_NOFOLLOW, mode)
    except OSError as e:
        if e.errno == errno.ELOOP and os.path.islink(path):
            raise link_refused(path) from e
        raise


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of data to fd (os.write may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(folder: Path) -> None:
    """Make a rename or unlink in folder durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, content: str | bytes, *, replace_link: bool = False) -> None:
    """Replace path with content so a crash leaves either the old or the new file whole.

    A symbolic link at ``path`` is refused (LinkRefused) unless ``replace_link``.
    """
    data = content.encode("utf-8") if isinstance(content, str) else content
    if not replace_link:
        refuse_link(path)
    # Unique per process and thread, so two writers never share (and clobber) one temp file.
    temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = _create_temp(temp)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(temp, path)
    fsync_dir(path.parent)


def _create_temp(temp: Path) -> int:
    """Create ``temp`` afresh: never opened through a link, a stale one of ours replaced."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW
    try:
        return os.open(temp, flags, FILE_MODE)
    except FileExistsError:
        if os.path.islink(temp):
            raise link_refused(temp) from None
        temp.unlink()  # left by a crash of a process that had our pid and thread id
        return os.open(temp, flags, FILE_MODE)


def write_chosen(path: Path, content: str | bytes, option: str) -> None:
    """Write a file at a path the user chose with ``option`` (``--to``, ``-o``), atomically.

    Its folder must exist: a mistyped folder is not made, or the file would sit where nobody
    looks. A missing folder is a UsageError, a failed write its true cause, each one line.
    """
    if not path.parent.is_dir():
        raise UsageError(
            f"the folder {path.parent} does not exist; create it first "
            f"(mkdir -p {path.parent}) or pick another {option} path"
        )
    try:
        atomic_write(path, content)
    except OSError as e:
        raise failures.explain_os_error(e, path) or WorkspaceError(
            f"cannot write {path} ({e.strerror}); pick a writable {option} path"
        ) from e


def stamp(path: Path) -> tuple[int, int, int] | None:
    """What changes when a file is rewritten or appended to (None: no such file)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def modified(path: Path) -> str | None:
    """A file's modification time as ISO-8601 UTC to the second (None: no such file)."""
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(mtime, UTC).isoformat(timespec="seconds")
