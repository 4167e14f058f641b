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
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dreamer.dream import forget_requests, keep_rules
from dreamer.dream.insights import (
    LABELS,
    ROLES,
    ROUTINE_BELOW,
    STOP,
    Insights,
    context_lines,
    keywords,
    questions,
    stems,
    task_action,
)
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

# The agent speaking of itself. "My accountant wants..." quotes the user about their people:
# that is not the agent's self.
_SELF = re.compile(
    r"^\s*(?:I|I'm|I've|I'll|Me|The agent|Agent|My(?!\s+(?:"
    + "|".join(sorted(map(re.escape, ROLES), key=len, reverse=True))
    + r")\b))\b",
    re.IGNORECASE,
)
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
        ctx = _Context.of(inputs, ins)
        evidence = _evidence(inputs, ins, ctx)
        old = inputs.old

        # Old Active Context lines come newest first, so the older half is the tail.
        fade_from = {0: 0, 1: (len(ins.fading_topics) + 1) // 2}.get(level, len(ins.fading_topics))
        fading = [
            f for f in ins.fading_topics[fade_from:] if not keep_rules.pinned(f["line"], ctx.rules)
        ]
        bond = _bond(old, evidence, ctx, budgets["bond"], level)
        phenotype = _phenotype(inputs, evidence, ins, budgets["phenotype"])
        niche = _niche(inputs, budgets["niche"])
        active, overflow = _active(
            old, evidence, fading, ctx, budgets["active_context"], conservative
        )
        pointers = _pointers(
            old, fading, overflow, _past(evidence), ctx, budgets["crystal_pointers"]
        )
        gaps = _gaps(old, ins, ctx, budgets["curiosity_gaps"])
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
        keep_rules.silence(state, ctx.rules)
        raw = json.dumps(
            {"revision": level, "fields": state.to_fields()}, ensure_ascii=False, indent=1
        )
        return Draft(state=state, raw=raw, usage=Usage())


@dataclass
class _Context:
    """What every section rule consults: superseded texts, answers, dates ahead, causes."""

    now: datetime
    superseded: set[str]
    answered: set[str]
    ahead: dict[str, str]  # normalised text -> ISO date still ahead
    rules: list[keep_rules.Rule]
    causes: dict[int, str]  # crystal id -> the hormone it lifted
    people: list[dict[str, Any]]

    @classmethod
    def of(cls, inputs: DreamInputs, ins: Insights) -> _Context:
        causes = {cid: name for name, ids in inputs.causes.items() for cid in ids}
        return cls(
            now=inputs.now,
            superseded={_norm(c["older"]["text"]) for c in ins.contradictions},
            answered={_norm(q["question"]) for q in ins.answered_questions},
            ahead={_norm(u["text"]): u["date"] for u in ins.upcoming},
            rules=keep_rules.parse(inputs.instructions or ""),
            causes=causes,
            people=list(ins.people),
        )

    def date_of(self, text: str) -> str | None:
        """The date still ahead a text (or the line it became) names, if any."""
        key = _norm(_LABEL_PREFIX.sub("", re.sub(r"^\s*[-*•]\s+", "", text)))
        if key in self.ahead:
            return self.ahead[key]
        return next((d for t, d in self.ahead.items() if _norm(_clip(t)) == key), None)


def _level(previous: Draft | None) -> int:
    """Which revision the previous draft was (0 = the first draft, or not ours)."""
    if previous is None:
        return 0
    try:
        return int(json.loads(previous.raw).get("revision", 0))
    except (ValueError, AttributeError, TypeError):
        return 0


# --- evidence ---------------------------------------------------------------------------------


def _evidence(inputs: DreamInputs, ins: Insights, ctx: _Context) -> list[dict[str, Any]]:
    """New statements (crystals, notes not indexed, then hand-written lines), newest first."""
    items: dict[str, dict[str, Any]] = {}
    for crystal in inputs.crystals:
        if crystal.source in ("insight", "seed", "auto"):
            # The dream's own output is never fresh evidence, seeds come whole below, and a
            # hormone spike note is folded into the notes that caused it (ctx.causes).
            continue
        items[_norm(crystal.text)] = {
            "text": crystal.text,
            "at": crystal.created_at,
            "importance": crystal.importance,
            "type": crystal.semantic_type,
            "hint": None,
            "cause": ctx.causes.get(crystal.id),
        }
    for note in inputs.notes:
        if note.text.startswith("[AUTO]"):
            continue
        items.setdefault(
            _norm(note.text),
            {
                "text": note.text,
                "at": iso(note.at),
                "importance": note.importance,
                "type": None,
                "hint": None,
                "cause": None,
            },
        )
    for item in hand_written(inputs.old.preamble):
        items.setdefault(_norm(item["text"]), item)
    out = [item for item in items.values() if forget_requests.parse(item["text"]) is None]
    for item in out:
        item["original"] = item["text"]
        item["text"] = _current(_linked(item["text"], ctx.people))
        # A routine note that happened to move a hormone ("it passed") is still routine.
        item["routine"] = (
            item["importance"] < ROUTINE_BELOW
            and not item.get("hint")
            and not keep_rules.pinned(item["text"], ctx.rules)
        )
        if item["routine"]:
            item["cause"] = None
    # Newest first; hand-written lines (no time) last, in their original order.
    return sorted(out, key=lambda i: (i["at"], i["importance"], i.get("seq", 0)), reverse=True)


_CORRECTION = re.compile(r"^\s*correction:\s*", re.IGNORECASE)


def _current(text: str) -> str:
    """A correction as the value that holds now ("Correction: X, not Y; ..." → "X")."""
    if not _CORRECTION.match(text):
        return text
    body = _CORRECTION.sub("", text)
    head = re.split(r";\s|,\s+not\s|\s+not\s+|\s\(", body, maxsplit=1)[0].strip().rstrip(".")
    return head[0].upper() + head[1:] + "." if head else text


def _linked(text: str, people: list[dict[str, Any]]) -> str:
    """'my manager' → 'my manager (Priya Raman)' for a person named once with that role."""
    from dreamer.dream.insights import ROLES

    for person in people:
        if person["name"] in text:
            continue
        words = [w for w, r in ROLES.items() if r == person["role"]]
        pattern = re.compile(
            r"\b((?:my|her|his|their|our|[A-Z][\w-]+['’]s)\s+(?:" + "|".join(words) + r"))\b"
        )
        text = pattern.sub(r"\1 (" + person["name"].replace("\\", "") + ")", text, count=1)
    return text


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


_PREFERENCE = re.compile(
    r"\b(prefers?|preferred|likes?|loves?|hates?|dislikes?|no longer wants?|favou?rite|"
    r"allergic|allergy|call me|never|always|from now on|every time|switched to|now uses?)\b",
    re.IGNORECASE,
)
_PERSONAL = re.compile(
    r"\b(lives?|born|is an? |works? (?:at|as|for|on)|married|husband|wife|partner|mother|"
    r"father|mom|dad|kids?|children|son|daughter|manager|allergic|birthday|name is|"
    r"owns?|runs? (?:a|an|the|her|his|their)|founded|founder|owner|"
    # what the user can or cannot eat or do: needs every later suggestion must respect
    r"coeliac|celiac|vegetarian|vegan|diabetic|lactose|intolerant|gluten|halal|kosher|"
    r"wheelchair|pregnant)\b",
    re.IGNORECASE,
)
# A standing rule the user set ("wants invoices as PDF, never on paper"): The Bond, even when
# it mentions an action word that would otherwise make it a task ("sent").
_RULE = re.compile(r"\b(never|always|from now on|every time|no longer|any more|anymore)\b", re.I)
_WANTS = re.compile(r"\b(wants?|would like|prefers?|asks? (?:us|me|you|the agent) to)\b", re.I)
_NOT_BOND = re.compile(
    r"\b(open question|decided|booked|started|reserved|bought|asked for|wants? a list|"
    r"deadline|due|went well|passed|sent|ordered|paid|moved again|uat|audit|ticket)\b",
    re.IGNORECASE,
)


def _is_bond(item: dict[str, Any], ctx: _Context) -> bool:
    """Whether a statement says who the user is, who is around them or what they prefer."""
    if item.get("hint"):
        return item["hint"] == "bond"
    text = item["text"]
    if item.get("cause") == "oxytocin":
        return True  # a moment of closeness reaches The Bond
    if item["routine"] or questions(text) or _SELF.match(text):
        return False
    if ctx.date_of(text) is not None:
        return False  # an event ahead: Active Context
    if any(_norm(person["text"]) == _norm(item.get("original", text)) for person in ctx.people):
        return True  # someone named with their role: who is around the user
    if _RULE.search(text) and (item["type"] == "directive" or _WANTS.search(text)):
        return True  # a standing rule of the user's
    if _NOT_BOND.search(text):
        return False  # a task or a project event
    if _PREFERENCE.search(text):
        return True
    return item["type"] == "world_fact" and bool(_PERSONAL.search(text))


def _bond(
    old: WorkingMemory,
    evidence: list[dict[str, Any]],
    ctx: _Context,
    budget: int,
    level: int,
) -> str:
    new = [
        _bullet(i["text"])
        for i in evidence
        if _is_bond(i, ctx) and _norm(i["text"]) not in ctx.superseded
    ]
    kept = [
        line
        for line in context_lines(old.body("bond"))
        if level >= 2 or not _same(line, ctx.superseded)
    ]
    # Someone named with their role belongs here even when the note naming them was about an
    # errand with a date ("Rui Matos, my accountant, needs the receipts by Friday").
    named = " ".join(new + kept)
    new += [
        _bullet(f"{person['name']} is the user's {person['role']}.")
        for person in ctx.people
        if person["name"] not in named
    ]
    # Who the user is first (what a small context window keeps), then newest first, so a fresh
    # directive outlives a stale one; a revision (answering e.g. Bond drift) keeps the old first.
    lines = kept + new if level else _who_first(new + kept)
    return _fit(lines, budget)


def _who_first(lines: list[str]) -> list[str]:
    who = [line for line in lines if _PERSONAL.search(line) and not _PREFERENCE.search(line)]
    return who + [line for line in lines if line not in who]


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


_OWN_LABEL = re.compile(r"^\s*([A-Z][\w ]{0,20}|SEV\d):\s", re.UNICODE)


def _label(text: str) -> str:
    for label, pattern in _LABELS:
        if pattern.search(text):
            return label
    return "Note"


def _line(item: dict[str, Any]) -> str:
    """An Active Context line: the note, labelled unless it names its own kind."""
    text = item["text"]
    label = {"cortisol": "Friction", "dopamine": "Breakthrough"}.get(item.get("cause") or "")
    label = label or _label(text)
    if _OWN_LABEL.match(text) or label == "Note":
        return _bullet(text)
    return f"- {label}: {_clip(text)}"


def _active(
    old: WorkingMemory,
    evidence: list[dict[str, Any]],
    fading_topics: list[dict],
    ctx: _Context,
    budget: int,
    conservative: bool,
) -> tuple[str, list[str]]:
    """The Active Context body and the lines that did not fit (future pointers).

    Order (a small context window keeps the top): what is pinned by DREAM.md or dated ahead
    (soonest first), what moved a hormone since the last dream, then the new notes by
    importance, then the old lines that still hold. Routine notes and what a never-keep rule
    names stay out; answered questions and superseded values leave.
    """
    fresh = [
        i
        for i in evidence
        if not i["routine"]
        and _norm(i["text"]) not in ctx.superseded
        and not _is_bond(i, ctx)
        and i.get("hint") != "past"
        and (i.get("hint") or not _SELF.match(i["text"]))
        and not questions(i["text"])
        and not keep_rules.dropped(i["text"], ctx.rules)
    ]
    fixes = [(i["at"], stems(i["text"])) for i in fresh if _label(i["text"]) == "Breakthrough"]
    resolved = [
        i
        for i in fresh
        if _label(i["text"]) == "Friction"
        and not i.get("cause")
        and ctx.date_of(i["text"]) is None
        and any(at > i["at"] and _resolves(fix, stems(i["text"])) for at, fix in fixes)
    ]
    fresh = [i for i in fresh if i not in resolved]
    fading = {f["line"] for f in fading_topics}
    carried = [
        line.rstrip()
        for line in context_lines(old.body("active_context"))
        if line.strip() not in fading
        and (conservative or not _same(line, ctx.superseded))
        and not _same(line, ctx.answered)
        and not keep_rules.dropped(line, ctx.rules)
    ]
    stale = [
        line
        for line in carried
        if line.lstrip("- ").startswith("Friction:")
        and ctx.date_of(line) is None
        and any(_resolves(fix, stems(_LABEL_PREFIX.sub("", line.lstrip("- ")))) for _, fix in fixes)
    ]
    carried = [line for line in carried if line not in stale]

    def tier(line: str, item: dict[str, Any] | None) -> tuple[int, str]:
        date = ctx.date_of(item["text"] if item else line)
        if keep_rules.pinned(line, ctx.rules):
            return 0, date or ""
        if date:
            return 1, date
        if item is not None and item.get("cause") in ("cortisol", "dopamine"):
            return 2, ""
        return (3, "") if item is not None else (4, "")

    ranked_new = sorted(fresh, key=lambda i: (-round(i["importance"], 1), _neg(i["at"])))
    rows = [(tier(_line(i), i), n, _line(i)) for n, i in enumerate(ranked_new)]
    rows += [(tier(line, None), len(rows) + n, line) for n, line in enumerate(carried)]
    rows.sort(key=lambda row: (row[0], row[1]))
    lines = [line for _, _, line in rows]
    body = _fit(lines, budget)
    kept = set(body.split("\n"))
    past = [_line(i) for i in resolved] + stale
    overflow = [line for line in lines if line not in kept] + past
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
        # The heading names the group, the first entry makes the topic specific.
        pointers.append(Pointer(f"{heading}: {_topic(texts[0])}", " ".join(top)))
    return pointers


TOPIC_WORDS = 9
_OLD = "\x00old pointer: "  # marks an old pointer among the sources of a merge
_TOPIC_STOP = STOP | {"now", "then", "again", "also"}


def _topic(line: str) -> str:
    """A whole, specific topic for a pointer: a clause of the line, never cut with '…'."""
    text = re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line).strip()
    text = re.sub(r"[*_`]+", "", text)
    clauses = [c.strip() for c in re.split(r":\s|;\s|\.\s|\s[—–-]\s|\(|\)", text) if c.strip()]

    def specific(clause: str) -> bool:
        words = [w for w in re.findall(r"[^\W\d_][\w'’-]*", clause) if w.lower() not in LABELS]
        return len(words) >= 3 and len([w for w in words if w.lower() not in _TOPIC_STOP]) >= 2

    chosen = next((c for c in clauses if specific(c)), text)
    words = chosen.rstrip(".").split()
    if words and words[0].lower().rstrip(":") in LABELS:
        words = words[1:]
    words = words[:TOPIC_WORDS]
    while len(words) > 3 and words[-1].lower().strip(",.") in _TOPIC_STOP:
        words = words[:-1]  # end on a content word, not "for the"
    return " ".join(words).rstrip(",;:.") or text[:60]


def _anchors(text: str, common: set[str]) -> set[str]:
    """What ties notes into one topic: names and places inside the text, and a repeated action."""
    words = re.findall(r"(?<=\s)[A-Z][\w'’-]+|\b[A-Z]{2,}\d*\b|\b\w*\d\w*[A-Z]\w*\b", text)
    found = {w.strip("'’").lower().removesuffix("'s") for w in words}
    found = {w for w in found if w not in common and w not in STOP and len(w) > 2}
    action = task_action(_LABEL_PREFIX.sub("", re.sub(r"^\s*[-*•]\s+", "", text)))
    if action:
        found |= {f"{action[0]}:{stem}" for w in action[1][:3] for stem in stems(w)}
    return found


def _merge(pointers: list[tuple[Pointer, str]], common: set[str]) -> list[Pointer]:
    """One pointer per topic: pointers sharing an anchor (a name, a repeated action) merge."""
    groups: list[tuple[set[str], list[tuple[Pointer, str]]]] = []
    for pointer, source in pointers:
        anchors = _anchors(source, common)
        home = next((g for g in groups if g[0] & anchors), None)
        if home is None:
            groups.append((set(anchors), [(pointer, source)]))
        else:
            home[0].update(anchors)
            home[1].append((pointer, source))
    out = []
    for _, members in groups:
        if len(members) == 1:
            out.append(members[0][0])
            continue
        out.append(_merged(members))
    return out


def _merged(members: list[tuple[Pointer, str]]) -> Pointer:
    """One pointer for notes of one topic, e.g. "Refactored modules: invoice, payments, …"."""
    lines = [(p, src) for p, src in members if not src.startswith(_OLD)] or members
    if len(lines) == 1:
        return lines[0][0]
    members = lines
    actions = [
        task_action(_LABEL_PREFIX.sub("", re.sub(r"^\s*[-*•]\s+", "", src))) for _, src in members
    ]
    if all(actions) and len({a[0] for a in actions if a}) == 1:
        done = [a for a in actions if a]
        verb = done[0][0]
        shared = [w for w in done[0][1] if all(w in a[1] for a in done)]
        noun = shared[-1] if shared else done[0][1][0]
        others = list(dict.fromkeys(a[1][0] for a in done if a[1][0] != noun))
        plural = noun if noun.endswith("s") else noun + "s"
        past = {"ing": "ed"}.get(verb[-3:], "")
        name = verb[:-3] + past if past else verb
        topic = (
            f"{name.capitalize()} {plural}: {', '.join(others)}"
            if others
            else (f"{name.capitalize()} {plural} ({len(done)} times)")
        )
        source_words = keywords(members[0][1])
        lead = source_words[0] if source_words else name
        return Pointer(topic, " ".join(dict.fromkeys([lead, noun, *others[:1]])))
    first = members[0][0]
    return Pointer(f"{first.topic} (and {len(members) - 1} related notes)", first.keywords)


def _pointers(
    old: WorkingMemory,
    fading: list[dict],
    overflow: list[str],
    past: list[Pointer],
    ctx: _Context,
    budget: int,
) -> str:
    sources = [f["line"] for f in fading] + [
        line for line in overflow if not keep_rules.dropped(line, ctx.rules)
    ]
    fresh: list[tuple[Pointer, str]] = []
    for line in sources:
        topic = _topic(_current(line))
        words = keywords(topic) or keywords(line)
        if words:
            fresh.append((Pointer(topic, " ".join(words[:4])), line))
    common = {
        w.lower()
        for line in context_lines(old.body("bond"))
        for w in re.findall(r"[A-Z][\w-]+", line)
    }
    common |= {p["name"].split()[0].lower() for p in ctx.people}
    merged = _merge(fresh + [(p, f"{_OLD}{p.topic} {p.keywords}") for p in old.pointers()], common)
    merged = past + merged
    out: list[Pointer] = []
    seen: set[frozenset[str]] = set()
    for pointer in merged:
        key = frozenset(stems(pointer.keywords))
        if key in seen:
            continue
        seen.add(key)
        out.append(pointer)
    out = out[:MAX_POINTERS]
    stray = [
        line
        for line in old.body("crystal_pointers").split("\n")
        if line.strip() and not parse_pointers(line)
    ]
    return _fit([p.render() for p in out] + stray, budget)


def _gaps(old: WorkingMemory, ins: Insights, ctx: _Context, budget: int) -> str:
    lines = [f"- {g['question']}" for g in ins.curiosity_gaps]
    lines += [
        line for line in context_lines(old.body("curiosity_gaps")) if not _same(line, ctx.answered)
    ]
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
