"""What the memory page shows: MEMORY.md by line, pins, the candidate, the journal, health.

Every function reads through the same core the CLI reads through (``dream pins``, ``dream
review``, ``dream log``, ``dream status``) and returns JSON-ready values; nothing here writes.

A line's sources: no dream records which crystal each MEMORY.md line came from (the journal
keeps the crystals a dream was given and consumed, not a line-by-line map), so ``sources``
names the crystals nearest to the line by the store's own hybrid search, without logging it
as a search, and the page says so.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from dreamer.dream import pins, review
from dreamer.dream.synth.factory import explain
from dreamer.errors import NoCandidate, UsageError
from dreamer.memory import forget_pending, held
from dreamer.memory.workspace import Workspace

RECENT_DREAMS = 8  # journal rows the page explains
SOURCES = 3  # nearest crystals shown for a line
STAMP = re.compile(r"^_Last dream:.*_$")  # as dreamer.dream.hand_edits reads it
SOURCES_NOTE = (
    "Dreams do not record which crystal each line came from: these are the crystals nearest "
    "to the line by search."
)


def kind(line: str) -> str:
    """A MEMORY.md line's kind: blank, heading, stamp (the last-dream line) or text."""
    if not line.strip():
        return "blank"
    if line.startswith("#"):
        return "heading"
    return "stamp" if STAMP.match(line.strip()) else "text"


def memory_lines(ws: Workspace) -> list[dict[str, Any]]:
    """MEMORY.md as numbered lines, each with its kind."""
    lines = ws.read_memory(errors="replace").split("\n")
    return [{"n": number, "text": line, "kind": kind(line)} for number, line in enumerate(lines)]


def pinned(ws: Workspace) -> list[dict[str, Any]]:
    """The pinned facts, as ``dream pins --json`` lists them."""
    return [{"id": c.id, "text": c.text, "pinned_at": c.created_at} for c in pins.listed(ws)]


def candidate(ws: Workspace) -> dict[str, Any] | None:
    """The candidate waiting for review and its diff from MEMORY.md, or None."""
    if review.waiting(ws) is None:
        return None
    try:
        waiting = review.current(ws)
    except NoCandidate as e:  # a file no dream wrote: the page says what 'dream review' says
        return {"dream_id": None, "diff": "", "stale": False, "problem": str(e)}
    memory = ws.read_memory(errors="replace")
    return {
        "dream_id": waiting.dream_id,
        "written_at": waiting.entry.get("started_at"),
        "diff": review.unified(memory, waiting.text, "MEMORY.md", f"memory/{review.FILENAME}"),
        "stale": memory != waiting.based_on,
        "problem": None,
    }


def _removed(entry: dict[str, Any]) -> list[str]:
    """The lines a dream took out of MEMORY.md (or would have, for a candidate)."""
    before, after = entry.get("old_state"), entry.get("new_state")
    if not before or after is None:
        return []
    kept = {line.strip() for line in after.split("\n")}
    return [
        line.strip()
        for line in before.split("\n")
        if kind(line) == "text" and line.strip() not in kept
    ]


def journal(ws: Workspace, limit: int = RECENT_DREAMS) -> list[dict[str, Any]]:
    """The newest dreams: outcome, reason, lines removed, lines a rule dropped, what waits."""
    out = []
    for summary in ws.store.journal.dream_entries(limit):
        entry = ws.store.journal.get_dream(summary["id"])
        inputs = entry.get("inputs") or {}
        critiques = entry.get("critiques") or []
        out.append(
            {
                "id": entry["id"],
                "at": entry.get("started_at"),
                "outcome": entry.get("outcome"),
                "reason": entry.get("reason") or "",
                "removed": _removed(entry),
                "dropped": inputs.get("dropped_lines") or [],
                "critiques": critiques[-1] if critiques else [],
                "left_pending": inputs.get("left_pending") or 0,
                "pointer_fixes": inputs.get("pointer_fixes") or [],
                "forget_requests": inputs.get("forget_requests") or [],
            }
        )
    return out


def forget_requests(ws: Workspace) -> list[dict[str, Any]]:
    """The forget requests waiting for the user (the one list ``dream forget --pending`` shows)."""
    return [
        {"note_id": item.request_id, "target": item.target, "matches": len(item.matches)}
        for item in forget_pending.pending_forget_requests(ws)
    ]


def health(ws: Workspace, now: datetime) -> dict[str, Any]:
    """What ``dream status`` says: health lines, jobs, counts, spending."""
    from dreamer.service import schedule  # the scheduler's module: only for this part

    info = schedule.status(ws, now)
    info["synthesizer"] = explain(ws.settings)
    return info


def overview(ws: Workspace, now: datetime) -> dict[str, Any]:
    """Everything the page shows on load."""
    return {
        "workspace": str(ws.root),
        "memory": memory_lines(ws),
        "pins": pinned(ws),
        "candidate": candidate(ws),
        "journal": journal(ws),
        "held": [item.to_dict() for item in held.held_items(ws)],
        "forget_requests": forget_requests(ws),
        "health": health(ws, now),
        "sources_note": SOURCES_NOTE,
    }


def sources(ws: Workspace, line: int, now: datetime) -> list[dict[str, Any]]:
    """The crystals nearest to MEMORY.md line ``line`` (see the module docstring)."""
    from dreamer.retrieval.search import search  # numpy: only when asked

    lines = ws.read_memory(errors="replace").split("\n")
    if not 0 <= line < len(lines):
        raise UsageError(f"MEMORY.md has no line {line}; reload the page")
    text = lines[line].strip().lstrip("-*• ").strip()
    if not text or text.startswith("#"):
        return []
    hits = search(ws.store, ws.embedder, ws.settings, text, now=now, limit=SOURCES, record=False)
    return [hit.to_dict() for hit in hits]


def found(ws: Workspace, query: str, now: datetime, limit: int = 10) -> list[dict[str, Any]]:
    """A search as ``dream search`` runs it (logged, counted as an access)."""
    return [hit.to_dict() for hit in ws.search(query, limit=limit, now=now)]
