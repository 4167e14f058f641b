"""Pinned facts: lines a person writes that every dream must keep (one more guard).

A pin is a crystal whose lifecycle is ``frozen`` (the store's word for pinned): ``dream pin
"…"`` makes one, ``dream unpin ID`` thaws it back to ``consolidated``, ``dream pins`` lists them,
and forgetting a pinned crystal (``dream forget``) removes the pin with it. So pins live in the
store of either backend (SQLite or PostgreSQL) without a table of their own, are searchable like
any memory, and never fade (the lifecycle ages no frozen crystal).

By hand: a MEMORY.md line ending in ``(pinned)`` (``- Maya's deadline is 2026-03-24 (pinned)``)
is pinned by the next dream, which reads it before it writes anything.

Every pin goes to the model with the dream's instructions, and the guard checks each candidate:
the pin is *kept* when one line of the state holds most of its content words (stems, so
"deadline"/"deadlines" match) and every value it names (dates, amounts, numbers); it is
*contradicted* when the line about it names other values instead; otherwise it is *dropped*.
The critique names the pin; a revision that still fails is rejected like any other.
"""

from __future__ import annotations

import re
from datetime import datetime

from dreamer.dream import guards
from dreamer.errors import NoteTooLarge, PinNotFound, UsageError
from dreamer.memory import state as wm
from dreamer.memory.workspace import Workspace
from dreamer.store import Crystal, NewCrystal
from dreamer.support.encoding import require_utf8
from dreamer.support.words import stems

MARKER = "(pinned)"
PINNED = "frozen"
KEEP_SHARE = 0.6  # of a pin's content words one state line must hold
_VALUE = re.compile(r"\d[\d.,:/-]*\d|\d")
_BULLET = re.compile(r"^\s*([-*•]|\d+[.)])\s+")


def listed(ws: Workspace) -> list[Crystal]:
    """Every pinned fact, oldest first."""
    return ws.store.crystals.select(lifecycles=[PINNED])


def ids(ws: Workspace) -> set[int]:
    """The ids of the pinned facts."""
    return {crystal.id for crystal in listed(ws)}


def evidence(ws: Workspace, pool: list[Crystal]) -> list[Crystal]:
    """The pinned facts not in a dream's pool yet: every dream is given them."""
    have = {crystal.id for crystal in pool}
    return [crystal for crystal in listed(ws) if crystal.id not in have]


def pin(ws: Workspace, text: str, now: datetime) -> int:
    """Pin a fact (a new crystal, or the crystal that already holds this text); its id."""
    limit = ws.settings.note_max_chars  # a pin is a note every dream keeps: no longer than one
    if len(text) > limit:
        raise NoteTooLarge(
            f"the pin is {len(text):,} characters, over the limit of {limit:,} "
            "(memory.note.maxChars); nothing was pinned: pin one short fact"
        )
    require_utf8(text, "pin")
    cleaned = _BULLET.sub("", text.replace(MARKER, "")).strip()
    if not cleaned:
        raise UsageError(
            'a pin needs the fact to keep, e.g. dream pin "Maya\'s deadline is 24 March"'
        )
    crystal_id = ws.index(
        NewCrystal(
            cleaned, importance=1.0, at=now, source="memory", lifecycle=PINNED, origin="pinned"
        )
    )
    if ws.store.crystals.get(crystal_id).lifecycle != PINNED:  # the text was a crystal already
        ws.store.crystals.update_crystal(crystal_id, {"lifecycle": PINNED}, action="pinned", at=now)
    return crystal_id


def unpin(ws: Workspace, crystal_id: int, now: datetime) -> Crystal:
    """Thaw a pin back into an ordinary consolidated crystal; PinNotFound if it is no pin."""
    pinned = {crystal.id: crystal for crystal in listed(ws)}
    if crystal_id not in pinned:
        raise PinNotFound(f"no pinned fact has id {crystal_id}; list them with 'dream pins'")
    ws.store.crystals.update_crystal(
        crystal_id, {"lifecycle": "consolidated"}, action="unpinned", at=now
    )
    return pinned[crystal_id]


def from_memory(ws: Workspace, memory_text: str, now: datetime) -> list[int]:
    """Pin every MEMORY.md line a person marked ``(pinned)``; the pins' ids."""
    ids = []
    for line in memory_text.split("\n"):
        if line.rstrip().endswith(MARKER):
            ids.append(pin(ws, line, now))
    return ids


def instructions(ws: Workspace, text: str) -> str:
    """The dream's instructions with the pinned facts appended (unchanged without pins)."""
    facts = [crystal.text for crystal in listed(ws)]
    if not facts:
        return text
    block = "Pinned facts: the user pinned these; state each one, with its values, in the state:"
    lines = "\n".join(f"- {fact}" for fact in facts)
    return f"{text.rstrip()}\n\n{block}\n{lines}\n".lstrip()


def verdict(fact: str, state_text: str) -> tuple[str, str | None]:
    """("kept" | "contradicted" | "dropped", the state line that speaks of it)."""
    wanted, values = stems(fact), set(_VALUE.findall(fact))
    best, best_share = None, 0.0
    for line in state_text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        share = len(wanted & stems(line)) / len(wanted) if wanted else 0.0
        if values and values <= set(_VALUE.findall(line)):
            share += 1.0  # every value named: this is the line about it
        if share > best_share:
            best, best_share = line.strip(), share
    if best is None:
        return "dropped", None
    words = len(wanted & stems(best)) / len(wanted) if wanted else 1.0
    named = set(_VALUE.findall(best))
    if words >= KEEP_SHARE and values <= named:
        return "kept", best
    if words >= KEEP_SHARE and values and named - values:
        return "contradicted", best
    return "dropped", None


def critiques(ws: Workspace, state: wm.WorkingMemory) -> list[str]:
    """One critique per pinned fact the state drops or contradicts."""
    text = wm.render(state)
    out = []
    for crystal in listed(ws):
        outcome, line = verdict(crystal.text, text)
        if outcome == "dropped":
            out.append(
                f'pinned fact #{crystal.id} dropped: "{crystal.text}"; the user pinned it, so '
                "state it, with its values, in the section it belongs to"
            )
        elif outcome == "contradicted":
            out.append(
                f'pinned fact #{crystal.id} contradicted: the state says "{line}" but the pin '
                f'says "{crystal.text}"; keep the pinned values'
            )
    return out


def guard(ws: Workspace, state: wm.WorkingMemory, report: guards.GuardReport) -> None:
    """Add the pin critiques to a guard report."""
    found = critiques(ws, state)
    report.critiques.extend(found)
    report.failed.extend(["pins"] * len(found))
