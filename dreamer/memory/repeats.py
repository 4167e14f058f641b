"""How often, and when last, the same text was written as a note.

Identical notes are one crystal (by content hash), so the crystal alone cannot say that a chore
is done every day. Each time a note repeats a crystal's text, the audit log gets a ``seen`` row
at the note's time, and a crystal that a dream already consolidated (or that faded into the
archive) is pending again: the repeat reaches the next dream instead of vanishing into its
crystal. ``of`` reads the count and the last time back for the dream's note lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the contract, for annotations: a note that repeats one need not load it
    from dreamer.store import Store

SEEN = "seen"  # the audit action of a repeated note
REOPENED = ("consolidated", "archived")  # lifecycles a repeat makes pending again
HISTORY = 10_000  # audit rows of one crystal read to count its repeats


@dataclass(frozen=True)
class Sighting:
    """How many times a text was written (the first time included) and when last."""

    seen: int
    last: str  # ISO time of the newest writing


def record(store: Store, crystal_id: int, at: datetime) -> None:
    """Count one more writing of crystal ``crystal_id``'s text, and make it pending again."""
    crystal = store.crystals.get(crystal_id)
    reason = "the same note was written again"
    if crystal.lifecycle in REOPENED:
        store.crystals.update_crystal(
            crystal_id,
            {"lifecycle": "generated", "consolidated_at": None},
            action=SEEN,
            at=at,
            reason=reason,
        )
    else:
        store.records.audit(crystal_id, SEEN, {"reason": reason}, at)


def of(store: Store, crystals: Iterable[tuple[int, str]]) -> dict[int, Sighting]:
    """The sightings of crystals given as (id, created_at): only those written more than once."""
    out: dict[int, Sighting] = {}
    for crystal_id, created_at in crystals:
        times = [
            row["at"]
            for row in store.records.audit_entries(crystal_id, HISTORY)
            if row["action"] == SEEN
        ]
        if times:
            out[crystal_id] = Sighting(1 + len(times), max([created_at, *times]))
    return out


def mark(store: Store) -> int:
    """The id of the newest audit row (0 for none): what ``since`` counts from."""
    newest = store.records.audit_entries(None, 1)
    return int(newest[0]["id"]) if newest else 0


def since(store: Store, crystal_ids: Iterable[int], after: int) -> set[int]:
    """Those of ``crystal_ids`` whose text was written again after audit row ``after``."""
    return {
        crystal_id
        for crystal_id in crystal_ids
        if any(
            row["action"] == SEEN and int(row["id"]) > after
            for row in store.records.audit_entries(crystal_id, HISTORY)
        )
    }


def latest(store: Store, rows: int = HISTORY) -> dict[int, str]:
    """When each crystal's text was last written again, from the newest ``rows`` audit rows."""
    return store.records.latest_actions(SEEN, rows)
