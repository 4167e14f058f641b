"""What an agent puts in its system prompt: its memory, described and sized to its context window.

The block is ``prompts/bootstrap.md`` filled with MEMORY.md (the committed state) and the
pending scratch notes ("Unsynthesized Notes (pending dream consolidation)"). The whole block,
description included, stays within a character budget picked by the agent's context window:

    context window (tokens)       budget (characters)
    200K and up, or unknown       8,000
    128K up to 200K               6,000
    64K up to 128K                4,000
    below 64K (32K and less)      3,200

A window between two rows gets the smaller row's budget (100K gets 4,000): a budget too small
costs a search, one too large crowds the agent's own context.

Over budget, the notes get what they need up to a quarter of the room (the state at least three
quarters); notes are dropped whole, least important and oldest first. MEMORY.md loses whole
lines, never part of one, from the bottom of its least important section first (``keep_rank``
in ``schemas/working_memory.json``: lower is cut first); a section whose lines are all cut
loses its heading too. Hand-written text (the original above a conservative first dream, or
sections a human added) ranks between Crystal Pointers and The Phenotype: it is safe in the
seed crystals, but it is the user's own words. The title and status line go last. A cut state
ends with ``[Full working memory available via memory_search]``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from dreamer.dream.seed import FIRST_DREAM_MARKER
from dreamer.errors import UsageError
from dreamer.memory import scratch
from dreamer.memory.state import TITLE, sections
from dreamer.memory.workspace import Workspace
from dreamer.store import content_hash
from dreamer.support.prompts import render
from dreamer.support.times import iso

BUDGETS = ((200_000, 8_000), (128_000, 6_000), (64_000, 4_000), (0, 3_200))
UNKNOWN_WINDOW_BUDGET = 8_000
CUT_MARKER = "[Full working memory available via memory_search]"
NOTES_SHARE = 0.25
HAND_RANK = 4.5  # between crystal_pointers (4) and phenotype (5)
TITLE_RANK = 100.0  # cut only when nothing else is left
NO_STATE = "(empty: no dream has written MEMORY.md yet)"
NO_NOTES = "(none pending)"
_WINDOW = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")


@dataclass
class Bootstrap:
    """The bootstrap block and how it was sized."""

    text: str
    context_window: int | None
    budget_chars: int
    chars: int
    state_chars_full: int
    state_chars_shown: int
    state_truncated: bool
    sections_cut: list[str] = field(default_factory=list)
    notes_total: int = 0
    notes_shown: int = 0
    generated_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def parse_window(value: int | str | None) -> int | None:
    """A context window in tokens from ``200000``, ``200k`` or ``1m`` (None stays unknown)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        number = float(value)
    else:
        match = _WINDOW.match(str(value))
        if not match:
            raise UsageError(f"context window {value!r} is not a size; use e.g. 200000 or 128k")
        scale = {"": 1, "k": 1_000, "m": 1_000_000}[match[2].lower()]
        number = float(match[1]) * scale
    if number <= 0:
        raise UsageError(f"context window must be above 0 tokens, not {value!r}")
    return int(number)


def budget_for(context_window: int | None) -> int:
    """The character budget of the bootstrap block for a context window in tokens."""
    if context_window is None:
        return UNKNOWN_WINDOW_BUDGET
    return next(chars for floor, chars in BUDGETS if context_window >= floor)


def bootstrap_block(
    ws: Workspace, context_window: int | None = None, now: datetime | None = None
) -> str:
    """The text an agent puts in its system prompt, within its context window's budget."""
    return bootstrap(ws, context_window, now).text


def bootstrap(
    ws: Workspace, context_window: int | None = None, now: datetime | None = None
) -> Bootstrap:
    """The bootstrap block with its sizing (for ``dream bootstrap --json``)."""
    budget = budget_for(context_window)
    state_text = _read_state(ws)
    notes = _not_held(ws, ws.scratch.notes())
    rendered_notes = [
        scratch.render_note(scratch.Note(n.at, n.importance, n.text)).rstrip("\n") for n in notes
    ]
    state_full = state_text.strip("\n") if state_text.strip() else NO_STATE
    notes_full = "\n".join(rendered_notes) if notes else NO_NOTES
    room = budget - len(render("bootstrap", state="", notes=""))

    shown_notes = len(notes)
    cut: list[str] = []
    state_shown, notes_shown_text = state_full, notes_full
    if len(state_full) + len(notes_full) > room:
        notes_cap = min(len(notes_full), max(room - len(state_full), int(room * NOTES_SHARE)))
        notes_shown_text, shown_notes = fit_notes(notes, rendered_notes, notes_cap)
        state_shown, cut = fit_state(state_full, room - len(notes_shown_text))
    text = render("bootstrap", state=state_shown, notes=notes_shown_text)
    return Bootstrap(
        text=text,
        context_window=context_window,
        budget_chars=budget,
        chars=len(text),
        state_chars_full=len(state_text),
        state_chars_shown=len(state_shown),
        state_truncated=state_shown != state_full,
        sections_cut=cut,
        notes_total=len(notes),
        notes_shown=shown_notes,
        generated_at=iso(now) if now else None,
    )


def _not_held(ws: Workspace, notes: list[scratch.Note]) -> list[scratch.Note]:
    """The pending notes but those held (an agent's note repeating what it read: not shown)."""
    held = {c.content_hash for c in ws.store.crystals.select(lifecycles=["held"])}
    return [n for n in notes if content_hash(n.text) not in held] if held else notes


def fit_notes(notes: list[scratch.Note], rendered: list[str], cap: int) -> tuple[str, int]:
    """Whole notes within cap chars, most important and newest first, shown in log order."""
    if not notes:
        return (NO_NOTES if len(NO_NOTES) <= cap else ""), 0
    order = sorted(range(len(notes)), key=lambda i: (-notes[i].importance, -i))
    kept: set[int] = set()
    for i in order:
        hidden = len(notes) - len(kept) - 1
        trial = [rendered[j] for j in sorted(kept | {i})]
        if hidden:
            trial.append(_hidden_line(hidden))
        if len("\n".join(trial)) <= cap:
            kept.add(i)
    lines = [rendered[j] for j in sorted(kept)]
    if len(kept) < len(notes):
        lines.append(_hidden_line(len(notes) - len(kept)))
    text = "\n".join(lines)
    return (text if len(text) <= cap else ""), len(kept)


def _hidden_line(count: int) -> str:
    return f"[{count} more pending note{'s' if count != 1 else ''} available via memory_search]"


@dataclass
class _Block:
    """A run of MEMORY.md lines cut together: heading, body (cut bottom-up), trailer."""

    rank: float
    name: str
    head: list[str]
    body: list[str]
    tail: list[str] = field(default_factory=list)
    cut: bool = False

    def __post_init__(self) -> None:
        # Kept incrementally: a 1 MB hand-written file must not cost quadratic time.
        self.body_size = _size(self.body)
        self.frame_size = _size(self.head) + _size(self.tail)
        self.filled = sum(1 for line in self.body if line.strip())

    def gone(self) -> bool:
        return self.cut and self.filled == 0

    def size(self) -> int:
        return 0 if self.gone() else self.frame_size + self.body_size

    def pop(self) -> None:
        line = self.body.pop()
        self.cut = True
        self.body_size -= len(line) + 1
        self.filled -= 1 if line.strip() else 0

    def lines(self) -> list[str]:
        return [] if self.gone() else self.head + self.body + self.tail


def fit_state(text: str, cap: int) -> tuple[str, list[str]]:
    """MEMORY.md within cap chars by cutting whole lines, least important section first."""
    if len(text) <= cap:
        return text, []
    blocks = _blocks(text)
    target = cap - len("\n\n" + CUT_MARKER)
    while sum(block.size() for block in blocks) - 1 > target:
        candidates = [i for i, block in enumerate(blocks) if block.body and not block.gone()]
        if not candidates:
            break
        blocks[min(candidates, key=lambda i: (blocks[i].rank, -i))].pop()
    kept = "\n".join(line for block in blocks for line in block.lines()).rstrip()
    result = f"{kept}\n\n{CUT_MARKER}" if kept else CUT_MARKER
    return result, [block.name for block in blocks if block.cut]


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _blocks(text: str) -> list[_Block]:
    lines = text.replace("\r\n", "\n").rstrip("\n").split("\n")
    titles = {s.title.lower(): s for s in sections()}
    keys = {s.key.replace("_", " "): s for s in sections()}

    def section_of(heading: str):
        name = heading[3:].strip().lower()
        return titles.get(name) or keys.get(name)

    title_at = next((i for i, line in enumerate(lines) if line.strip() == TITLE), None)
    known = [i for i, line in enumerate(lines) if line.startswith("## ") and section_of(line)]
    if title_at is None and not known:
        return [_Block(HAND_RANK, "hand-written", [], lines)]
    first_heading = next(
        (
            i
            for i, line in enumerate(lines)
            if line.startswith("## ") and (title_at is None or i > title_at)
        ),
        len(lines),
    )
    preamble_end = title_at if title_at is not None else first_heading
    blocks: list[_Block] = []
    if preamble_end > 0:
        body = lines[:preamble_end]
        tail: list[str] = []
        while body and body[-1].strip() in ("", "---", FIRST_DREAM_MARKER):
            tail.insert(0, body.pop())
        blocks.append(_Block(HAND_RANK, "hand-written", [], body, tail))
    if title_at is not None:
        blocks.append(_Block(TITLE_RANK, "title", [], lines[title_at:first_heading]))
    start = first_heading
    while start < len(lines):
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        section = section_of(lines[start])
        rank = float(section.keep_rank) if section else HAND_RANK
        blocks.append(
            _Block(rank, lines[start][3:].strip(), [lines[start]], lines[start + 1 : end])
        )
        start = end
    return blocks


def _read_state(ws: Workspace) -> str:
    return ws.read_memory()
