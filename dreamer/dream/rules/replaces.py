"""Replaces: a note that names what it replaces (a crystal id or the old words) supersedes it,
and of notes that say they are about the same thing, the newest holds.

This is structure the writer gave (``Workspace.note(..., replaces=...)``, ``dream note
--replaces``, the note tool's ``replaces``), so it wins over every guess: the named crystal,
or the one earlier statement that holds most of the old words, is superseded exactly.
"""

from __future__ import annotations

import re
from typing import Any

from dreamer.memory.scratch import Note
from dreamer.store import Crystal, Store
from dreamer.support.times import iso
from dreamer.support.words import stems

_ID = re.compile(r"^\s*(?:#|crystal\s*#?|id\s*)?(?P<id>\d+)\s*$", re.IGNORECASE)
WORDS_HELD = 0.6  # old words: the statement replaced holds at least this share of them


def find_replaced(
    store: Store, crystals: list[Crystal], notes: list[Note], items: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Pairs (older, newer) for each new note with ``replaces``, in the contradictions' shape."""
    newer: list[tuple[str, dict[str, Any]]] = [
        (c.replaces, {"id": c.id, "text": c.text, "at": c.created_at, "source": "crystal"})
        for c in crystals
        if c.replaces
    ]
    newer += [
        (n.replaces, {"id": None, "text": n.text, "at": iso(n.at), "source": "note"})
        for n in notes
        if n.replaces
    ]
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for replaces, item in newer:
        if item["text"] in seen:
            continue
        seen.add(item["text"])
        older = _named(store, replaces) or _worded(replaces, item, items)
        if older is not None and older["text"] != item["text"]:
            found.append({"kind": "replaces", "subject": [replaces], "older": older, "newer": item})
    return found


def find_same_about(store: Store, crystals: list[Crystal]) -> list[dict[str, Any]]:
    """Pairs (older, newer): a new note about what an earlier note was about supersedes it."""
    found: list[dict[str, Any]] = []
    for crystal in sorted(crystals, key=lambda c: (c.created_at, c.id)):
        if not crystal.about:
            continue
        earlier = [
            c
            for c in store.crystals.crystals_about(crystal.about)
            if (c.created_at, c.id) < (crystal.created_at, crystal.id) and c.text != crystal.text
        ]
        if earlier:
            older = max(earlier, key=lambda c: (c.created_at, c.id))
            found.append(
                {
                    "kind": "replaces",
                    "subject": [crystal.about],
                    "older": _side(older),
                    "newer": _side(crystal),
                }
            )
    return found


def _side(crystal: Crystal) -> dict[str, Any]:
    return {"id": crystal.id, "text": crystal.text, "at": crystal.created_at, "source": "crystal"}


def _named(store: Store, replaces: str) -> dict[str, Any] | None:
    match = _ID.match(replaces)
    if not match:
        return None
    found = store.crystals.crystals_by_id([int(match["id"])])
    if not found or found[0].lifecycle == "forgotten":
        return None
    crystal = found[0]
    return {"id": crystal.id, "text": crystal.text, "at": crystal.created_at, "source": "crystal"}


def _worded(
    replaces: str, newer: dict[str, Any], items: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The earlier statement holding most of the old words (ties: the newest), if one does."""
    wanted = stems(replaces)
    if not wanted:
        return None
    best: tuple[float, str, dict[str, Any]] | None = None
    for item in items:
        if item["text"] == newer["text"] or (item["at"] or "") > (newer["at"] or ""):
            continue
        share = len(wanted & stems(item["text"])) / len(wanted)
        if share >= WORDS_HELD and (best is None or (share, item["at"] or "") > best[:2]):
            best = (share, item["at"] or "", item)
    return best[2] if best else None
