"""Hand edits of MEMORY.md: none is lost to a dream, and none can stop the dreams.

A person may write anything into MEMORY.md between dreams. Before a dream reads the old state:

- every line dreamer did not write itself (not in the state the last dream or restore wrote)
  becomes a crystal (source ``memory``, consolidated: it is the person's text, not news), so
  ``dream search`` finds it with its words whatever the synthesizer then does with it;
- ``mend`` reshapes what a guard would reject for ever if a synthesizer carried it over:
  a Crystal Pointers line that does not parse becomes a well-formed pointer whose keywords
  find that line's crystal; an Emerging Skills line that does not parse moves to The
  Phenotype (how the agent works); a confidence past 100% is read as 100%; a missing section
  is an empty one; lines outside any section (above the title, or between it and the first
  heading) move to Active Context;
- ``cap_pointers`` keeps at most ``MAX_POINTERS`` pointers: the last ones are moved into
  crystals behind one pointer.

Sections past their budgets are trimmed afterwards by ``dreamer.dream.oversized_sections``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from dreamer.dream import oversized_sections
from dreamer.dream.guards import MAX_POINTERS, rarity
from dreamer.dream.rules.words import LABELS
from dreamer.dream.seed import COMMITTED_OUTCOMES, FIRST_DREAM_MARKER
from dreamer.memory import state as wm
from dreamer.store import Store
from dreamer.support.words import keywords

OUTSIDE = "above the sections"
MAX_TOPIC_WORDS = 16
MAX_CONFIDENCE = 100
_BULLET = re.compile(r"^\s*([-*•+]|\d+[.)])\s+")
_POINTER_PARTS = re.compile(r"^\s*Past:\s*|\s*(?:→|->)\s*search:.*$", re.IGNORECASE)


@dataclass
class Mended:
    """The old state as a dream may build on it, and what was moved to get there."""

    state: wm.WorkingMemory
    moved: list[tuple[str, str]] = field(default_factory=list)  # (section title, line)
    fixes: list[str] = field(default_factory=list)  # one sentence per change, for the journal


def last_written(store: Store) -> str | None:
    """The MEMORY.md text dreamer last wrote (a dream, a restore, a forget); None if never."""
    last = store.journal.latest_dream_id((*COMMITTED_OUTCOMES, "forgotten"))
    if last is None:
        return None
    text = store.journal.get_dream(last).get("new_state")
    return text if isinstance(text, str) else None


def text_of(line: str) -> str:
    """A line as a crystal holds it: without its bullet or number."""
    return _BULLET.sub("", line).strip()


def _structural(line: str) -> bool:
    stripped = line.strip()
    return (
        not stripped
        or stripped in (wm.TITLE, "---", FIRST_DREAM_MARKER)
        or stripped.startswith("## ")
        or bool(re.match(r"^_Last dream:.*_$", stripped))
    )


def hand_lines(text: str, last: str | None) -> list[tuple[str, str]]:
    """(where, line) for each line of text that ``last`` (dreamer's own writing) does not hold."""
    written = {line.strip() for line in (last or "").split("\n")}
    state = wm.parse(text)
    titles = {s.key: s.title for s in wm.sections()}
    places = [(OUTSIDE, state.preamble)]
    places += [(titles[key], state.body(key)) for key in wm.section_keys()]
    places += list(state.extra)
    out: list[tuple[str, str]] = []
    for where, body in places:
        for line in body.split("\n"):
            if not _structural(line) and line.strip() not in written and text_of(line):
                out.append((where, line.strip()))
    return out


def pointer_to(line: str) -> wm.Pointer | None:
    """A pointer for a hand-written line: its words as the topic, its rarest words as keywords."""
    topic = " ".join(_POINTER_PARTS.sub("", text_of(line)).split()) or text_of(line)
    words = topic.split()
    if len(words) > MAX_TOPIC_WORDS:
        topic = " ".join(words[:MAX_TOPIC_WORDS]) + " …"
    candidates = [w for w in keywords(text_of(line)) if w not in LABELS and w != "search"]
    if not candidates:
        return None
    # Rarest first (a name, a long word): the words that find this line and little else.
    rarest = sorted(candidates, key=lambda w: (-rarity(w), -len(w)))[:3]
    return wm.Pointer(topic, " ".join(w for w in candidates if w in rarest))


def mend(state: wm.WorkingMemory, last: str | None, *, seed_pending: bool) -> Mended:
    """The state reshaped so no guard rejects it for what a person wrote (see the docstring)."""
    bodies = {key: state.body(key) for key in wm.section_keys()}
    out = Mended(state)
    preamble = state.preamble
    if not seed_pending:  # on a seed dream the person's text stays on top (cycle.compose)
        kept_above = {line.strip() for line in wm.parse(last or "").preamble.split("\n")}
        orphans = [
            line
            for line in preamble.split("\n")
            if not _structural(line) and line.strip() not in kept_above
        ]
        if orphans:
            preamble = "\n".join(
                line for line in preamble.split("\n") if line not in orphans
            ).strip("\n")
            bodies["active_context"] = "\n".join(
                [bodies["active_context"], *(line.strip() for line in orphans)]
            ).strip("\n")
            out.fixes.append(f"{len(orphans)} line(s) outside the sections moved to Active Context")
    pointers, strays = [], []
    for line in bodies["crystal_pointers"].split("\n"):
        if wm.parse_pointers(line):
            pointers.append(line)
        elif line.strip():
            strays.append(line.strip())
    for line in strays:
        pointer = pointer_to(line)
        out.moved.append(("Crystal Pointers", line))
        if pointer is not None:
            pointers.append(pointer.render())
        out.fixes.append(
            f"Crystal Pointers line {line!r} is a crystal now"
            + (f", found by `{pointer.keywords}`" if pointer else "")
        )
    bodies["crystal_pointers"] = "\n".join(pointers)
    skills, misfits = [], []
    for line in bodies["emerging_skills"].split("\n"):
        parsed = wm.parse_skills(line)
        if parsed:
            skill = parsed[0]
            if skill.confidence > MAX_CONFIDENCE:
                out.fixes.append(
                    f"skill {skill.skill!r}: confidence {skill.confidence}% read as 100%"
                )
                line = dataclasses.replace(skill, confidence=MAX_CONFIDENCE).render()
            skills.append(line)
        elif line.strip():
            misfits.append(line.strip())
    bodies["emerging_skills"] = "\n".join(skills)
    if misfits:
        bodies["phenotype"] = "\n".join([bodies["phenotype"], *misfits]).strip("\n")
        out.moved += [("Emerging Skills", line) for line in misfits]
        out.fixes.append(
            f"{len(misfits)} Emerging Skills line(s) that are not skills moved to The Phenotype"
        )
    out.state = dataclasses.replace(state, bodies=bodies, preamble=preamble)
    return out


def cap_pointers(state: wm.WorkingMemory) -> Mended:
    """At most MAX_POINTERS pointers: the ones past the cap go to crystals behind one pointer."""
    lines = [line for line in state.body("crystal_pointers").split("\n") if line.strip()]
    if len(wm.parse_pointers("\n".join(lines))) <= MAX_POINTERS:
        return Mended(state)
    extra = lines[MAX_POINTERS - 1 :]
    pointer = oversized_sections.pointer_for("Crystal Pointers", [text_of(line) for line in extra])
    kept = lines[: MAX_POINTERS - 1] + ([pointer.render()] if pointer else [])
    bodies = dict(state.bodies)
    bodies["crystal_pointers"] = "\n".join(kept)
    return Mended(
        dataclasses.replace(state, bodies=bodies),
        moved=[("Crystal Pointers", line) for line in extra],
        fixes=[
            f"{len(extra)} crystal pointer(s) past the {MAX_POINTERS} allowed moved to crystals"
        ],
    )
