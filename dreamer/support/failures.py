"""What an operating-system error really means, as a dreamer error whose message names the fix.

A full disk, a permission, the file-size limit (``ulimit -f``) and the open-files limit
(``ulimit -n``) each have one fix, so each is its own error; nothing here ever says "corrupt".
Writes past the file-size limit end in SIGXFSZ, which kills the process before any message:
``ignore_file_size_signal`` turns them into ``EFBIG`` errors that land here instead.
"""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

try:
    import resource
except ImportError:  # Windows: no rlimits
    resource = None  # type: ignore[assignment]

from dreamer.errors import (
    DiskFull,
    DreamError,
    FileSizeLimit,
    OpenFilesLimit,
    PermissionDenied,
    StorageIOError,
)

_PERMISSION = (errno.EACCES, errno.EPERM)
_FULL = (errno.ENOSPC, errno.EDQUOT)
_TOO_MANY = (errno.EMFILE, errno.ENFILE)


def ignore_file_size_signal() -> None:
    """Make writes past ``ulimit -f`` fail with EFBIG (an error we can explain), not SIGXFSZ."""
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def file_size_limit() -> int | None:
    """The process's file-size limit in bytes, or None when there is none."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else soft


def open_files_limit() -> int | None:
    """The process's open-files limit, or None when there is none."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def disk_full(path: Path | str) -> DiskFull:
    """No space for a write to ``path``."""
    return DiskFull(
        f"no space left on the disk holding {path}; free some space (or move the workspace "
        "with -w), then run the command again: the write that failed was not made"
    )


def size_limit(path: Path | str) -> FileSizeLimit:
    """A write to ``path`` passed the file-size limit."""
    limit = file_size_limit()
    where = f" of {limit} bytes" if limit is not None else ""
    return FileSizeLimit(
        f"writing {path} passed this process's file-size limit{where} ('ulimit -f'); raise "
        "it ('ulimit -f unlimited', or LimitFSIZE=infinity in a systemd unit) and run again"
    )


def too_many_open(path: Path | str) -> OpenFilesLimit:
    """The open-files limit stopped opening ``path``."""
    limit = open_files_limit()
    allowed = f" ({limit} allowed)" if limit is not None else ""
    return OpenFilesLimit(
        f"too many open files{allowed} to open {path}; raise the limit ('ulimit -n 4096', or "
        "LimitNOFILE= in a systemd unit) or give 'dream serve' fewer --workers"
    )


def denied(path: Path | str, read_only_fs: bool = False) -> PermissionDenied:
    """This user may not write (or read) ``path``."""
    if read_only_fs:
        return PermissionDenied(
            f"{path} is on a read-only file system; remount it read-write or use a workspace "
            "elsewhere with -w"
        )
    return PermissionDenied(
        f"permission denied for {path}; give your user read and write access to it "
        "(chown, or chmod u+rw) or use another workspace with -w"
    )


def explain_os_error(error: OSError, path: Path | str | None = None) -> DreamError | None:
    """The dreamer error an OSError stands for, or None when it is none of the known causes."""
    where = path or error.filename or "a workspace file"
    code = error.errno
    if code in _FULL:
        return disk_full(where)
    if code == errno.EFBIG:
        return size_limit(where)
    if code in _TOO_MANY:
        return too_many_open(where)
    if code in _PERMISSION:
        return denied(where)
    if code == errno.EROFS:
        return denied(where, read_only_fs=True)
    if code == errno.EIO:
        return StorageIOError(
            f"the disk failed reading or writing {where} (I/O error); check the disk "
            "(e.g. 'dmesg') and run again"
        )
    return None


def cannot_read(
    error: OSError, path: Path | str, kind: type[DreamError], what: str | None = None
) -> DreamError:
    """The error for a failed read of ``path``: its true cause when known (the open-files
    limit, a read-only or failing disk...), else ``kind`` naming the permissions to check."""
    known = None if error.errno in _PERMISSION else explain_os_error(error, path)
    if known is not None:
        return known
    return kind(f"{what or f'cannot read {path}'} ({error.strerror}); check its permissions")


def on_read_only_fs(path: Path | str) -> bool:
    """Whether ``path`` is on a file system mounted read-only."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # AttributeError: no statvfs on Windows
        return False


def free_bytes(path: Path) -> int | None:
    """Bytes free for this user on the file system holding ``path`` (None if unknown)."""
    try:
        stats = os.statvfs(path)
    except (OSError, AttributeError):  # AttributeError: no statvfs on Windows
        return None
    return stats.f_bavail * stats.f_frsize
