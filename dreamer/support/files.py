"""Durable file writes: owner-only permissions, temp file + fsync + rename."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


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


def atomic_write(path: Path, content: str | bytes) -> None:
    """Replace path with content so a crash leaves either the old or the new file whole."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    # Unique per process and thread, so two writers never share (and clobber) one temp file.
    temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
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
