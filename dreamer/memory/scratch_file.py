"""Writing the scratch file, ``memory/scratch.md``: the note path's half of the WAL.

``dream note`` appends to the scratch and never reads it back, so the append (its format, its
lock, its durable write) lives here, and parsing, rotation and rewriting, which only dreams,
forgetting and recovery need, stay in ``dreamer.memory.scratch`` (which re-exports all of this).
See that module for the format and the crash guarantees.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from dreamer.errors import ScratchError
from dreamer.support import failures, files
from dreamer.support.files import atomic_write, fsync_dir, write_all
from dreamer.support.locks import hold
from dreamer.support.times import iso

HEADER = "# Scratch Buffer (Working Memory WAL)\n"
CONTINUATION = "  "


@dataclass(frozen=True)
class Note:
    """One entry of the scratch log."""

    at: datetime
    importance: float
    text: str
    line: int = 0  # 1-based line of the entry in the file it was parsed from (a row: its seq)
    about: str | None = None  # what the note is about, as its writer named it
    replaces: str | None = None  # what it replaces: a crystal id ("#12") or the old words


def format_importance(importance: float) -> str:
    """Importance as the seed writes it: ``0.8``, ``0.75``, ``1.0``."""
    text = f"{round(importance, 3):.3f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def render_note(note: Note) -> str:
    """The bytes (as text) one note adds to the scratch, ending in a newline."""
    first, *rest = note.text.split("\n")
    if note.about is not None or note.replaces is not None:
        import json  # here: most notes have neither field

    fields = "".join(
        f", {key}: {json.dumps(value, ensure_ascii=False)}"
        for key, value in (("about", note.about), ("replaces", note.replaces))
        if value is not None
    )
    importance = format_importance(note.importance)
    lines = [f"- [{iso(note.at)}] (importance: {importance}{fields}) {first}"]
    lines.extend(CONTINUATION + line for line in rest)
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive scratch lock (``scratch.lock`` beside ``path``) across processes."""
    with hold(path.with_name(path.stem + ".lock"), error=ScratchError):
        yield


def _append_unlocked(path: Path, chunk: str) -> None:
    try:
        # Read and write: the last byte is checked through this descriptor (one open); with
        # O_APPEND every write still lands at the end, wherever a read left the offset.
        fd = files.open_no_follow(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    except OSError as e:
        known = failures.explain_os_error(e, path)
        why = str(known) if known else f"{e.strerror}; make it a writable file"
        raise ScratchError(f"cannot open {path} for appending: {why}") from e
    size = None
    try:
        size = os.fstat(fd).st_size
        data = chunk.encode("utf-8", errors="surrogateescape")
        if size == 0:
            data = (HEADER + "\n").encode("utf-8") + data
        else:
            os.lseek(fd, size - 1, os.SEEK_SET)
            if os.read(fd, 1) != b"\n":
                data = b"\n" + data  # a hand edit left no newline at the end
        write_all(fd, data)
        os.fsync(fd)
        if size == 0:
            fsync_dir(path.parent)  # a new file: make its name durable too
    except OSError as e:
        if size is not None:
            # A failed write (disk full) may have landed in part: take it back, so a note is
            # all there or not there. We hold the lock, so the tail is ours alone.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
        known = failures.explain_os_error(e, path)
        why = str(known) if known else f"{e.strerror}; check the disk and its permissions"
        raise ScratchError(f"cannot append to {path}: {why}") from e
    finally:
        os.close(fd)


def append(path: Path, note: Note) -> None:
    """Append one note durably (locked, one write, fsync) before returning."""
    line = render_note(note)
    with locked(path):
        _append_unlocked(path, line)


class FileAppender:
    """What a note needs of ``memory/scratch.md``: create it, append to it. The whole log
    (reading, rotating, rewriting) is ``dreamer.memory.scratch.FileScratch``."""

    def __init__(self, path: Path):
        self.path = path

    def init(self) -> None:
        with locked(self.path):  # two inits at once must not both write it
            if not self.path.exists():
                atomic_write(self.path, HEADER + "\n")

    def append(self, note: Note) -> None:
        append(self.path, note)
