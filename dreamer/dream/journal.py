"""The dream journal: one row per dream in the ``dreams`` table, and what can be done with it.

Outcomes: ``committed`` (MEMORY.md rewritten), ``skipped`` (not enough new notes),
``rejected`` (the guards refused every candidate), ``failed`` (the synthesizer or a step
raised), ``deferred`` (MEMORY.md was edited by hand while the dream ran, twice: the edit stands
and the notes wait), ``restored`` (``dream restore`` put an earlier state back). JSON
columns: ``inputs``, ``critiques`` (a list of critique lists, one per checked candidate),
``revisions`` (the text of each revised candidate), ``consumed`` (crystal ids).
"""

from __future__ import annotations

import difflib
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamer.errors import UsageError
from dreamer.store.base import Leasing
from dreamer.support.files import atomic_write, write_chosen
from dreamer.support.times import iso


def candidate_text(entry: dict[str, Any]) -> str | None:
    """What a dream wrote (committed/restored) or would have written (its last candidate)."""
    if entry.get("new_state"):
        return entry["new_state"]
    revisions = entry.get("revisions") or []
    return revisions[-1] if revisions else entry.get("draft")


def diff(entry: dict[str, Any]) -> str:
    """A unified diff of MEMORY.md before and after the dream (or its last candidate)."""
    after = candidate_text(entry)
    if after is None:
        raise UsageError(
            f"dream {entry['id']} ({entry['outcome']}) wrote nothing to compare; "
            "pick a committed dream from 'dream log'"
        )
    before = entry.get("old_state") or ""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"MEMORY.md before dream {entry['id']}",
        tofile=f"MEMORY.md after dream {entry['id']}",
    )
    return "".join(lines)


def restore(ws: Any, dream_id: int, now: datetime, *, before: bool = False) -> int:
    """Put back the MEMORY.md a dream wrote (or, with before, the one it replaced); journal it.

    Takes the workspace lock, so it never races a dream. Returns the new journal row's id.
    """
    with ws.lock():
        entry = ws.store.journal.get_dream(dream_id)
        text = entry.get("old_state") if before else entry.get("new_state")
        if text is None:
            which = "the state before it" if before else "a committed state"
            raise UsageError(
                f"dream {dream_id} ({entry['outcome']}) has no record of {which}; "
                "pick a committed dream from 'dream log'"
            )
        current = ws.read_memory(errors="replace")  # restore mends a damaged file
        ws.write_memory(text, now)
        side = "before" if before else "after"
        return ws.store.journal.record_dream(
            {
                "started_at": iso(now),
                "finished_at": iso(now),
                "outcome": "restored",
                "reason": f"restored MEMORY.md as it was {side} dream {dream_id}",
                "old_state": current,
                "new_state": text,
                "inputs": {"restored_from": dream_id, "side": side},
            }
        )


def export(ws: Any, to: Path | None = None) -> tuple[Path, str]:
    """Write the committed state to ``to`` (default: the workspace's MEMORY.md); (path, from).

    On a shared (PostgreSQL) store the state row is the truth, so a machine that never ran the
    dream can have MEMORY.md; elsewhere the newest committed or restored state in the journal.
    """
    store = ws.store
    text, source = None, "journal"
    if isinstance(store, Leasing):
        row = store.read_state()
        if row is not None:
            text, source = row[0], f"state row (token {row[1]}, written {row[2]})"
    if text is None:
        latest = store.journal.latest_dream_id()
        if latest is not None:
            text = store.journal.get_dream(latest).get("new_state")
            source = f"journal (dream {latest})"
    if text is None:
        raise UsageError("no dream has committed a state yet; run 'dream run' first")
    if to is None:
        atomic_write(ws.memory_md, text)
        return ws.memory_md, source
    write_chosen(to, text, "--to")
    return to, source


def input_tokens(row: dict[str, Any]) -> int:
    """Every input token of a journal row (or of the totals): sent at the full rate, read from
    the prompt cache and written to it."""
    keys = ("input_tokens", "cache_read_tokens", "cache_write_tokens")
    return sum(int(row.get(key) or 0) for key in keys)


def plural(count: int, noun: str) -> str:
    """``1 dream``, ``2 dreams``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


RATE_WINDOW = 20  # recent dreams of a synthesizer that say how often it revises


def revision_rate(store: Any, synthesizer: str | None, limit: int = RATE_WINDOW) -> float | None:
    """Revisions per dream of ``synthesizer`` over its last ``limit`` synthesized dreams
    (committed or rejected), from the journal; None when it has none yet."""
    rounds = []
    for entry in store.journal.dream_entries(limit * 3):
        if entry.get("synthesizer") != synthesizer or entry.get("outcome") not in (
            "committed",
            "rejected",
        ):
            continue
        full = store.journal.get_dream(entry["id"])
        rounds.append(len(full.get("revisions") or []))
        if len(rounds) >= limit:
            break
    return sum(rounds) / len(rounds) if rounds else None
