"""``dream bench insights``: how often each kind of insight is right, over the quality scenarios.

Each scenario is replayed through the offline dreams (``quality.run_scenario``); the insights
every dream computed are recorded as the synthesizer received them, and each suggestion is
judged right or wrong by a rule per kind, against the crystals the store holds at the end:

- topics: every listed crystal holds one of the topic's keywords.
- contradictions: the newer side is later than the older, the two share a word of the subject,
  and the newer names a word (a value) the older does not.
- curiosity_gaps: it reads as a question and no crystal written after it, up to the dream,
  holds half of its content words (it is still open).
- emerging_skills: it lists crystals, its occurrences equal the writings of the crystals listed
  up to the dream (a text written again on a later day counts again), and every
  listed crystal holds a word of the skill's object (by its first five letters).
- fading_topics: a passed line's date is before the dream; any other line is supported by no
  crystal written (or written again) in the two days before the dream (none holds half of its
  keywords, by stem).
- answered_questions: the question's crystal and the answer's exist, the answer's was written
  after the question's, and they share two content words (the subject).
- upcoming: its date is after the dream's day.
- people: some crystal holds the name and the role.

A suggestion is "evidenced" when it names a crystal (``crystal_ids``, a side's ``id``, or a
crystal holding its question, line or name); the report counts both.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from dreamer.dream.synth import Draft, DreamInputs
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.memory import repeats
from dreamer.memory.workspace import Workspace
from dreamer.store import Crystal
from dreamer.support.times import parse_iso
from dreamer_bench import quality

KINDS = (
    "topics",
    "contradictions",
    "curiosity_gaps",
    "emerging_skills",
    "fading_topics",
    "answered_questions",
    "upcoming",
    "people",
)
FADE_WINDOW = timedelta(days=2)  # the rules' own FADE_AFTER
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "that this with from have what when where which will would should could about there their "
    "they them then than into onto just also been were your yours some more most very much "
    "does done still need needs after before over under again".split()
)
_QUESTION = re.compile(r"\?|^(who|what|when|where|which|why|how|should|can|could|do|does|is|are)\b")


def content(text: str) -> set[str]:
    """The content words of a text (four letters or more, not a common word)."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOP}


def stems(text: str) -> set[str]:
    """The first five letters of each content word (``modules`` and ``module`` alike)."""
    return {w[:5] for w in content(text)}


class Recorder(OfflineSynthesizer):
    """The offline synthesizer, keeping each dream's moment and insights as it received them."""

    def __init__(self) -> None:
        self.seen: list[tuple[datetime, dict[str, Any]]] = []

    def synthesize(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> Draft:
        """Record the insights once a dream (not again on a revision), then write as offline."""
        if critique is None and inputs.insights is not None:
            self.seen.append((inputs.now, inputs.insights.to_dict()))
        return super().synthesize(inputs, critique=critique, previous=previous)


@dataclass
class Judged:
    """One suggestion and its verdict."""

    scenario: str
    kind: str
    at: str
    right: bool
    evidenced: bool
    item: dict[str, Any]


@dataclass
class _World:
    crystals: list[Crystal]
    now: datetime
    seen: dict[int, list[str]] = field(default_factory=dict)  # id -> when written again
    by_id: dict[int, Crystal] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {c.id: c for c in self.crystals}

    def holding(self, text: str) -> list[Crystal]:
        """Crystals written by the dream whose text holds ``text`` (any case)."""
        low = " ".join(text.lower().split())
        return [
            c
            for c in self.crystals
            if low and low in " ".join(c.text.lower().split()) and _at(c) <= self.now
        ]

    def writings(self, crystal_id: int) -> int:
        """How often crystal ``crystal_id``'s text was written up to the dream."""
        again = [at for at in self.seen.get(crystal_id, []) if parse_iso(at) <= self.now]
        return (crystal_id in self.by_id and _at(self.by_id[crystal_id]) <= self.now) + len(again)

    def written(self, start: datetime, end: datetime) -> list[Crystal]:
        """Crystals written, or written again, after ``start`` up to ``end``."""
        again = {
            cid for cid, ats in self.seen.items() if any(start < parse_iso(a) <= end for a in ats)
        }
        return [c for c in self.crystals if start < _at(c) <= end or c.id in again]

    def between(self, start: datetime, end: datetime) -> list[Crystal]:
        """Crystals written after ``start`` up to ``end``."""
        return [c for c in self.crystals if start < _at(c) <= end]


def _at(crystal: Crystal) -> datetime:
    return parse_iso(crystal.created_at)


def _topic(item: dict[str, Any], w: _World) -> bool:
    keys = set(item.get("keywords") or [])
    found = [w.by_id[i] for i in item.get("crystal_ids") or [] if i in w.by_id]
    return bool(found) and all(
        keys & content(c.text) | keys & set(_WORD.findall(c.text.lower())) for c in found
    )


def _contradiction(item: dict[str, Any], w: _World) -> bool:
    older, newer = item.get("older") or {}, item.get("newer") or {}
    if not newer.get("at") or (older.get("at") and newer["at"] <= older["at"]):
        return False
    subject = {s.lower() for s in item.get("subject") or []}
    old_words = set(_WORD.findall(str(older.get("text", "")).lower()))
    new_words = set(_WORD.findall(str(newer.get("text", "")).lower()))
    if not older.get("text"):
        return False
    return bool(subject & old_words and subject & new_words) and bool(
        content(str(newer["text"])) - old_words - subject
    )


def _gap(item: dict[str, Any], w: _World) -> bool:
    question = str(item.get("question", ""))
    if not _QUESTION.search(question.lower().strip()):
        return False
    words = content(question)
    start = parse_iso(item["at"]) if item.get("at") else w.now
    later = w.between(start, w.now)
    return not any(
        words and len(words & content(c.text)) * 2 >= len(words)
        for c in later
        if question.lower() not in c.text.lower()
    )


def _skill(item: dict[str, Any], w: _World) -> bool:
    ids = item.get("crystal_ids") or []
    if not ids or item.get("occurrences") != sum(w.writings(i) for i in ids):
        return False
    object_words = stems(" ".join(str(item.get("skill", "")).split()[1:]))
    found = [w.by_id[i] for i in ids if i in w.by_id]
    return len(found) == len(ids) and all(object_words & stems(c.text) for c in found)


def _fading(item: dict[str, Any], w: _World) -> bool:
    if item.get("passed"):
        return str(item["passed"]) < w.now.date().isoformat()
    keys = stems(str(item.get("keywords", "")))
    recent = w.written(w.now - FADE_WINDOW, w.now)
    return bool(keys) and not any(len(keys & stems(c.text)) * 2 >= len(keys) for c in recent)


def _answered(item: dict[str, Any], w: _World) -> bool:
    asked = w.holding(str(item.get("question", "")))
    answered = w.holding(str(item.get("answer", "")))
    if not asked or not answered:
        return False
    q, a = asked[0], answered[-1]
    return _at(a) > _at(q) and len(content(q.text) & content(a.text)) >= 2


def _upcoming(item: dict[str, Any], w: _World) -> bool:
    return str(item.get("date", "")) > w.now.date().isoformat()


def _person(item: dict[str, Any], w: _World) -> bool:
    name, role = str(item.get("name", "")), str(item.get("role", "")).lower()
    return any(role in c.text.lower() for c in w.holding(name)) if name and role else False


RULES: dict[str, Callable[[dict[str, Any], _World], bool]] = {
    "topics": _topic,
    "contradictions": _contradiction,
    "curiosity_gaps": _gap,
    "emerging_skills": _skill,
    "fading_topics": _fading,
    "answered_questions": _answered,
    "upcoming": _upcoming,
    "people": _person,
}


def evidenced(kind: str, item: dict[str, Any]) -> bool:
    """Whether the suggestion names the crystals that support it."""
    if kind == "contradictions":
        return any((item.get(side) or {}).get("id") for side in ("older", "newer"))
    return bool(item.get("crystal_ids"))


def judge_scenario(path: Path, workdir: Path) -> list[Judged]:
    """Replay one scenario offline and judge every suggestion its dreams computed."""
    scenario = quality.load_scenario(path)
    recorder = Recorder()
    quality.run_scenario(scenario, workdir, recorder)
    root = workdir / re.sub(r"[^\w.-]+", "-", scenario.name)
    with Workspace.open(root, environ={}) as ws:
        crystals = ws.store.crystals.select()
        seen = {
            c.id: [
                row["at"]
                for row in ws.store.records.audit_entries(c.id, repeats.HISTORY)
                if row["action"] == repeats.SEEN
            ]
            for c in crystals
        }
    out = []
    for now, found in recorder.seen:
        world = _World(crystals, now, seen)
        for kind in KINDS:
            for item in found.get(kind) or []:
                out.append(
                    Judged(
                        path.stem,
                        kind,
                        now.isoformat(),
                        RULES[kind](item, world),
                        evidenced(kind, item),
                        item,
                    )
                )
    return out


def scenario_paths(heldout: bool) -> list[Path]:
    """The shipped scenarios (notes and captured months), or the held-out months."""
    if heldout:
        folder = quality.SCENARIO_DIR / "heldout"
        return sorted(folder.glob("*.toml"))
    return quality.shipped_scenarios()


def precision(judged: list[Judged]) -> dict[str, dict[str, Any]]:
    """Per kind: suggestions, right, precision, evidenced, right among the evidenced."""
    table: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        mine = [j for j in judged if j.kind == kind]
        with_ids = [j for j in mine if j.evidenced]
        right = sum(j.right for j in mine)
        table[kind] = {
            "count": len(mine),
            "right": right,
            "precision": round(right / len(mine), 3) if mine else None,
            "evidenced": len(with_ids),
            "evidenced_right": sum(j.right for j in with_ids),
        }
    return table


def format_table(table: dict[str, dict[str, Any]]) -> str:
    """A plain table of the precision per kind."""
    head = ("kind", "count", "right", "precision", "evidenced", "right")
    lines = [f"{head[0]:<20}" + "".join(f"{h:>11}" for h in head[1:])]
    for kind, row in table.items():
        share = "-" if row["precision"] is None else f"{row['precision']:.0%}"
        cells = (row["count"], row["right"], share, row["evidenced"], row["evidenced_right"])
        lines.append(f"{kind:<20}" + "".join(f"{c:>11}" for c in cells))
    return "\n".join(lines)
