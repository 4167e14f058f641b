"""The scratch write-ahead log, ``memory/scratch.md``.

Format (byte-compatible with the seed)::

    # Scratch Buffer (Working Memory WAL)

    - [2026-03-12T14:30:00Z] (importance: 0.8) note text
      a continuation line of the same note is indented by two spaces
    - [2026-03-14T09:00:00Z] (importance: 0.8, about: "launch date", replaces: "#12") text

A note's optional ``about`` and ``replaces`` (what it is about, what it replaces: a crystal
id or the old words) follow its importance as JSON strings, so any text round-trips.

Every line of a note after its first is written with a two-space indent, so any text, with any
number of lines and any Unicode, parses back exactly. Lines a human added or mangled are neither
entries nor continuations; they are kept in place (and carried into the fresh file when the
scratch is rotated) and reported by ``parse``, never dropped. Bytes that are not UTF-8 (a torn
write, a file saved in another encoding) never make the file unreadable: the lines holding them
are reported as stray and written back byte for byte.

Appends take an exclusive lock on ``memory/scratch.lock``, write the whole entry with
one ``write`` on an ``O_APPEND`` descriptor and ``fsync`` before returning. Rotation for a dream
happens under the same lock, so a note appended during a dream lands in the fresh file.

Crashes: an append cut short leaves a last line with no newline; the next append starts on a
fresh line, so the torn note never swallows a later one (what survived of it stays a note or a
stray line). ``rotate`` copies the scratch aside before it empties it and ``restore`` writes the
merged file before it deletes the copy, so a crash at any point leaves every note somewhere;
``restore`` skips rotated notes the scratch already holds, so recovering twice never doubles them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Protocol

from dreamer.errors import ScratchError

# The append half (format, lock, durable write), which `dream note` loads alone; re-exported
# here, so that the scratch stays one module to its readers.
from dreamer.memory.scratch_file import CONTINUATION as CONTINUATION
from dreamer.memory.scratch_file import HEADER as HEADER
from dreamer.memory.scratch_file import FileAppender
from dreamer.memory.scratch_file import Note as Note
from dreamer.memory.scratch_file import append as append
from dreamer.memory.scratch_file import format_importance as format_importance
from dreamer.memory.scratch_file import locked as locked
from dreamer.memory.scratch_file import render_note as render_note
from dreamer.support import failures, files
from dreamer.support.files import atomic_write, fsync_dir
from dreamer.support.times import parse_iso

_ENTRY = re.compile(
    r"^- \[(?P<at>[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z)\] "
    r"\(importance: (?P<importance>[0-9]*\.?[0-9]+)"
    r'(?P<fields>(?:, (?:about|replaces): "(?:[^"\\]|\\.)*")*)\) (?P<text>.*)$'
)
_FIELD = re.compile(r'(?P<key>about|replaces): (?P<value>"(?:[^"\\]|\\.)*")')
# Undecodable bytes are read as lone surrogates (surrogateescape) and written back unchanged.
_RAW_BYTE = re.compile("[\udc80-\udcff]")


@dataclass(frozen=True)
class Parsed:
    """A parsed scratch file: its notes and the lines that are not notes."""

    notes: list[Note]
    stray: list[tuple[int, str]]  # (1-based line number, line) kept verbatim


def parse_text(content: str) -> Parsed:
    """Parse scratch content into notes and stray lines."""
    notes: list[Note] = []
    stray: list[tuple[int, str]] = []
    current: dict | None = None

    def close() -> None:
        if current is not None:
            notes.append(
                Note(
                    current["at"],
                    current["importance"],
                    "\n".join(current["lines"]),
                    current["line"],
                    current["fields"].get("about"),
                    current["fields"].get("replaces"),
                )
            )

    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the file
    for number, line in enumerate(lines, start=1):
        if _RAW_BYTE.search(line):
            close()  # a line that is not text can be neither a note nor part of one
            current = None
            stray.append((number, line))
            continue
        match = _ENTRY.match(line)
        if match:
            close()
            try:
                at = parse_iso(match["at"])
                importance = float(match["importance"])
                if importance > 1.0:  # a hand edit; indexing it would break the 0..1 scale
                    raise ValueError(importance)
                fields = {
                    f["key"]: json.loads(f["value"]) for f in _FIELD.finditer(match["fields"])
                }
            except ValueError:
                current = None
                stray.append((number, line))
                continue
            current = {
                "at": at,
                "importance": importance,
                "lines": [match["text"]],
                "line": number,
                "fields": fields,
            }
        elif current is not None and line.startswith(CONTINUATION):
            current["lines"].append(line[len(CONTINUATION) :])
        else:
            close()
            current = None
            if line.strip() and not (line == HEADER.rstrip("\n") and number == 1):
                stray.append((number, line))
    close()
    return Parsed(notes, stray)


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return ""
    except OSError as e:
        raise failures.cannot_read(e, path, ScratchError) from e


def parse(path: Path) -> Parsed:
    """Parse the scratch file at ``path`` (a missing file is an empty scratch)."""
    return parse_text(_read(path))


def rotated_path(path: Path) -> Path:
    """Where a scratch is moved while a dream consumes it."""
    return path.with_name(path.stem + ".dreaming.md")


def rotate(path: Path) -> Parsed:
    """Move the scratch aside for a dream and start a fresh one; return what was moved.

    Stray (non-note) lines are copied into the fresh scratch so a dream never consumes them.
    If a rotated file already exists (a crash during an earlier dream), it must be restored
    first with ``restore``; rotating over it would lose notes, so this raises instead.
    """
    aside = rotated_path(path)
    with locked(path):
        if aside.exists():
            raise ScratchError(
                f"{aside} is left from an interrupted dream; run 'dream run' to recover it"
            )
        content = _read(path)
        parsed = parse_text(content)
        if not content:
            return parsed
        # Copy first, then empty: a crash in between leaves the notes twice, never nowhere
        # (restore skips the copies the scratch still holds).
        atomic_write(aside, _encode(content))
        fresh = HEADER + "\n" + "".join(line + "\n" for _, line in parsed.stray)
        atomic_write(path, _encode(fresh))
    return parsed


def restore(path: Path) -> int:
    """Put a rotated scratch back in front of the current one; return how many notes moved.

    Used when a dream fails or is rejected, and at start-up after a crash. Stray lines were
    already copied into the fresh scratch by ``rotate``, so only notes come back.
    """
    aside = rotated_path(path)
    with locked(path):
        if not aside.exists():
            return 0
        old = parse_text(_read(aside))
        current = _read(path)
        # A crash after rotate's copy (or after an earlier restore's write) leaves rotated
        # notes in the scratch too; bring back only those it does not hold yet.
        held = Counter(_key(note) for note in parse_text(current).notes)
        back = []
        for note in old.notes:
            if held[_key(note)]:
                held[_key(note)] -= 1
            else:
                back.append(note)
        body = current[len(HEADER) :].lstrip("\n") if current.startswith(HEADER) else current
        if body.startswith(CONTINUATION):
            body = "\n" + body  # a blank line keeps an indented stray line out of the last note
        merged = HEADER + "\n" + "".join(render_note(note) for note in back) + body
        atomic_write(path, _encode(merged))
        aside.unlink()
        fsync_dir(path.parent)
        return len(back)


def rewrite(
    path: Path,
    note: Callable[[str], str | None],
    stray: Callable[[str], str] = str,
    *,
    dry_run: bool = False,
) -> int:
    """Rewrite the scratch and its rotated copy in place (redaction, forgetting); count changes.

    ``note`` maps a note's text to its new text, or None to drop the note; ``stray`` maps
    every other line. Times, importances and the order of lines are kept; each file is
    replaced atomically, under the scratch lock. ``dry_run`` counts and writes nothing.
    """
    changed = 0
    with locked(path):
        for target in (path, rotated_path(path)):
            content = _read(target)
            if not content:
                continue
            out, count = _rewritten(content, note, stray)
            if count and not dry_run:
                atomic_write(target, _encode(out))
            changed += count
    return changed


def _rewritten(
    content: str, note: Callable[[str], str | None], stray: Callable[[str], str]
) -> tuple[str, int]:
    parsed = parse_text(content)
    starts = {entry.line: entry for entry in parsed.notes}
    lines = content.split("\n")
    ending = lines[-1] == ""
    if ending:
        lines.pop()
    out: list[str] = []
    changed, number = 0, 1
    while number <= len(lines):
        entry = starts.get(number)
        if entry is None:
            line = lines[number - 1]
            new = line if (number == 1 and line == HEADER.rstrip("\n")) else stray(line)
            changed += new != line
            out.append(new)
            number += 1
            continue
        text = note(entry.text)
        if text != entry.text:
            changed += 1
        if text is not None:
            out.append(render_note(replace(entry, text=text)).rstrip("\n"))
        number += entry.text.count("\n") + 1
    return "\n".join(out) + ("\n" if ending else ""), changed


def _key(note: Note) -> tuple[datetime, float, str]:
    return note.at, note.importance, note.text


def _encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def settle(path: Path, keep: Callable[[Note], bool]) -> int:
    """After a committed dream: put back the rotated notes ``keep`` picks, drop the rest.

    The notes a dream could not take (its input budget was full) go back in front of the
    scratch for the next dream. The rotated file is first rewritten to hold only them (one
    atomic write), then restored: a crash in between leaves exactly those notes to recover.
    """
    aside = rotated_path(path)
    with locked(path):
        if not aside.exists():
            return 0
        back = [note for note in parse_text(_read(aside)).notes if keep(note)]
        if not back:
            aside.unlink()
            fsync_dir(path.parent)
            return 0
        body = "".join(render_note(note) for note in back)
        atomic_write(aside, _encode(HEADER + "\n" + body))
    return restore(path)


class FileScratch(FileAppender):
    """The scratch as the file ``memory/scratch.md``: a note's append (``FileAppender``, all a
    fresh ``dream note`` loads) and the dream's reading, rotating and rewriting."""

    def notes(self) -> list[Note]:
        return parse(self.path).notes

    def waiting(self) -> list[Note]:
        return parse(self.path).notes + parse(rotated_path(self.path)).notes

    def text(self) -> str:
        return _encode(_read(self.path)).decode("utf-8", errors="replace")

    def stamp(self) -> object:
        return files.stamp(self.path)

    def modified(self) -> str | None:
        return files.modified(self.path)

    def rotate(self) -> list[Note]:
        return rotate(self.path).notes

    def restore(self) -> int:
        return restore(self.path)

    def settle(self, keep: Callable[[Note], bool]) -> int:
        return settle(self.path, keep)

    def rewrite(
        self,
        note: Callable[[str], str | None],
        stray: Callable[[str], str] = str,
        *,
        dry_run: bool = False,
    ) -> int:
        return rewrite(self.path, note, stray, dry_run=dry_run)


class ScratchLog(Protocol):
    """A workspace's scratch write-ahead log, wherever it is kept: ``memory/scratch.md``
    (``FileScratch``) or rows of a shared store (``dreamer.memory.scratch_rows.RowScratch``).

    *Pending* notes wait for the next dream; *rotated* ones are being consumed by a dream.
    Every method that changes the log is atomic and loses no note on a crash.
    """

    def init(self) -> None:
        """Create the log if it does not exist yet."""
        ...

    def append(self, note: Note) -> None:
        """Append one note durably before returning."""
        ...

    def notes(self) -> list[Note]:
        """The pending notes, oldest first."""
        ...

    def waiting(self) -> list[Note]:
        """Every note no dream has consumed yet: the pending and the rotated ones."""
        ...

    def text(self) -> str:
        """The pending notes as ``memory/scratch.md`` shows them (bytes that are not UTF-8
        shown as U+FFFD)."""
        ...

    def stamp(self) -> object:
        """A value that changes whenever the pending notes do (for watchers)."""
        ...

    def modified(self) -> str | None:
        """When the log last changed (ISO-8601), if known."""
        ...

    def rotate(self) -> list[Note]:
        """Hand the pending notes to a dream; notes appended from now on wait for the next."""
        ...

    def restore(self) -> int:
        """Put the notes of a failed or interrupted dream back in front; how many."""
        ...

    def settle(self, keep: Callable[[Note], bool]) -> int:
        """After a committed dream: put back the rotated notes ``keep`` picks, drop the rest."""
        ...

    def rewrite(
        self,
        note: Callable[[str], str | None],
        stray: Callable[[str], str] = str,
        *,
        dry_run: bool = False,
    ) -> int:
        """Map every note's text (None drops it) and every other line; count the changes."""
        ...
