"""Review mode: a dream writes its candidate beside MEMORY.md, and the user adopts or discards it.

With ``memory.dream.review = true`` a dream that passes the guards writes
``memory/MEMORY.candidate.md`` (atomically) instead of MEMORY.md, journals itself as
``candidate`` with the unified diff in its inputs (``review_diff``), and consumes its notes as a
committed dream would (they become consolidated crystals, still searchable). MEMORY.md stays
byte for byte. While a candidate waits, further dreams are skipped ("a candidate waits"), so no
second candidate silently replaces the first.

- ``dream review`` shows the diff from MEMORY.md to the candidate.
- ``dream adopt`` commits it under the workspace lock, through the same guards a dream passes
  (pinned facts included), and refuses if MEMORY.md changed since the dream read it: adopting
  would lose that change. The candidate may be edited by hand before adopting.
- ``dream discard`` deletes it. The notes it consumed stay consolidated crystals (searchable,
  never lost) unless ``--return-notes`` puts them back in front of the next dream.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamer.dream import guards, pins
from dreamer.errors import CandidateStale, DreamRejected, NoCandidate
from dreamer.memory import state as wm
from dreamer.memory.workspace import Workspace
from dreamer.support.files import atomic_write
from dreamer.support.times import iso

OUTCOME = "candidate"
FILENAME = "MEMORY.candidate.md"


@dataclass
class Candidate:
    """The candidate waiting for review and the journal row of the dream that wrote it."""

    path: Path
    text: str
    dream_id: int
    entry: dict[str, Any]

    @property
    def based_on(self) -> str:
        """The MEMORY.md text the dream read."""
        return self.entry.get("old_state") or ""


def path(ws: Workspace) -> Path:
    """Where the candidate lives: ``memory/MEMORY.candidate.md``."""
    return ws.memory_dir / FILENAME


def unified(before: str, after: str, before_name: str, after_name: str) -> str:
    """A unified diff of two texts."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=before_name,
            tofile=after_name,
        )
    )


def write(ws: Workspace, old_text: str, text: str) -> str:
    """Write the candidate atomically; the diff the journal keeps."""
    atomic_write(path(ws), text)
    return unified(old_text, text, "MEMORY.md", f"memory/{FILENAME}")


def waiting(ws: Workspace) -> str | None:
    """Why a dream must not run now (a candidate waits), or None."""
    if not path(ws).exists():
        return None
    return (
        f"a candidate waits for review in memory/{FILENAME}; 'dream review' shows it, "
        "'dream adopt' commits it, 'dream discard' drops it"
    )


def current(ws: Workspace) -> Candidate:
    """The waiting candidate, or NoCandidate."""
    where = path(ws)
    try:
        text = where.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NoCandidate(
            f"no candidate waits in memory/{FILENAME}; with memory.dream.review = true a dream "
            "writes one"
        ) from None
    dream_id = ws.store.journal.latest_dream_id((OUTCOME,))
    if dream_id is None:
        raise NoCandidate(
            f"memory/{FILENAME} was written by no dream in the journal; delete it or dream again"
        )
    return Candidate(where, text, dream_id, ws.store.journal.get_dream(dream_id))


def show(ws: Workspace) -> str:
    """The diff from MEMORY.md to the candidate, and a warning when MEMORY.md moved since."""
    candidate = current(ws)
    memory = ws.read_memory()
    head = f"Candidate of dream #{candidate.dream_id} ({candidate.entry['started_at']})\n"
    if memory != candidate.based_on:
        head += "MEMORY.md changed since this candidate was written: 'dream adopt' will refuse.\n"
    body = unified(memory, candidate.text, "MEMORY.md", f"memory/{FILENAME}")
    return head + (body or "(no difference)\n")


def adopt(ws: Workspace, now: datetime) -> int:
    """Commit the candidate through the guards; the new journal row's id."""
    with ws.lock():
        candidate = current(ws)
        memory = ws.read_memory()
        if memory != candidate.based_on:
            raise CandidateStale(
                f"MEMORY.md changed since dream #{candidate.dream_id} wrote its candidate; "
                "nothing adopted (see 'dream review', then 'dream discard' and dream again)"
            )
        state, old = wm.parse(candidate.text), wm.parse(memory)
        evidence = [
            c.text for c in ws.store.crystals.crystals_by_id(candidate.entry.get("consumed") or [])
        ]
        report = guards.check(state, old, guards.Context(evidence=evidence))
        critiques = report.critiques + pins.critiques(ws, state)
        if critiques:
            raise DreamRejected(
                f"the guards reject the candidate: {critiques[0]}; MEMORY.md is unchanged "
                f"(edit memory/{FILENAME} or 'dream discard' it)",
                reasons=critiques,
            )
        ws.write_memory(candidate.text, now)
        row = ws.store.journal.record_dream(
            {
                "started_at": iso(now),
                "finished_at": iso(now),
                "outcome": "committed",
                "reason": f"adopted the candidate of dream #{candidate.dream_id}",
                "old_state": memory,
                "new_state": candidate.text,
                "inputs": {"adopted_from": candidate.dream_id},
            }
        )
        candidate.path.unlink(missing_ok=True)
        return row


def discard(ws: Workspace, now: datetime, *, return_notes: bool = False) -> tuple[int, int]:
    """Drop the candidate; (its dream id, notes returned to pending)."""
    with ws.lock():
        candidate = current(ws)
        returned = 0
        if return_notes:
            for crystal in ws.store.crystals.crystals_by_id(candidate.entry.get("consumed") or []):
                if crystal.lifecycle != "consolidated":
                    continue
                ws.store.crystals.update_crystal(
                    crystal.id,
                    {"lifecycle": "generated", "consolidated_at": None},
                    action="returned",
                    at=now,
                    reason=f"candidate of dream {candidate.dream_id} discarded",
                )
                returned += 1
        ws.store.records.audit(
            None,
            "candidate discarded",
            {"dream": candidate.dream_id, "returned": returned},
            now,
        )
        candidate.path.unlink(missing_ok=True)
        return candidate.dream_id, returned
