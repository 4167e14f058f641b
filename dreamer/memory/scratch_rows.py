"""The scratch write-ahead log as rows of a shared store (PostgreSQL), for fleets.

The same log as ``memory/scratch.md`` (``dreamer.memory.scratch.FileScratch``), kept where every
machine of a fleet sees it, so a note written on one machine is dreamt on another with no
shared folder. What the file does with a lock and a rotated copy, the rows do with one
statement each (see ``dreamer.store.postgres.scratch``):

- a note is one committed ``INSERT``: acknowledged means stored;
- a dream's rotation marks the pending rows with its lease token, so notes that arrive during
  the dream stay pending for the next one;
- a failed dream puts back the rows of its token and older ones; a newer holder's rows are
  never touched by a worker whose lease passed on;
- a committed dream deletes what it consumed and puts back the rest, in one transaction.

A workspace that had a scratch file before it moved to PostgreSQL keeps every note: the file's
notes are moved into rows (once: notes the rows already hold are not added twice) and the file
keeps only what is not a note (hand-written lines), as rotation does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from dreamer.errors import ScratchError
from dreamer.memory import scratch
from dreamer.memory.scratch import HEADER, Note
from dreamer.store.base import ScratchRow, ScratchRows
from dreamer.support.files import atomic_write
from dreamer.support.times import iso, parse_iso


def _note(row: ScratchRow) -> Note:
    seq, at, importance, text, _, about, replaces = row
    return Note(parse_iso(at), importance, text, seq, about, replaces)


class RowScratch:
    """The scratch as rows of ``store``; ``fence`` gives the lease token while the workspace
    lock is held (None otherwise); ``legacy`` is the workspace's ``memory/scratch.md``."""

    def __init__(self, store: ScratchRows, fence: Callable[[], int | None], legacy: Path):
        self.store, self.fence, self.legacy = store, fence, legacy

    def init(self) -> None:
        self.adopt_file()

    def append(self, note: Note) -> None:
        self.store.scratch_append(
            note.text, note.at, note.importance, about=note.about, replaces=note.replaces
        )

    def notes(self) -> list[Note]:
        return [_note(row) for row in self.store.scratch_rows(rotated=False)]

    def waiting(self) -> list[Note]:
        return [_note(row) for row in self.store.scratch_rows()]

    def text(self) -> str:
        return (
            HEADER
            + "\n"
            + "".join(scratch.render_note(Note(n.at, n.importance, n.text)) for n in self.notes())
        )

    def stamp(self) -> object:
        return self.store.scratch_stamp()

    def modified(self) -> str | None:
        notes = self.notes()
        return iso(max(n.at for n in notes)) if notes else None

    def rotate(self) -> list[Note]:
        token = self.fence()
        if token is None:
            raise ScratchError("a dream takes the scratch only under the workspace lock")
        return [_note(row) for row in self.store.scratch_rotate(token)]

    def restore(self) -> int:
        back = self.store.scratch_restore(self.fence())
        return back + self.adopt_file()

    def settle(self, keep: Callable[[Note], bool]) -> int:
        token = self.fence()
        if token is None:
            raise ScratchError("a dream settles the scratch only under the workspace lock")
        taken = [row for row in self.store.scratch_rows(pending=False) if row[4] == token]
        return self.store.scratch_settle(token, [row[0] for row in taken if keep(_note(row))])

    def rewrite(
        self,
        note: Callable[[str], str | None],
        stray: Callable[[str], str] = str,
        *,
        dry_run: bool = False,
    ) -> int:
        changes: dict[int, str | None] = {}
        for seq, _, _, text, *_ in self.store.scratch_rows():
            new = note(text)
            if new != text:
                changes[seq] = new
        if not dry_run:
            self.store.scratch_rewrite(changes)
        # What the local file still holds (hand-written lines, notes not moved yet) too.
        return len(changes) + scratch.rewrite(self.legacy, note, stray, dry_run=dry_run)

    def adopt_file(self) -> int:
        """Move the notes of a local scratch file (and of its rotated copy) into rows; how many.

        The rows are written first, then the file: a crash in between leaves the notes in
        both, and the next call adds only those the rows do not hold yet.
        """
        rotated = scratch.rotated_path(self.legacy)
        if not self.legacy.exists() and not rotated.exists():
            return 0
        with scratch.locked(self.legacy):
            found = [*scratch.parse(rotated).notes, *scratch.parse(self.legacy).notes]
            if not found and not rotated.exists():
                return 0
            held = Counter((n.at, n.importance, n.text) for n in self.waiting())
            moved = 0
            for n in found:
                if held[(n.at, n.importance, n.text)]:
                    held[(n.at, n.importance, n.text)] -= 1
                    continue
                self.store.scratch_append(
                    n.text, n.at, n.importance, about=n.about, replaces=n.replaces
                )
                moved += 1
            stray = scratch.parse(self.legacy).stray
            if found or stray:
                rest = "".join(line + "\n" for _, line in stray)
                atomic_write(self.legacy, (HEADER + "\n" + rest).encode("utf-8", "surrogateescape"))
            if rotated.exists():
                rotated.unlink()
        return moved
