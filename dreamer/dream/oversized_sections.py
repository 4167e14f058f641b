"""A hand-edited MEMORY.md larger than its budgets: the way out (DESIGN.md, step 6).

A user may write more into a section than a dream may write back (a 20 KB Active Context).
Without a way out the budgets and the mass-drop guard cannot both be met and every dream is
rejected. So before a dream reads the old state, ``trim`` keeps each section's leading lines
within its token budget and hands back the lines that did not fit; the dream indexes each of
them as a crystal (searchable, consolidated: it is the user's text, not news) and points to
them with one crystal pointer per section. The guards then judge the candidate against the
trimmed state, i.e. against what the budgets allow. Nothing the user wrote is lost.
"""

from __future__ import annotations

import dataclasses

from dreamer.memory.state import Pointer, WorkingMemory, parse_pointers, sections
from dreamer.support import tokens
from dreamer.support.words import keywords


def trim(state: WorkingMemory) -> tuple[WorkingMemory, dict[str, list[str]]]:
    """The state with every section within its budget, and per section the lines cut off."""
    bodies = dict(state.bodies)
    cut: dict[str, list[str]] = {}
    for section in sections():
        body = bodies.get(section.key, "")
        if not body or tokens.count(body) <= section.budget_tokens:
            continue
        lines = body.split("\n")
        kept: list[str] = []
        used = 0
        for i, line in enumerate(lines):
            cost = tokens.count(line) + 1
            if used + cost > section.budget_tokens:
                cut[section.key] = [rest for rest in lines[i:] if rest.strip()]
                break
            kept.append(line)
            used += cost
        bodies[section.key] = "\n".join(kept).rstrip()
    if not cut:
        return state, {}
    return dataclasses.replace(state, bodies=bodies), cut


def pointer_for(title: str, lines: list[str]) -> Pointer | None:
    """One pointer to a section's moved lines: its keywords are words of one of them."""
    counts: dict[str, int] = {}
    for line in lines:
        for word in keywords(line):
            counts[word] = counts.get(word, 0) + 1
    if not counts:
        return None
    first = max(counts, key=lambda w: (counts[w], w))
    partners: dict[str, int] = {}
    for line in lines:
        words = keywords(line)
        if first in words:
            for word in words:
                if word != first:
                    partners[word] = partners.get(word, 0) + counts[word]
    second = max(partners, key=lambda w: (partners[w], w)) if partners else None
    topic = f"Hand-written {title} lines moved out of MEMORY.md ({len(lines)} lines)"
    return Pointer(topic, " ".join(w for w in (first, second) if w))


def with_pointers(state: WorkingMemory, pointers: list[Pointer]) -> WorkingMemory:
    """The state with these pointers first in Crystal Pointers (an existing one not repeated)."""
    if not pointers:
        return state
    body = state.body("crystal_pointers")
    have = {p.topic for p in parse_pointers(body)}
    fresh = [p.render() for p in pointers if p.topic not in have]
    bodies = dict(state.bodies)
    bodies["crystal_pointers"] = "\n".join([*fresh, body] if body else fresh)
    return dataclasses.replace(state, bodies=bodies)
