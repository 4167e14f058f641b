"""Held crystals: instruction-shaped words from a speaker that may not set rules, for the user.

A tool result, a file or page the agent read, another agent's output or an import may say
"always …" or "from now on …"; so may the agent's own note or answer when it only repeats such
a text. Those words are kept as crystals (searchable, marked with their speaker) in the
lifecycle ``held``: no dream reads them as new memory and no rule in MEMORY.md rests on them
(DESIGN.md, "Who said what"). The user accepts one (it becomes the user's own word, and the
next dream reads it like a note) or forgets it (the ordinary forget, by id).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from dreamer.errors import CrystalNotFound
from dreamer.memory.provenance import echoes, instruction_shaped
from dreamer.memory.workspace import Workspace
from dreamer.store import Crystal
from dreamer.support.times import iso, parse_iso

HELD = "held"
SESSION_SLACK = timedelta(hours=1)  # a note this close to a session's span was written in it
RECENT_NOTES = 500  # the newest notes looked at for a session's echoes


@dataclass(frozen=True)
class Held:
    """One held crystal, as the user reviews it."""

    id: int
    text: str
    speaker: str | None
    source: str
    reason: str
    at: str

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {
            "id": self.id,
            "text": self.text,
            "speaker": self.speaker,
            "source": self.source,
            "reason": self.reason,
            "at": self.at,
        }


def reason_of(crystal: Crystal) -> str:
    """Why a crystal is held, in words the user reads."""
    said = {
        "tool": "a tool result, file or page",
        "subagent": "another agent's output",
        "import": "an imported file",
        "assistant": "the assistant, repeating what it read",
        "agent": "the agent's note, repeating what it read",
    }.get(crystal.speaker or "", "a source that may not set rules")
    return f"instruction-shaped words from {said}"


def _held(crystal: Crystal) -> Held:
    return Held(
        crystal.id,
        crystal.text,
        crystal.speaker,
        crystal.source,
        reason_of(crystal),
        crystal.created_at,
    )


def held_items(ws: Workspace) -> list[Held]:
    """Every held crystal, oldest first."""
    return [_held(c) for c in ws.store.crystals.select(lifecycles=[HELD])]


def held_words(ws: Workspace) -> list[str]:
    """The words of every held crystal (a tool's without its "From …:" label)."""
    return [
        c.text.split(": ", 1)[-1] if c.text.startswith("From ") else c.text
        for c in ws.store.crystals.select(lifecycles=[HELD])
    ]


def count(ws: Workspace) -> int:
    """How many crystals are held."""
    return len(ws.store.crystals.select(lifecycles=[HELD]))


def accept(ws: Workspace, crystal_id: int, *, now: datetime) -> Held:
    """Make a held crystal the user's own word: the next dream reads it like a new note."""
    found = ws.store.crystals.crystals_by_id([crystal_id])
    if not found or found[0].lifecycle != HELD:
        raise CrystalNotFound(f"crystal {crystal_id} is not held; 'dream held' lists the held ones")
    crystal = found[0]
    with ws.lock():
        ws.store.crystals.update_crystal(
            crystal_id,
            {"lifecycle": "generated", "speaker": "user", "consolidated_at": None},
            action="accepted",
            at=now,
        )
    return Held(crystal.id, crystal.text, "user", crystal.source, "accepted by the user", iso(now))


def hold_echoes(
    ws: Workspace, read: list[str], start: datetime, end: datetime, now: datetime
) -> list[int]:
    """Hold the agent's notes written during a session that only repeat what it read there.

    ``read`` are the instructions the session's tools returned; a note of the agent's, written
    between ``start`` and ``end`` (give or take ``SESSION_SLACK``), shaped like an instruction
    and repeating one of them, is the agent steered by what it read: held, not promoted.
    Returns the ids held.
    """
    early, late = start - SESSION_SLACK, end + SESSION_SLACK
    found = []
    for crystal in ws.store.crystals.select(
        sources=["scratch"], newest_first=True, limit=RECENT_NOTES
    ):
        if crystal.speaker != "agent" or crystal.lifecycle not in ("generated", "consolidated"):
            continue
        if not early <= parse_iso(crystal.created_at) <= late:
            continue
        if instruction_shaped(crystal.text) and echoes(crystal.text, read):
            ws.store.crystals.update_crystal(
                crystal.id,
                {"lifecycle": HELD},
                action="held",
                at=now,
                reason="the agent's note repeats what a tool or page said in the same session",
            )
            found.append(crystal.id)
    return found
