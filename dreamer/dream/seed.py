"""Seed-crystal migration: bring a hand-written MEMORY.md into dreamer without losing a line.

What a migration does, once per workspace:

1. Copies MEMORY.md byte for byte to ``MEMORY.md.seed-backup`` (atomic write). An existing
   backup with the same bytes is reused; one with different bytes is never overwritten: the
   copy goes to the first free ``MEMORY.md.seed-backup.N`` instead.
2. Cuts the text into windows of 400 tokens sharing 80 tokens with the previous one
   (``dreamer.tokens.chunks``, the real tokenizer) and stores each as a crystal: source
   ``seed``, lifecycle ``consolidated``, importance 0.75, in one transaction, embedded at once
   (by a deferred embedder, the default sentence model: at the next search or tick).
3. Sets the meta keys ``seed.migrated_at`` (the run-once flag), ``seed.report`` (what it did)
   and ``seed.first_dream_pending`` = "1". The next dream sees that flag and writes the
   conservative first dream (the original text on top, then the generated state) and clears it.

When is MEMORY.md "written by hand"? When it exists, has some text, has no
``# Working Memory State`` title line (every dreamer-generated state has one) and the journal
holds no committed dream (once a dream has committed, MEMORY.md belongs to the dream cycle,
even if someone later rewrites it by hand). ``ensure_migrated`` runs before the first
dream/tick/serve and migrates only such a file; ``migrate`` (``dream migrate``) says why it
did nothing otherwise. Neither takes the workspace lock (a dream calls ``ensure_migrated``
while holding it); two migrations at once are serialised by ``memory/seed-migrate.lock``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamer.errors import WorkspaceError
from dreamer.memory.state import TITLE, read_memory
from dreamer.memory.workspace import Workspace
from dreamer.store import NewCrystal
from dreamer.support import failures, tokens
from dreamer.support.files import atomic_write
from dreamer.support.locks import hold
from dreamer.support.progress import Progress
from dreamer.support.times import iso

CHUNK_TOKENS = 400
OVERLAP_TOKENS = 80
SEED_IMPORTANCE = 0.75
MIGRATED_KEY = "seed.migrated_at"
REPORT_KEY = "seed.report"
FIRST_DREAM_KEY = "seed.first_dream_pending"
FIRST_DREAM_MARKER = (
    "<!-- Dream-generated working memory follows. "
    "Subsequent dream cycles will gradually integrate the above content. -->"
)
# Journal outcomes that mean "this dream wrote MEMORY.md" (see dreamer.dream).
COMMITTED_OUTCOMES = ("committed", "restored")


@dataclass
class MigrationReport:
    """What a migration did (or why it did nothing)."""

    migrated: bool
    message: str
    chunks: int = 0
    created: int = 0  # chunks that became new crystals (the rest were crystals already)
    crystal_ids: list[int] = field(default_factory=list)
    backup: str | None = None
    bytes: int = 0
    tokens: int = 0
    migrated_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def is_hand_written(ws: Workspace) -> bool:
    """True when MEMORY.md exists with text, has no state title and no dream has committed."""
    text = read_memory(ws.memory_md, errors="replace")
    if not text.strip():
        return False
    if any(line.strip() == TITLE for line in text.splitlines()):
        return False
    return not has_committed_dream(ws)


def has_committed_dream(ws: Workspace) -> bool:
    """True when the journal records a dream that wrote MEMORY.md."""
    return ws.store.journal.latest_dream_id(COMMITTED_OUTCOMES) is not None


def ensure_migrated(ws: Workspace, now: datetime) -> MigrationReport | None:
    """Migrate a hand-written MEMORY.md if that has not happened yet; None when nothing to do."""
    if ws.store.records.get_meta(MIGRATED_KEY) is not None or not is_hand_written(ws):
        return None
    report = migrate(ws, now)
    return report if report.migrated else None


def migrate(ws: Workspace, now: datetime, *, progress: Progress | None = None) -> MigrationReport:
    """Run the seed migration (``dream migrate``); a second run is a no-op that says so.

    ``progress(done, total)`` counts the windows stored."""
    with _migration_lock(ws):
        done_at = ws.store.records.get_meta(MIGRATED_KEY)
        if done_at is not None:
            earlier = json.loads(ws.store.records.get_meta(REPORT_KEY) or "{}")
            return MigrationReport(
                migrated=False,
                message=f"already migrated at {done_at} "
                f"({_crystals(earlier.get('chunks', 0))}); nothing to do",
                backup=earlier.get("backup"),
                migrated_at=done_at,
            )
        data = _read_bytes(ws.memory_md)
        if data is None or not data.strip():
            return MigrationReport(False, f"no hand-written MEMORY.md in {ws.root}; nothing to do")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise WorkspaceError(
                f"{ws.memory_md} is not UTF-8 text ({e.reason} at byte {e.start}); "
                "save it as UTF-8 and run 'dream migrate' again"
            ) from None
        if not is_hand_written(ws):
            return MigrationReport(
                False,
                "MEMORY.md is already dreamer's working memory (it has the state title "
                "or a dream has committed); nothing to migrate",
            )
        backup = _write_backup(ws, data)
        report = _index_seed(ws, text, now, progress)
        report.backup = str(backup)
        report.bytes = len(data)
        report.message = (
            f"migrated MEMORY.md ({len(data):,} bytes, {report.tokens:,} tokens) into "
            f"{_crystals(report.chunks)} ({report.created} new); backup at {backup.name}"
        )
        ws.store.records.set_meta(
            REPORT_KEY,
            json.dumps(
                {
                    "chunks": report.chunks,
                    "created": report.created,
                    "backup": report.backup,
                    "bytes": report.bytes,
                    "tokens": report.tokens,
                }
            ),
        )
        ws.store.records.set_meta(FIRST_DREAM_KEY, "1")
        ws.store.records.set_meta(MIGRATED_KEY, report.migrated_at or iso(now))
        return report


def seed_chunks(text: str) -> list[str]:
    """The seed windows of text: 400 tokens each, 80 shared with the previous window."""
    pieces = tokens.chunks(text, CHUNK_TOKENS, OVERLAP_TOKENS)
    if "\ufffd" in text:
        return pieces
    # A window edge can fall inside a multi-byte character; the overlap holds it whole in the
    # neighbouring window, so the half character decoded as U+FFFD carries nothing.
    return [piece.strip("\ufffd") for piece in pieces]


def _index_seed(
    ws: Workspace, text: str, now: datetime, progress: Progress | None = None
) -> MigrationReport:
    pieces = [piece for piece in seed_chunks(text) if piece.strip()]
    ids: list[int] = []
    before = _crystal_count(ws)
    # One transaction: the migration lands whole or not at all.
    with ws.store.transaction():
        for number, piece in enumerate(pieces, start=1):
            ids.append(
                ws.index(
                    NewCrystal(
                        piece,
                        importance=SEED_IMPORTANCE,
                        at=now,
                        source="seed",
                        lifecycle="consolidated",
                        origin=f"MEMORY.md#chunk-{number}",
                    )
                )
            )
            if progress:
                progress(number, len(pieces))
    return MigrationReport(
        migrated=True,
        message="",
        chunks=len(pieces),
        created=_crystal_count(ws) - before,
        crystal_ids=ids,
        tokens=tokens.count(text),
        migrated_at=iso(now),
    )


def _crystals(count: int) -> str:
    return f"{count} seed crystal{'' if count == 1 else 's'}"


def _crystal_count(ws: Workspace) -> int:
    return ws.store.crystals.crystal_count()


def _write_backup(ws: Workspace, data: bytes) -> Path:
    """Write the byte-for-byte backup without ever replacing a different existing one."""
    candidate = ws.seed_backup
    number = 1
    while True:
        existing = _read_bytes(candidate)
        if existing == data:
            return candidate
        if existing is None:
            try:
                atomic_write(candidate, data)
            except OSError as e:
                raise WorkspaceError(
                    f"cannot write {candidate} ({e.strerror}); make {ws.root} writable"
                ) from e
            return candidate
        number += 1
        candidate = ws.seed_backup.with_name(f"{ws.seed_backup.name}.{number}")


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise failures.cannot_read(e, path, WorkspaceError) from e


@contextlib.contextmanager
def _migration_lock(ws: Workspace) -> Iterator[None]:
    """Hold the exclusive, blocking lock ``memory/seed-migrate.lock``."""
    with hold(ws.memory_dir / "seed-migrate.lock"):
        yield
