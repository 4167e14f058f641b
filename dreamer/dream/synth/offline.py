"""The offline synthesizer: a deterministic dream with no network and no model.

How it writes each section:

- **The Phenotype**: the old body, plus notes the agent wrote about itself ("I ...", "My ...");
  on a first dream, one line of temperament from the hormone snapshot.
- **The Bond**: the old lines, plus user traits and directives from the new evidence. On a
  contradiction the newest statement wins: the superseded line (old or new) is left out.
- **The Niche**: ``memory/niche.json`` as bullets when present; the old body otherwise.
- **Active Context**: the recent goals, open tasks, frictions and breakthroughs (labelled),
  newest and most important first, then old lines still supported; fading lines leave.
- **Crystal Pointers**: fading topics and lines that no longer fit, then the old pointers.
- **Curiosity Gaps**: new open questions and empty searches, then the old ones.
- **Emerging Skills**: repeated task patterns from the insights, merged with the old skills.

Every section is cut to its token budget at line boundaries. Given a critique, it revises
conservatively: it starts from the old bodies and only adds, with slightly tighter budgets.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dreamer.dream.insights import Insights, context_lines, keywords, stems, topic_of
from dreamer.dream.synth import Draft, DreamInputs, Usage
from dreamer.memory.state import (
    Pointer,
    Skill,
    WorkingMemory,
    parse_pointers,
    parse_skills,
    sections,
)
from dreamer.support import tokens
from dreamer.support.times import iso

MAX_POINTERS = 18  # stays under the guard's 20 with room for a hand-added one
MAX_GAPS = 10
MAX_SKILLS = 8
LINE_WORDS = 40

_SELF = re.compile(r"^\s*(I|I'm|I've|I'll|My|Me|The agent|Agent)\b", re.IGNORECASE)
_USER = re.compile(
    r"\b(user|they|she|he)\b.*\b(prefers?|likes?|loves?|dislikes?|hates?|wants?|is a|works? "
    r"(?:at|as|on)|lives?|birthday|name is|call)\b|^\s*(always|never|please|don'?t|do not|"
    r"remember to|call me)\b|\b(prefers?|dislikes?|switched to|no longer|now uses)\b",
    re.IGNORECASE,
)
_LABELS = (
    (
        "Friction",
        re.compile(
            r"\b(error|errors|fail(?:ed|s|ing|ure)?|bug|bugs|blocked|stuck|"
            r"broke|broken|crash(?:ed|es)?|frustrat\w*|problem|issue|annoy\w*|"
            r"slow|timeout|regression|angry|upset|worried)\b",
            re.I,
        ),
    ),
    (
        "Breakthrough",
        re.compile(
            r"\b(fixed|solved|resolved|works now|working now|shipped|"
            r"deployed|released|launched|merged|finally|breakthrough|"
            r"success(?:ful)?|"
            r"finished|completed|passed|won|landed)\b",
            re.I,
        ),
    ),
    (
        "Deadline",
        re.compile(
            r"\b(deadline|due|by (?:monday|tuesday|wednesday|thursday|friday|"
            r"saturday|sunday|tomorrow)|moved to|postponed)\b",
            re.I,
        ),
    ),
    (
        "Goal",
        re.compile(
            r"\b(goal|aim|plan(?:s|ning)? to|want(?:s)? to|hope to|objective|"
            r"milestone)\b",
            re.I,
        ),
    ),
    (
        "Task",
        re.compile(
            r"\b(todo|to do|need(?:s)? to|must|should|will|next|follow up|"
            r"remember to|pending|open task|waiting)\b",
            re.I,
        ),
    ),
)
_HEADING_HINTS = (
    ("past", re.compile(r"journal|log|history|archive|diary|done|past", re.I)),
    (
        "bond",
        re.compile(
            r"who|about|user|\bme\b|\bi\b|prefer|like|how i|personal|family|"
            r"people|contact|rules|directive|style",
            re.I,
        ),
    ),
    (
        "active",
        re.compile(
            r"project|current|task|todo|now|focus|goal|deadline|milestone|"
            r"remind|open|plan|work",
            re.I,
        ),
    ),
)
_LABEL_PREFIX = re.compile(r"^(?:Friction|Breakthrough|Deadline|Goal|Task|Note):\s*")


class OfflineSynthesizer:
    """Deterministic synthesizer: rules over the inputs, no network."""

    name = "offline"
    model: str | None = None

    def synthesize(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> Draft:
        """Write a candidate state; with a critique, a more conservative revision.

        Revision 1 fades only the older half of the fading lines and puts the old Bond first;
        revision 2 and later keep every old line (nothing fades, nothing is superseded).
        """
        level = _level(previous) + 1 if critique else 0
        conservative = level >= 2
        squeeze = (
            0.9 if critique and any("budget" in c or "pointers" in c for c in critique) else 1.0
        )
        budgets = {s.key: int(s.budget_tokens * squeeze) for s in sections()}
        ins: Insights = inputs.insights if isinstance(inputs.insights, Insights) else Insights()
        evidence = _evidence(inputs, ins)
        superseded = {" ".join(c["older"]["text"].split()).lower() for c in ins.contradictions}
        old = inputs.old

        # Old Active Context lines come newest first, so the older half is the tail.
        fade_from = {0: 0, 1: (len(ins.fading_topics) + 1) // 2}.get(level, len(ins.fading_topics))
        fading = ins.fading_topics[fade_from:]
        bond = _bond(old, evidence, superseded, budgets["bond"], level)
        phenotype = _phenotype(inputs, evidence, ins, budgets["phenotype"])
        niche = _niche(inputs, budgets["niche"])
        active, overflow = _active(
            old, evidence, fading, superseded, budgets["active_context"], conservative
        )
        pointers = _pointers(old, fading, overflow, _past(evidence), budgets["crystal_pointers"])
        gaps = _gaps(old, ins, budgets["curiosity_gaps"])
        skills = _skills(old, ins, budgets["emerging_skills"])
        state = WorkingMemory(
            bodies={
                "phenotype": phenotype,
                "bond": bond,
                "niche": niche,
                "active_context": active,
                "crystal_pointers": pointers,
                "curiosity_gaps": gaps,
                "emerging_skills": skills,
            },
            last_dream=old.last_dream,
            mood=old.mood,
            preamble=old.preamble,
            extra=list(old.extra),
        )
        raw = json.dumps(
            {"revision": level, "fields": state.to_fields()}, ensure_ascii=False, indent=1
        )
        return Draft(state=state, raw=raw, usage=Usage())


def _level(previous: Draft | None) -> int:
    """Which revision the previous draft was (0 = the first draft, or not ours)."""
    if previous is None:
        return 0
    try:
        return int(json.loads(previous.raw).get("revision", 0))
    except (ValueError, AttributeError, TypeError):
        return 0


# --- evidence ---------------------------------------------------------------------------------


def _evidence(inputs: DreamInputs, ins: Insights) -> list[dict[str, Any]]:
    """New statements (crystals, notes not indexed, then hand-written lines), newest first."""
    items: dict[str, dict[str, Any]] = {}
    for crystal in inputs.crystals:
        if crystal.source in ("insight", "seed"):
            continue  # the dream's own output is never fresh evidence; seeds come whole below
        items[_norm(crystal.text)] = {
            "text": crystal.text,
            "at": crystal.created_at,
            "importance": crystal.importance,
            "type": crystal.semantic_type,
            "hint": None,
        }
    for note in inputs.notes:
        items.setdefault(
            _norm(note.text),
            {
                "text": note.text,
                "at": iso(note.at),
                "importance": note.importance,
                "type": None,
                "hint": None,
            },
        )
    for item in hand_written(inputs.old.preamble):
        items.setdefault(_norm(item["text"]), item)
    # Newest first; hand-written lines (no time) last, in their original order.
    return sorted(
        items.values(), key=lambda i: (i["at"], i["importance"], i.get("seq", 0)), reverse=True
    )


def hand_written(preamble: str) -> list[dict[str, Any]]:
    """Lines of a hand-written MEMORY.md (text above the state), each hinted by its heading.

    They are older than any note, so they rank last; a heading says where a line belongs
    ("Who I am" → bond, "Projects" → active, "Journal" → pointer only).
    """
    text = preamble.split("<!--", 1)[0]
    items: list[dict[str, Any]] = []
    hint: str | None = None
    heading = ""
    current: dict[str, Any] | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped == "---" or stripped.startswith("#"):
            current = None  # a blank line or a heading ends an item
            if stripped.startswith("#"):
                heading = stripped.lstrip("#").strip()
                hint = next(
                    (name for name, pattern in _HEADING_HINTS if pattern.search(heading)), None
                )
            continue
        bullet = re.match(r"^([-*•]|\d+[.)])\s+", stripped)
        if current is not None and not bullet:
            current["text"] += " " + stripped  # a wrapped line continues its item
            continue
        current = {
            "text": stripped[bullet.end() :] if bullet else stripped,
            "at": "",
            "importance": 0.6,
            "type": None,
            "hint": hint,
            "heading": heading if hint else None,
            "seq": -len(items),
        }
        items.append(current)
    return [item for item in items if len(item["text"]) >= 12]


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _clip(text: str, words: int = LINE_WORDS) -> str:
    flat = " ".join(text.split())
    parts = flat.split(" ")
    return flat if len(parts) <= words else " ".join(parts[:words]) + " …"


def _fit(lines: list[str], budget: int) -> str:
    """As many whole lines as fit in budget tokens, in order, without duplicates."""
    kept: list[str] = []
    seen: set[str] = set()
    for line in lines:
        key = _norm(_LABEL_PREFIX.sub("", line.lstrip("-*• ").strip()))
        if not key or key in seen:
            continue
        if tokens.count("\n".join([*kept, line])) > budget:
            continue
        kept.append(line)
        seen.add(key)
    return "\n".join(kept)


def _bullet(text: str) -> str:
    return "- " + _clip(text)


def _same(line: str, texts: set[str]) -> bool:
    body = _norm(re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line))
    body = _LABEL_PREFIX.sub("", body)
    return body in texts or _norm(_clip(body)) in {_norm(_clip(t)) for t in texts}


def _is_user_fact(item: dict[str, Any]) -> bool:
    if item.get("hint"):
        return item["hint"] == "bond"
    return item["type"] == "directive" or bool(_USER.search(item["text"]))


# --- sections ---------------------------------------------------------------------------------


def _bond(
    old: WorkingMemory,
    evidence: list[dict[str, Any]],
    superseded: set[str],
    budget: int,
    level: int,
) -> str:
    new = [
        _bullet(i["text"])
        for i in evidence
        if _is_user_fact(i)
        and (i.get("hint") or not _SELF.match(i["text"]))
        and _norm(i["text"]) not in superseded
    ]
    kept = [
        line
        for line in context_lines(old.body("bond"))
        if level >= 2 or not _same(line, superseded)
    ]
    # Newest first, so on a tight budget a fresh directive outlives a stale one; a revision
    # (answering a critique such as Bond drift) keeps the old Bond first instead.
    return _fit(kept + new if level else new + kept, budget)


_GENERATED = ("- Temperament lately:", "- Mostly busy with:")


def _phenotype(
    inputs: DreamInputs, evidence: list[dict[str, Any]], ins: Insights, budget: int
) -> str:
    """Self-observations, then two lines rewritten every dream: temperament and focus."""
    mine = [_bullet(i["text"]) for i in evidence if not i.get("hint") and _SELF.match(i["text"])]
    old = [
        line
        for line in context_lines(inputs.old.body("phenotype"))
        if not line.startswith(_GENERATED)
    ]
    fresh = [f"{_GENERATED[0]} {inputs.mood or 'steady'} (from the hormone levels)."]
    busy = [t["label"] for t in ins.topics if t["size"] >= 2][:3]
    if busy:
        fresh.append(f"{_GENERATED[1]} {', '.join(busy)}.")
    return _fit(mine + old + fresh, budget)


def _niche(inputs: DreamInputs, budget: int) -> str:
    if not inputs.niche:
        return _fit(context_lines(inputs.old.body("niche")), budget)
    lines = []
    for key, value in inputs.niche.items():
        label = str(key).replace("_", " ").capitalize()
        if isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items())
        elif isinstance(value, list):
            value = ", ".join(
                ", ".join(f"{k}: {v}" for k, v in item.items())
                if isinstance(item, dict)
                else str(item)
                for item in value
            )
        lines.append(f"- {label}: {_clip(str(value), 30)}")
    return _fit(lines, budget)


def _label(text: str) -> str:
    for label, pattern in _LABELS:
        if pattern.search(text):
            return label
    return "Note"


def _active(
    old: WorkingMemory,
    evidence: list[dict[str, Any]],
    fading_topics: list[dict],
    superseded: set[str],
    budget: int,
    conservative: bool,
) -> tuple[str, list[str]]:
    """The Active Context body and the lines that did not fit (future pointers)."""
    order = {"Deadline": 0, "Friction": 1, "Goal": 2, "Task": 3, "Breakthrough": 4, "Note": 5}
    fresh = [
        i
        for i in evidence
        if _norm(i["text"]) not in superseded
        and not (_is_user_fact(i) and not _LABELS[2][1].search(i["text"]))
        and i.get("hint") != "past"
        and (i.get("hint") or not _SELF.match(i["text"]))
        and not i["text"].rstrip().endswith("?")
    ]
    # Importance first, then label, then newest: what matters most survives the budget.
    fresh.sort(key=lambda i: (-round(i["importance"], 1), order[_label(i["text"])], _neg(i["at"])))
    fixes = [(i["at"], stems(i["text"])) for i in fresh if _label(i["text"]) == "Breakthrough"]
    resolved = [
        i
        for i in fresh
        if _label(i["text"]) == "Friction"
        and any(at > i["at"] and _resolves(fix, stems(i["text"])) for at, fix in fixes)
    ]
    new_lines = [f"- {_label(i['text'])}: {_clip(i['text'])}" for i in fresh if i not in resolved]
    fading = {f["line"] for f in fading_topics}
    carried = [
        line.rstrip()
        for line in context_lines(old.body("active_context"))
        if line.strip() not in fading and (conservative or not _same(line, superseded))
    ]
    # An old friction that this dream's breakthroughs fixed leaves Active Context too.
    stale = [
        line
        for line in carried
        if line.lstrip("- ").startswith("Friction:")
        and any(_resolves(fix, stems(_LABEL_PREFIX.sub("", line.lstrip("- ")))) for _, fix in fixes)
    ]
    carried = [line for line in carried if line not in stale]
    if not new_lines and not carried and evidence:
        new_lines = [_bullet(i["text"]) for i in evidence]
    body = _fit(new_lines + carried, budget)
    kept = set(body.split("\n"))
    # Resolved frictions are history now: they go where overflow goes (crystal pointers).
    past = [f"- Friction: {_clip(i['text'])}" for i in resolved] + stale
    overflow = [line for line in new_lines + carried if line not in kept] + past
    return body, overflow


def _resolves(fix: set[str], friction: set[str]) -> bool:
    """True when a breakthrough shares enough content words with a friction to close it."""
    shared = len(fix & friction)
    return shared >= 2 and shared >= 0.3 * len(friction)


def _neg(at: str) -> str:
    # Sort helper: newest first inside an ascending sort.
    return "".join(chr(0x10FFFF - ord(ch)) for ch in at)


def _past(evidence: list[dict[str, Any]]) -> list[Pointer]:
    """One pointer per hand-written 'Journal'-like heading, keyed by its most frequent words."""
    groups: dict[str, list[str]] = {}
    for item in evidence:
        if item.get("hint") == "past":
            groups.setdefault(item["heading"], []).append(item["text"])
    pointers = []
    for heading, texts in groups.items():
        counts: dict[str, int] = {}
        for text in texts:
            for word in keywords(text):
                counts[word] = counts.get(word, 0) + 1
        top = sorted(counts, key=lambda w: (-counts[w], w))[:3]
        pointers.append(Pointer(heading, " ".join(top)))
    return pointers


def _pointers(
    old: WorkingMemory, fading: list[dict], overflow: list[str], past: list[Pointer], budget: int
) -> str:
    fresh = [Pointer(f["topic"], f["keywords"]) for f in fading if f["keywords"]]
    fresh += past
    for line in overflow:
        words = keywords(topic_of(line)) or keywords(line)
        if words:
            fresh.append(Pointer(topic_of(line), " ".join(words[:4])))
    merged: list[Pointer] = []
    seen: set[frozenset[str]] = set()
    for pointer in fresh + old.pointers():
        key = frozenset(stems(pointer.keywords))
        if key in seen:
            continue
        seen.add(key)
        merged.append(pointer)
    merged = merged[:MAX_POINTERS]
    stray = [
        line
        for line in old.body("crystal_pointers").split("\n")
        if line.strip() and not parse_pointers(line)
    ]
    return _fit([p.render() for p in merged] + stray, budget)


def _gaps(old: WorkingMemory, ins: Insights, budget: int) -> str:
    lines = [f"- {g['question']}" for g in ins.curiosity_gaps]
    lines += [line for line in context_lines(old.body("curiosity_gaps"))]
    return _fit(lines[:MAX_GAPS], budget)


def _skills(old: WorkingMemory, ins: Insights, budget: int) -> str:
    merged: dict[str, Skill] = {}
    for found in ins.emerging_skills:
        merged[found["skill"].lower()] = Skill(
            found["skill"], found["confidence"], found["occurrences"]
        )
    for skill in old.skills():
        merged.setdefault(skill.skill.lower(), skill)
    ranked = sorted(merged.values(), key=lambda s: (-s.confidence, -s.occurrences, s.skill))
    stray = [
        line
        for line in old.body("emerging_skills").split("\n")
        if line.strip() and not parse_skills(line)
    ]
    return _fit([s.render() for s in ranked[:MAX_SKILLS]] + stray, budget)
