"""The dream journal: one row per dream in the ``dreams`` table, and what can be done with it.

Outcomes: ``committed`` (MEMORY.md rewritten), ``skipped`` (not enough new notes),
``rejected`` (the guards refused every candidate), ``failed`` (the synthesizer or a step
raised), ``restored`` (``dream restore`` put an earlier state back). JSON columns: ``inputs``,
``critiques`` (a list of critique lists, one per checked candidate), ``revisions`` (the text of
each revised candidate), ``consumed`` (crystal ids).
"""

from __future__ import annotations

import difflib
import json
from datetime import datetime
from typing import Any

from .errors import DreamNotFound, UsageError
from .files import atomic_write
from .store import Store
from .times import iso

JSON_COLUMNS = ("inputs", "critiques", "revisions", "consumed")
SUMMARY_COLUMNS = ("id", "started_at", "finished_at", "outcome", "reason", "synthesizer",
                   "model", "input_tokens", "output_tokens", "cost_usd")



def record(store: Store, row: dict[str, Any]) -> int:
    """Append one dream to the journal; return its id."""
    values = {key: (json.dumps(value, ensure_ascii=False, default=str)
                    if key in JSON_COLUMNS and value is not None else value)
              for key, value in row.items()}
    columns = ", ".join(values)
    marks = ", ".join("?" * len(values))
    with store.write() as db:
        cursor = db.execute(f"INSERT INTO dreams ({columns}) VALUES ({marks})",
                            list(values.values()))
        return int(cursor.lastrowid)


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    for key in JSON_COLUMNS:
        if row.get(key):
            row[key] = json.loads(row[key])
    return row


def entries(store: Store, limit: int = 20) -> list[dict[str, Any]]:
    """The newest dreams first, summary columns plus counts of consumed notes and critiques."""
    cursor = store.db.execute(
        f"SELECT {', '.join(SUMMARY_COLUMNS)}, consumed, critiques FROM dreams"
        " ORDER BY id DESC LIMIT ?", [int(limit)])
    out = []
    for values in cursor.fetchall():
        row = _decode(dict(zip([*SUMMARY_COLUMNS, "consumed", "critiques"], values,
                               strict=True)))
        row["consumed"] = len(row["consumed"] or [])
        row["critiques"] = sum(len(c) for c in row["critiques"] or [])
        out.append(row)
    return out


def get(store: Store, dream_id: int) -> dict[str, Any]:
    """One dream, every column (JSON columns decoded), or DreamNotFound."""
    cursor = store.db.execute("SELECT * FROM dreams WHERE id = ?", [int(dream_id)])
    values = cursor.fetchone()
    if values is None:
        raise DreamNotFound(f"no dream with id {dream_id}; list them with 'dream log'")
    return _decode(dict(zip([d[0] for d in cursor.description], values, strict=True)))


def latest_id(store: Store, outcomes: tuple[str, ...] = ("committed", "restored")) -> int | None:
    """The id of the newest dream with one of these outcomes."""
    marks = ",".join("?" * len(outcomes))
    row = store.db.execute(
        f"SELECT max(id) FROM dreams WHERE outcome IN ({marks})", list(outcomes)).fetchone()
    return row[0]


def last_committed_at(store: Store) -> str | None:
    """When the newest committed dream finished."""
    row = store.db.execute(
        "SELECT max(finished_at) FROM dreams WHERE outcome = 'committed'").fetchone()
    return row[0]


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
        raise UsageError(f"dream {entry['id']} ({entry['outcome']}) wrote nothing to compare; "
                         "pick a committed dream from 'dream log'")
    before = entry.get("old_state") or ""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=f"MEMORY.md before dream {entry['id']}",
        tofile=f"MEMORY.md after dream {entry['id']}")
    return "".join(lines)


def restore(ws: Any, dream_id: int, now: datetime, *, before: bool = False) -> int:
    """Put back the MEMORY.md a dream wrote (or, with before, the one it replaced); journal it.

    Takes the workspace lock, so it never races a dream. Returns the new journal row's id.
    """
    with ws.lock():
        entry = get(ws.store, dream_id)
        text = entry.get("old_state") if before else entry.get("new_state")
        if text is None:
            which = "the state before it" if before else "a committed state"
            raise UsageError(f"dream {dream_id} ({entry['outcome']}) has no record of {which}; "
                             "pick a committed dream from 'dream log'")
        try:
            current = ws.memory_md.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = ""
        atomic_write(ws.memory_md, text)
        side = "before" if before else "after"
        return record(ws.store, {
            "started_at": iso(now), "finished_at": iso(now), "outcome": "restored",
            "reason": f"restored MEMORY.md as it was {side} dream {dream_id}",
            "old_state": current, "new_state": text, "inputs": {"restored_from": dream_id,
                                                                "side": side},
        })
