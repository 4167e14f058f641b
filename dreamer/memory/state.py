"""The working-memory document (MEMORY.md): sections, pointers, skills; parse and render.

The sections, their order, titles and token budgets come from ``schemas/working_memory.json``.
Rendered form::

    # Working Memory State

    _Last dream: 2026-03-12T14:30:00Z | Mood: calm, warm_

    ## The Phenotype
    ...

Parsing tolerates hand edits: headings in any case and order, missing sections (empty),
unknown ``## `` sections (kept, rendered after the seven), text before the title or between it
and the first heading (kept as the preamble, e.g. a hand-written MEMORY.md above a conservative
first dream; a dream moves such lines into a section, see ``dreamer.dream.hand_edits``).
``render(parse(t))`` is a fixed point after one round.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from dreamer.errors import WorkspaceError
from dreamer.support import failures
from dreamer.support.resources import schema

TITLE = "# Working Memory State"
POINTER_LINE = re.compile(
    r"^\s*[-*]\s*Past:\s*(?P<topic>.+?)\s*(?:→|->)\s*search:\s*`(?P<kw>[^`]+)`"
)
SKILL_LINE = re.compile(
    r"^\s*[-*]\s*(?P<skill>.+?)\s*(?:→|->)\s*Confidence:\s*(?P<conf>\d+)\s*%\s*\|\s*"
    r"Occurrences:\s*(?P<occ>\d+)"
)
_STATUS_LINE = re.compile(r"^_Last dream:\s*(?P<at>[^|]*?)\s*\|\s*Mood:\s*(?P<mood>.*?)_\s*$")


@dataclass(frozen=True)
class Section:
    """One section of the state as the schema defines it."""

    key: str
    title: str
    budget_tokens: int
    keep_rank: int  # higher = kept longer when a bootstrap must cut
    purpose: str


@cache
def sections() -> tuple[Section, ...]:
    """The seven sections, in order, from the schema."""
    spec = schema("working_memory")
    return tuple(
        Section(s["key"], s["title"], s["budget_tokens"], s["keep_rank"], s["purpose"])
        for s in spec["x-sections"]
    )


def section_keys() -> list[str]:
    """Section keys in order: phenotype, bond, niche, active_context, ..."""
    return [s.key for s in sections()]


def total_budget() -> int:
    """The token budget of the whole state."""
    return int(schema("working_memory")["x-total-budget-tokens"])


@dataclass
class Pointer:
    """A faded topic and the keywords that find it again."""

    topic: str
    keywords: str

    def render(self) -> str:
        """``- Past: {topic} → search: `{keywords}```."""
        return f"- Past: {self.topic} → search: `{self.keywords}`"


@dataclass
class Skill:
    """A repeated task pattern turning into a skill."""

    skill: str
    confidence: int
    occurrences: int

    def render(self) -> str:
        """``- {skill} → Confidence: {n}% | Occurrences: {k}``."""
        return f"- {self.skill} → Confidence: {self.confidence}% | Occurrences: {self.occurrences}"


@dataclass
class WorkingMemory:
    """A parsed MEMORY.md: the seven section bodies plus what a human added around them."""

    bodies: dict[str, str] = field(default_factory=dict)  # key -> markdown body, no heading
    last_dream: str | None = None
    mood: str | None = None
    preamble: str = ""  # text above the title, kept verbatim
    extra: list[tuple[str, str]] = field(default_factory=list)  # unknown (heading, body)

    def body(self, key: str) -> str:
        """The body of a section ('' when absent)."""
        return self.bodies.get(key, "")

    def pointers(self) -> list[Pointer]:
        """The crystal pointers that parse as pointers."""
        return parse_pointers(self.body("crystal_pointers"))

    def skills(self) -> list[Skill]:
        """The emerging skills that parse as skills."""
        return parse_skills(self.body("emerging_skills"))

    def substance(self) -> str:
        """All section text, without headings or the status line."""
        return "\n".join(self.body(key) for key in section_keys()).strip()

    def to_fields(self) -> dict[str, Any]:
        """The state in the schema's shape (pointers and skills as arrays)."""
        out: dict[str, Any] = {}
        for key in section_keys():
            if key == "crystal_pointers":
                out[key] = [{"topic": p.topic, "keywords": p.keywords} for p in self.pointers()]
            elif key == "emerging_skills":
                out[key] = [
                    {"skill": s.skill, "confidence": s.confidence, "occurrences": s.occurrences}
                    for s in self.skills()
                ]
            else:
                out[key] = self.body(key)
        return out


def parse_pointers(body: str) -> list[Pointer]:
    """Pointers from a Crystal Pointers body (other lines ignored)."""
    out = []
    for line in body.split("\n"):
        match = POINTER_LINE.match(line)
        if match:
            out.append(Pointer(match["topic"].strip(), match["kw"].strip()))
    return out


def parse_skills(body: str) -> list[Skill]:
    """Skills from an Emerging Skills body (other lines ignored)."""
    out = []
    for line in body.split("\n"):
        match = SKILL_LINE.match(line)
        if match:
            out.append(Skill(match["skill"].strip(), int(match["conf"]), int(match["occ"])))
    return out


def render_pointers(pointers: list[Pointer]) -> str:
    """A Crystal Pointers body."""
    return "\n".join(p.render() for p in pointers)


def render_skills(skills: list[Skill]) -> str:
    """An Emerging Skills body."""
    return "\n".join(s.render() for s in skills)


def from_fields(fields: dict[str, Any], base: WorkingMemory | None = None) -> WorkingMemory:
    """Build a state from schema-shaped fields; fields left out carry over from base."""
    base = base or WorkingMemory()
    bodies = dict(base.bodies)
    for key in section_keys():
        if key not in fields or fields[key] is None:
            continue
        value = fields[key]
        if key == "crystal_pointers" and isinstance(value, list):
            value = render_pointers([Pointer(str(v["topic"]), str(v["keywords"])) for v in value])
        elif key == "emerging_skills" and isinstance(value, list):
            value = render_skills(
                [Skill(str(v["skill"]), int(v["confidence"]), int(v["occurrences"])) for v in value]
            )
        bodies[key] = _clean(str(value))
    return WorkingMemory(bodies, base.last_dream, base.mood, base.preamble, list(base.extra))


def _clean(body: str) -> str:
    # A "## " line inside a body would start a new section when the file is read back:
    # demote it to "### " so render∘parse stays a fixed point whatever a synthesizer wrote.
    lines = [
        ("#" + line if line.startswith("## ") else line).rstrip()
        for line in body.strip("\n").split("\n")
    ]
    return "\n".join(lines).strip("\n")


def _title_key(heading: str) -> str | None:
    wanted = heading.strip().lower().lstrip("#").strip()
    for s in sections():
        if wanted in (s.title.lower(), s.key.replace("_", " ")):
            return s.key
    return None


def parse(text: str) -> WorkingMemory:
    """Parse MEMORY.md text tolerantly (see the module docstring)."""
    lines = text.replace("\r\n", "\n").split("\n")
    title_at = next((i for i, line in enumerate(lines) if line.strip() == TITLE), None)
    if title_at is None:
        # No title: either a hand-written file (all preamble) or a state missing its title.
        if not any(_title_key(line[3:]) for line in lines if line.startswith("## ")):
            return WorkingMemory(preamble=text.strip("\n"))
        title_at = -1
    state = WorkingMemory(preamble="\n".join(lines[: max(title_at, 0)]).strip("\n"))
    current: str | None = None
    buffer: list[str] = []
    extra_heading = ""
    outside: list[str] = []  # lines between the title and the first heading

    def flush() -> None:
        body = _clean("\n".join(buffer))
        if current == "__extra__":
            state.extra.append((extra_heading, body))
        elif current is not None:
            existing = state.bodies.get(current)
            state.bodies[current] = f"{existing}\n{body}".strip("\n") if existing else body

    for line in lines[title_at + 1 :]:
        if line.startswith("## "):
            flush()
            buffer = []
            key = _title_key(line[3:])
            if key is None:
                current, extra_heading = "__extra__", line[3:].strip()
            else:
                current = key
            continue
        if current is None:
            match = _STATUS_LINE.match(line.strip())
            if match:
                state.last_dream = match["at"].strip() or None
                state.mood = match["mood"].strip() or None
            elif line.strip():
                outside.append(line)
            continue
        buffer.append(line)
    flush()
    if outside:
        state.preamble = "\n".join([state.preamble, *outside]).strip("\n")
    return state


def render(state: WorkingMemory, *, include_preamble: bool = False) -> str:
    """Render a state as MEMORY.md text (the preamble only when asked)."""
    parts: list[str] = []
    if include_preamble and state.preamble.strip():
        parts.append(state.preamble.strip("\n"))
    parts.append(TITLE)
    if state.last_dream or state.mood:
        at, mood = state.last_dream or "never", state.mood or "unknown"
        parts.append(f"_Last dream: {at} | Mood: {mood}_")
    for s in sections():
        body = state.body(s.key)
        parts.append(f"## {s.title}\n{body}" if body else f"## {s.title}")
    for heading, body in state.extra:
        parts.append(f"## {heading}\n{body}" if body else f"## {heading}")
    return "\n\n".join(parts) + "\n"


def read_memory(path: Path, *, errors: str = "strict") -> str:
    """MEMORY.md's text ("" when there is none yet), the one way every part reads it.

    A file that is not UTF-8 raises WorkspaceError naming the fix, unless ``errors="replace"``
    (the seed migration, which keeps the original bytes in its backup).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ""
    except OSError as e:
        raise failures.cannot_read(e, path, WorkspaceError) from e
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as e:
        raise WorkspaceError(
            f"{path} is not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8"
        ) from None
