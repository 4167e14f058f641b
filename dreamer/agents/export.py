"""Take your memory with you: a whole workspace as one JSONL file, and back.

The user guide: docs/guides/export-import.md.

``export_all`` writes, one JSON object a line: a header, MEMORY.md's committed state, every
crystal with its provenance (no vector: the importing side embeds with its own embedder),
every tombstone (what a forget kept: never the text), the dream journal, and the memory
tool's note files. ``import_all`` restores such a file into an empty workspace on either
backend; crystal ids come out as they went in (both stores number a workspace's crystals
1, 2, 3 ... and never reuse an id), so references between records hold. Journal ids are the
store's own and may differ; the journal keeps its order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamer.agents import export_records
from dreamer.dream.journal import plural
from dreamer.errors import UsageError
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.reindex import embed_waiting
from dreamer.store import Crystal, NewCrystal, content_hash
from dreamer.support.files import atomic_write, write_chosen
from dreamer.support.progress import Progress, offset
from dreamer.support.times import iso, parse_iso
from dreamer.support.version import __version__

FORMAT = "dreamer-export"
VERSION = 1
NOTE_FILES_KEY = "memory_tool.files"  # the memory tool's note files (dreamer.agents.memory_tool)
# Crystal fields the file carries; the store derives the rest (vector, index entry).
CRYSTAL_FIELDS = (
    "id",
    "text",
    "source",
    "semantic_type",
    "importance",
    "lifecycle",
    "created_at",
    "updated_at",
    "last_accessed_at",
    "access_count",
    "dopamine",
    "cortisol",
    "oxytocin",
    "content_hash",
    "parent_id",
    "origin",
    "consolidated_at",
    "about",
    "replaces",
    "speaker",
)  # an older export has no about, replaces or speaker: they come back empty


@dataclass
class Counts:
    """What an export wrote or an import restored."""

    crystals: int = 0
    tombstones: int = 0
    dreams: int = 0
    memory: bool = False
    note_files: int = 0
    by_type: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """One line for the CLI."""
        state = "MEMORY.md" if self.memory else "no MEMORY.md"
        return (
            f"{self.crystals} crystals, {self.tombstones} tombstones (no text), "
            f"{self.dreams} journal entries, {state}"
        )


def records(ws: Workspace, now: datetime) -> Iterator[dict[str, Any]]:
    """The export's records, in file order (header first)."""
    store = ws.store
    crystals = store.crystals.select()
    tombstones = store.forgetting.tombstones()
    dream_ids = [row["id"] for row in reversed(store.journal.dream_entries(limit=2**62))]
    memory = ws.read_memory(errors="replace")
    files = store.records.get_meta(NOTE_FILES_KEY)
    yield {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "dreamer": __version__,
        "exported_at": iso(now),
        "counts": {
            "crystals": len(crystals),
            "tombstones": len(tombstones),
            "dreams": len(dream_ids),
        },
    }
    if memory:
        yield {"type": "memory", "text": memory}
    rows: list[tuple[int, dict[str, Any]]] = [(c.id, _crystal(c)) for c in crystals]
    rows += [(t["crystal_id"], {"type": "tombstone", **t}) for t in tombstones]
    for _, row in sorted(rows, key=lambda pair: pair[0]):
        yield row
    for dream_id in dream_ids:
        yield {"type": "dream", **store.journal.get_dream(dream_id)}
    if files:
        yield {"type": "note_files", "files": json.loads(files)}


def _crystal(crystal: Crystal) -> dict[str, Any]:
    data = crystal.to_dict()
    return {"type": "crystal", **{key: data[key] for key in CRYSTAL_FIELDS}}


def export_all(
    ws: Workspace, to: Path, now: datetime, *, progress: Progress | None = None
) -> Counts:
    """Write the whole workspace to ``to`` as JSONL (atomically, owner-only); what it held.

    ``progress(done, total)`` counts records (crystals, tombstones and journal entries)."""
    counts = Counts()
    lines = []
    total = 0
    for row in records(ws, now):
        _count(counts, row)
        lines.append(json.dumps(row, ensure_ascii=False, sort_keys=True, default=str))
        if row["type"] == "header":
            total = sum(row["counts"].values())
        elif progress and row["type"] in ("crystal", "tombstone", "dream"):
            progress(counts.crystals + counts.tombstones + counts.dreams, total)
    write_chosen(to, "\n".join(lines) + "\n", "--to")  # a missing folder is one error line
    return counts


def _count(counts: Counts, row: dict[str, Any]) -> None:
    kind = row["type"]
    counts.by_type[kind] = counts.by_type.get(kind, 0) + 1
    if kind == "crystal":
        counts.crystals += 1
    elif kind == "tombstone":
        counts.tombstones += 1
    elif kind == "dream":
        counts.dreams += 1
    elif kind == "memory":
        counts.memory = True
    elif kind == "note_files":
        counts.note_files = len(row["files"])


def read(path: Path) -> list[dict[str, Any]]:
    """The records of an export file, checked; UsageError names the line and what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"{path} does not exist; pass the file 'dream export --all' wrote"
        ) from None
    except UnicodeDecodeError as e:
        raise UsageError(
            f"{path} is not UTF-8 text (byte {e.start} cannot be read), so not a dreamer "
            "export; pass the JSONL file 'dream export --all' wrote"
        ) from None
    except OSError as e:
        raise UsageError(f"cannot read {path} ({e.strerror}); pass a readable export file") from e
    rows, lines = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise UsageError(
                f"{path} line {number} is not JSON ({e.msg}); is it an export?"
            ) from None
        if not isinstance(row, dict) or "type" not in row:
            raise UsageError(f"{path} line {number} has no record type; is it an export?")
        rows.append(row)
        lines.append(number)
    if not rows or rows[0].get("format") != FORMAT:
        raise UsageError(f"{path} is not a dreamer export (its first line is no export header)")
    if rows[0].get("version") != VERSION:
        raise UsageError(
            f"{path} is export version {rows[0].get('version')}; this dreamer reads version "
            f"{VERSION}: import it with the dreamer that wrote it, or a newer one"
        )
    known = {"header", "memory", "crystal", "tombstone", "dream", "note_files"}
    for number, row in enumerate(rows, 1):
        if row["type"] not in known:
            raise UsageError(f"{path} record {number} has unknown type {row['type']!r}")
    for number, row in zip(lines, rows, strict=True):
        export_records.check(path, number, row)
    return rows


def import_all(
    ws: Workspace,
    rows: Iterable[dict[str, Any]],
    now: datetime,
    *,
    progress: Progress | None = None,
) -> Counts:
    """Restore an export into this workspace, which must be empty; what was restored.

    The store's part lands in one transaction (all or nothing); MEMORY.md is written last,
    under the workspace lock, as a dream would write it. Then every crystal gets a vector,
    a bounded batch at a time. ``progress(done, total)`` counts records restored, then
    crystals embedded.
    """
    rows = list(rows)
    total = len(rows) + sum(1 for row in rows if row["type"] == "crystal")
    store = ws.store
    held = (
        store.crystals.max_crystal_id() or 0,
        len(store.journal.dream_entries(2**62)),
        bool(ws.read_memory(errors="replace")),
    )
    if any(held):
        raise UsageError(_not_empty(ws, rows, held))
    counts = Counts()
    memory = None
    with ws.lock(), store.transaction():
        history: list[tuple[int, dict[str, Any]]] = []
        for number, row in enumerate(rows, 1):
            _count(counts, row)
            if progress:
                progress(number, total)
            kind = row["type"]
            if kind in ("crystal", "tombstone"):
                expected = int(row["id"] if kind == "crystal" else row["crystal_id"])
                if kind == "crystal":
                    got = _restore(ws, row)
                else:
                    got = store.forgetting.restore_tombstone(row, now)
                if got != expected:
                    raise UsageError(
                        f"crystal {expected} of the export came in as {got}: the export skips "
                        "ids, so it was not written by 'dream export --all'"
                    )
                if kind == "crystal":
                    history.append((got, row))
            elif kind == "dream":
                store.journal.record_dream(
                    {k: v for k, v in row.items() if k not in ("type", "id")}
                )
            elif kind == "note_files":
                store.records.set_meta(NOTE_FILES_KEY, json.dumps(row["files"], sort_keys=True))
            elif kind == "memory":
                memory = ws.redact(row["text"]).text
        for crystal_id, row in history:
            # After every row is in: a parent may have a higher id than its child.
            store.crystals.update_crystal(
                crystal_id,
                {
                    "parent_id": row["parent_id"],
                    "last_accessed_at": row["last_accessed_at"],
                    "access_count": row["access_count"],
                },
                action="imported",
                at=parse_iso(row["updated_at"]),
            )
        if memory is not None:
            ws.write_memory(memory, now)
    embed_waiting(
        store,
        ws.embedder,
        limit=max(1, counts.crystals),
        progress=offset(progress, len(rows), total),
    )
    if progress:
        progress(total, total)
    return counts


def _not_empty(ws: Workspace, rows: list[dict[str, Any]], held: tuple[int, int, bool]) -> str:
    """Why an import is refused: what the workspace holds, and what to do about it."""
    crystals, dreams, memory = held
    have = f"{plural(crystals, 'crystal id')}, {plural(dreams, 'journal row')}"
    have += " and MEMORY.md" if memory else ""
    wanted = (
        sum(1 for row in rows if row["type"] in ("crystal", "tombstone")),
        sum(1 for row in rows if row["type"] == "dream"),
    )
    if (crystals, dreams) == wanted:
        return (
            f"the workspace at {ws.root} is not empty: it already holds what this export holds "
            f"({have}), as an import stopped while it embedded leaves it; nothing to import "
            f"again: 'dream reindex -w {ws.root}' embeds what still waits"
        )
    return (
        f"the workspace at {ws.root} is not empty (it holds {have}); import into a new one: "
        "dream import FILE -w NEW_FOLDER"
    )


def _restore(ws: Workspace, row: dict[str, Any]) -> int:
    """Add one exported crystal as it was, its text redacted as a note's is; its id."""
    store = ws.store
    # A file from a workspace with redaction off, an older version or a hand edit may hold a
    # secret as it is: it passes the same door as a note.
    text = ws.redact(row["text"]).text
    levels = {k: row[k] for k in ("dopamine", "cortisol", "oxytocin") if row.get(k) is not None}
    crystal = NewCrystal(
        text,
        source=row["source"],
        semantic_type=row["semantic_type"],
        importance=row["importance"],
        at=parse_iso(row["created_at"]),
        hormones=levels,
        lifecycle=row["lifecycle"],
        origin=row["origin"],
        consolidated_at=row["consolidated_at"],
        about=row.get("about"),
        replaces=row.get("replaces"),
        speaker=row.get("speaker"),
    )
    crystal_id, created = store.crystals.add_crystal(crystal)
    if created:
        return crystal_id
    # Two crystals may say the same thing (a redaction can make them so): the store keeps
    # such a one under a variant hash, so add it under a unique text, then put the text back.
    unique = replace(crystal, text=f"{text}\n[import {row['id']}]")
    crystal_id, _ = store.crystals.add_crystal(unique)
    store.forgetting.replace_text(
        crystal_id,
        text,
        embedding=None,
        embedder=None,
        action="imported",
        detail={"same_text_as": store.crystals.find_by_hash(content_hash(text))},
        at=parse_iso(row["created_at"]),
    )
    return crystal_id


def write_markdown(rows: Iterable[dict[str, Any]], folder: Path) -> int:
    """A new folder of Markdown files: MEMORY.md and crystals/ID.md with frontmatter; count.

    Frontmatter values are JSON scalars (valid YAML). Forgotten crystals get no file: a
    tombstone has no text to show. This folder is for reading; import takes the JSONL file.
    """
    (folder / "crystals").mkdir(parents=True, mode=0o700)
    folder.chmod(0o700)
    written = 0
    for row in rows:
        if row["type"] == "memory":
            atomic_write(folder / "MEMORY.md", row["text"])
        elif row["type"] == "crystal":
            front = "\n".join(
                f"{key}: {json.dumps(row.get(key), ensure_ascii=False)}"
                for key in CRYSTAL_FIELDS
                if key != "text"
            )
            atomic_write(
                folder / "crystals" / f"{row['id']}.md", f"---\n{front}\n---\n{row['text']}\n"
            )
        else:
            continue
        written += 1
    return written
