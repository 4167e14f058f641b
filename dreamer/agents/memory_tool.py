"""A dreamer backend for the Anthropic memory tool (``memory_20250818``), over one workspace.

The SDK's ``BetaAbstractMemoryTool`` gives the model a small file system under ``/memories``
(view, create, str_replace, insert, delete, rename). This backend maps it onto the workspace::

    /memories/MEMORY.md          the working memory; read-only (only a dream writes it)
    /memories/notes/NAME         notes the agent wrote under that name, one note per entry
    /memories/crystals/ID.md     every live crystal, read-only, newest listed first

``create`` and ``insert`` under ``notes/`` write notes (redacted, searchable at once, taken
into MEMORY.md by the next dream); ``str_replace`` in a note file replaces the note that holds
the text (the old one is forgotten); ``delete`` forgets (a note file's notes, or one crystal);
``rename`` renames a note file. Which notes a file holds is kept in the store's meta table, so
the files travel with the workspace. Paths are checked the way the SDK's own
``BetaLocalFilesystemMemoryTool`` checks them: under ``/memories``, no escape with ``..``.

    from dreamer.agents.memory_tool import DreamerMemoryTool
    runner = client.beta.messages.tool_runner(model=..., max_tokens=1024, messages=messages,
                                              tools=[DreamerMemoryTool(ws)])

This module subclasses an SDK class, so it imports ``anthropic`` (an exception to the rule
that only the Claude synthesizer does, declared in pyproject.toml); it sends no request itself.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from datetime import datetime

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from dreamer.errors import DreamError
from dreamer.memory.workspace import Workspace
from dreamer.store import Crystal
from dreamer.support.encoding import unencodable
from dreamer.support.times import utc_now

ROOT = "/memories"
STATE = f"{ROOT}/MEMORY.md"
NOTES = f"{ROOT}/notes"
CRYSTALS = f"{ROOT}/crystals"
FILES_KEY = "memory_tool.files"  # meta: {"notes/NAME": [crystal ids, in file order]}
LISTED_CRYSTALS = 200  # a view of /memories lists the newest ones; older ones by id
READ_ONLY_STATE = (
    f"{STATE} is written only by dreams, which consolidate notes into it; it cannot be edited. "
    f"To add or correct something, create a note, e.g. {NOTES}/corrections.md, and the next "
    "dream takes it in."
)


class DreamerMemoryTool(BetaAbstractMemoryTool):
    """The Anthropic memory tool, backed by a dreamer workspace."""

    def __init__(self, ws: Workspace, *, clock: Callable[[], datetime] = utc_now) -> None:
        super().__init__()
        self.ws = ws
        self.clock = clock

    # --- the commands -----------------------------------------------------------------------

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """A folder's listing, or a file's lines numbered (within view_range if given)."""
        path = _checked(command.path)
        if path in (ROOT, NOTES, CRYSTALS):
            return self._listing(path)
        text = self._read(path)
        lines = text.split("\n")
        start, end = 1, len(lines)
        if command.view_range and len(command.view_range) == 2:
            start = max(1, command.view_range[0])
            end = len(lines) if command.view_range[1] == -1 else command.view_range[1]
        numbered = [f"{n:6}\t{lines[n - 1]}" for n in range(start, min(end, len(lines)) + 1)]
        return f"Here's the content of {command.path} with line numbers:\n" + "\n".join(numbered)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        """A new note file holding ``file_text`` as one note."""
        path = _checked(command.path)
        name = self._note_name(path)
        files = self._files()
        if name in files:
            raise ToolError(f"File {command.path} already exists; insert into it instead")
        crystal_id = self._note(command.file_text)
        self._save({**files, name: [crystal_id]})
        return f"File created successfully at: {command.path} (note {crystal_id})"

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        """Add ``insert_text`` as a new note of the file, at the given line."""
        path = _checked(command.path)
        name = self._note_name(path)
        files = self._files()
        if name not in files:
            raise ToolError(f"The path {command.path} does not exist. Please provide a valid path.")
        notes = self._live(files[name])
        lines = "\n".join(c.text for c in notes).split("\n") if notes else []
        if not 0 <= command.insert_line <= len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {command.insert_line}. "
                f"It should be within the range [0, {len(lines)}]."
            )
        at, seen = len(notes), 0
        for index, crystal in enumerate(notes):  # the new note goes after the note it follows
            if seen >= command.insert_line:
                at = index
                break
            seen += crystal.text.count("\n") + 1
        crystal_id = self._note(command.insert_text)
        ids = [c.id for c in notes]
        ids.insert(at, crystal_id)
        self._save({**files, name: ids})
        return f"The file {command.path} has been edited (note {crystal_id})."

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        """Replace the one note that holds ``old_str`` by its corrected text."""
        path = _checked(command.path)
        if path == STATE:
            raise ToolError(READ_ONLY_STATE)
        name = self._note_name(path)
        files = self._files()
        if name not in files:
            raise ToolError(f"The path {command.path} does not exist. Please provide a valid path.")
        notes = self._live(files[name])
        holders = [c for c in notes if command.old_str and command.old_str in c.text]
        if len(holders) != 1 or holders[0].text.count(command.old_str) != 1:
            where = "did not appear verbatim" if not holders else "appears more than once"
            raise ToolError(
                f"No replacement was performed, old_str `{command.old_str}` {where} in "
                f"{command.path}; quote a longer, unique part of one note."
            )
        old = holders[0]
        new_id = self._note(old.text.replace(command.old_str, command.new_str))
        ids = [new_id if c.id == old.id else c.id for c in notes]
        self._save({**files, name: ids})
        if new_id != old.id:
            self._forget([old.id], f"replaced through the memory tool by note {new_id}")
        return f"The memory file has been edited: note {old.id} is now note {new_id}."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        """Forget a note file's notes, or one crystal: the text is gone for good."""
        path = _checked(command.path)
        if path == STATE:
            raise ToolError(READ_ONLY_STATE)
        if path in (ROOT, NOTES, CRYSTALS):
            raise ToolError(f"Cannot delete the folder {path}; delete its files one by one")
        if path.startswith(CRYSTALS + "/"):
            crystal = self._crystal(path)
            self._forget([crystal.id], "deleted through the memory tool")
            return f"Successfully deleted {command.path} (forgotten)"
        name = self._note_name(path)
        files = self._files()
        if name not in files:
            raise ToolError(f"The path {command.path} does not exist")
        ids = [c.id for c in self._live(files.pop(name))]
        if ids:
            self._forget(ids, "deleted through the memory tool")
        self._save(files)
        return f"Successfully deleted {command.path} ({len(ids)} note(s) forgotten)"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        """Rename a note file (its notes stay as they are)."""
        old, new = _checked(command.old_path), _checked(command.new_path)
        if STATE in (old, new):
            raise ToolError(READ_ONLY_STATE)
        old_name, new_name = self._note_name(old), self._note_name(new)
        files = self._files()
        if old_name not in files:
            raise ToolError(f"The path {command.old_path} does not exist")
        if new_name in files:
            raise ToolError(f"The destination {command.new_path} already exists")
        files[new_name] = files.pop(old_name)
        self._save(files)
        return f"Successfully renamed {command.old_path} to {command.new_path}"

    # --- the mapping ------------------------------------------------------------------------

    def _listing(self, folder: str) -> str:
        rows: list[tuple[int, str]] = []
        if folder == ROOT:
            rows.append((len(self.ws.read_memory().encode()), STATE))
        if folder in (ROOT, NOTES):
            for name, ids in sorted(self._files().items()):
                size = sum(len(c.text.encode()) + 1 for c in self._live(ids))
                rows.append((size, f"{ROOT}/{name}"))
        extra = ""
        if folder in (ROOT, CRYSTALS):
            store = self.ws.store
            newest = store.crystals.select(newest_first=True, limit=LISTED_CRYSTALS)
            rows.extend((len(c.text.encode()), f"{CRYSTALS}/{c.id}.md") for c in newest)
            more = store.crystals.crystal_count() - store.forgetting.tombstone_count() - len(newest)
            if more > 0:
                extra = f"\n({more} older crystals not listed: view {CRYSTALS}/ID.md by id)"
        header = f"Here're the files and directories in {folder} (MEMORY.md is read-only):"
        return header + "\n" + "\n".join(f"{_size(n)}\t{p}" for n, p in rows) + extra

    def _read(self, path: str) -> str:
        if path == STATE:
            return self.ws.read_memory()
        if path.startswith(CRYSTALS + "/"):
            crystal = self._crystal(path)
            head = (
                f"<!-- crystal {crystal.id}: {crystal.semantic_type}, importance "
                f"{crystal.importance:.2f}, source {crystal.source}, {crystal.lifecycle}, "
                f"created {crystal.created_at} -->"
            )
            return f"{head}\n{crystal.text}"
        name = self._note_name(path)
        files = self._files()
        if name not in files:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        return "\n".join(c.text for c in self._live(files[name]))

    def _crystal(self, path: str) -> Crystal:
        stem = posixpath.basename(path).removesuffix(".md")
        if posixpath.dirname(path) != CRYSTALS or not stem.isdigit():
            raise ToolError(f"The path {path} does not exist; crystals are {CRYSTALS}/ID.md")
        try:
            return self.ws.get(int(stem))
        except DreamError as e:
            raise ToolError(f"The path {path} does not exist ({e})") from None

    def _note_name(self, path: str) -> str:
        if not path.startswith(NOTES + "/"):
            if path.startswith(CRYSTALS):
                raise ToolError(
                    f"{CRYSTALS} is read-only (delete forgets one); write notes under {NOTES}/"
                )
            raise ToolError(f"Only files under {NOTES}/ can be written; e.g. {NOTES}/topic.md")
        return path[len(ROOT) + 1 :]

    def _files(self) -> dict[str, list[int]]:
        raw = self.ws.store.records.get_meta(FILES_KEY)
        return json.loads(raw) if raw else {}

    def _save(self, files: dict[str, list[int]]) -> None:
        self.ws.store.records.set_meta(FILES_KEY, json.dumps(files, sort_keys=True))

    def _live(self, ids: list[int]) -> list[Crystal]:
        by_id = {
            c.id: c
            for c in self.ws.store.crystals.crystals_by_id(ids)
            if c.lifecycle != "forgotten"
        }
        return [by_id[i] for i in ids if i in by_id]

    def _note(self, text: str) -> int:
        if not text.strip():
            raise ToolError("The note is empty; write what to remember")
        try:
            return self.ws.note(text, at=self.clock())
        except DreamError as e:
            raise ToolError(f"The note was not saved: {e}") from None

    def _forget(self, ids: list[int], reason: str) -> None:
        try:
            self.ws.forget(ids, reason=reason, now=self.clock())
        except DreamError as e:
            raise ToolError(f"Nothing was forgotten: {e}") from None


def _checked(path: str) -> str:
    """The normalised path under /memories, or ToolError (as the SDK's file backend refuses)."""
    if not path.startswith(ROOT):
        raise ToolError(f"Path must start with /memories, got: {path}")
    if "\\" in path or "\x00" in path or unencodable(path) is not None:
        raise ToolError(f"Path {path} holds a character a memory path cannot hold")
    normal = posixpath.normpath(path)
    if normal != ROOT and not normal.startswith(ROOT + "/"):
        raise ToolError(f"Path {path} would escape /memories directory")
    return normal


def _size(n: int) -> str:
    """A size as the SDK's file backend shows one: bytes, else K or M with one decimal."""
    if n < 1024:
        return f"{n}B"
    return f"{n / 1024:.1f}K" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f}M"
